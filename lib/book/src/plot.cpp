#include "attn/book/plot.hpp"

#include "attn/math/validate.hpp"

// Armadillo must come before gnuplot-iostream, or gnuplot-iostream does not recognise
// Armadillo types and silently sends matrices as flat lists.
#include <gnuplot-iostream.h>
#include <armadillo>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <unistd.h>
#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string_view>
#include <tuple>

namespace attn::book {

namespace fs = std::filesystem;

fs::path find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / program;
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec) && ::access(candidate.c_str(), X_OK) == 0)
      return candidate;
  }
  return {};
}

namespace {

// Beyond this many tokens a heatmap's cells are too small to read (and slow to draw).
constexpr arma::uword kMaxHeatmapTokens = 40;
// Cells beyond this fraction of the colour range are dark: their values are written in white.
constexpr double kDarkFraction = 0.6;

// A string as a gnuplot double-quoted literal.
std::string quoted(const std::string& text) {
  std::string q = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      q += '\\';
    q += c;
  }
  return q + '"';
}

// `("money" 0, "bank" 1, ...)`: tick labels at integer positions.
std::string tics(const std::vector<std::string>& labels) {
  std::string t = "(";
  for (std::size_t i = 0; i < labels.size(); ++i)
    t += fmt::format("{}{} {}", i ? ", " : "", quoted(labels[i]), i);
  return t + ")";
}

void require_labels(const std::string& figure, std::size_t labels, std::size_t values) {
  if (labels != values)
    throw math::ShapeError(
        fmt::format("figure {}: {} labels for {} values", figure, labels, values));
}

// gnuplot reads "nan" as a missing point and "inf" breaks a range: a figure is drawn from
// finite numbers only, so that nothing goes missing from it without a word.
void require_plottable(const std::string& figure, const std::string& what, const arma::mat& m) {
  math::require_finite(fmt::format("figure {}: {}", figure, what), m);
}

// One heatmap cell as a long-format row: (query row, key column, value).
using Cell = std::tuple<arma::uword, arma::uword, double>;

std::vector<Cell> long_rows(const arma::mat& m) {
  std::vector<Cell> cells;
  for (arma::uword i = 0; i < m.n_rows; ++i)
    for (arma::uword j = 0; j < m.n_cols; ++j)
      cells.emplace_back(i, j, m(i, j));
  return cells;
}

// The colour range every panel of a heatmap figure shares: [0, 1] for weights, symmetric
// about 0 for scores.
double colour_reach(const std::vector<Heatmap>& panels) {
  if (panels.front().scale == ColourScale::weights)
    return 1.0;
  double reach = 1e-12;
  for (const Heatmap& h : panels)
    reach = std::max(reach, arma::abs(h.values).max());
  return reach;
}

// Sends rows to gnuplot as a named datablock (`$name << EOD` ... `EOD`) and returns the name
// the plot command reads it by, as often as it likes. gnuplot 6 refuses inline data ('-')
// inside a multiplot; datablocks (gnuplot 5.0 and later) behave the same on 5.4 and 6.
template <class Rows>
std::string datablock(std::ostream& gp, const std::string& name, const Rows& rows) {
  gp << '$' << name << " << EOD\n";
  gnuplotio::top_level_array_sender(gp, rows, gnuplotio::Mode1D(), gnuplotio::ModeText());
  gp << "EOD\n";
  return '$' + name;
}

// `set palette defined (0 '#f7fbff', ...)` for a scale's stops.
std::string palette_command(const std::vector<ColourStop>& stops) {
  std::string command = "set palette defined (";
  for (std::size_t i = 0; i < stops.size(); ++i)
    command += fmt::format("{}{} '{}'", i ? ", " : "", stops[i].at, stops[i].colour);
  return command + ")\n";
}

// The gnuplot commands that draw one heatmap panel from the datablock `cells`.
std::string heatmap_commands(const Heatmap& h, double reach, const std::string& cells) {
  const bool weights = h.scale == ColourScale::weights;
  const double rows = static_cast<double>(h.values.n_rows);
  const double cols = static_cast<double>(h.values.n_cols);
  // Small cells have no room for words side by side under the columns: slant them.
  const bool slant =
      !h.write_values &&
      std::any_of(h.keys.begin(), h.keys.end(), [](const std::string& k) { return k.size() > 3; });
  return fmt::format(
             "set title {}\n"
             "set xlabel {}\nset ylabel {}\n"
             "set xrange [-0.5:{}]\nset yrange [{}:-0.5]\nset xtics {} {}\nset ytics {}\n"
             "set tics scale 0\nset size ratio -1\nunset key\nset cbrange [{}:{}]\nset cblabel "
             "{}\n",
             quoted(h.title), quoted(h.x_label), quoted(h.y_label), cols - 0.5, rows - 0.5,
             tics(h.keys), slant ? "rotate by 45 right" : "norotate", tics(h.queries),
             weights ? 0.0 : -reach, reach,
             quoted(!h.colour_label.empty() ? h.colour_label
                    : weights               ? "weight"
                                            : "score")) +
         (weights ? palette_command(weight_palette())
                  : "set palette defined (-1 '#b2182b', 0 '#f7f7f7', 1 '#2166ac')\n") +
         // Dark cells get white text so every value stays readable.
         (h.write_values
              ? fmt::format(
                    "plot {0} using 2:1:3 with image, {0} using 2:1:(sprintf('%.{1}f', $3)):"
                    "(abs($3) > {2} ? 0xffffff : 0x000000) "
                    "with labels textcolor rgb variable font ',12'\n",
                    cells, h.decimals, kDarkFraction * reach)
              : fmt::format("plot {} using 2:1:3 with image\n", cells));
}

// What gnuplot wrote into a status file: GPVAL_ERRNO, "0" when no command failed.
std::string read_status(const fs::path& file) {
  std::ifstream in(file);
  std::string status;
  in >> status;
  return status;
}

// The last step of writing a file safely: when the new `part` is complete it is moved over
// `target` in one step; otherwise it is removed and `target`, if any, stays as it was. Either
// way the log says what happened ("wrote ...", or "warning: <failure> ...; the previous <kind>
// is kept").
void put_in_place(std::ostream& log, const fs::path& part, const fs::path& target, bool complete,
                  std::string_view failure, std::string_view kind) {
  std::error_code ec;
  if (complete)
    fs::rename(part, target, ec);
  if (complete && !ec) {
    fmt::print(log, "wrote {}\n", target.string());
    return;
  }
  fs::remove(part, ec);
  fmt::print(log, "warning: {} {}; {}\n", failure, target.string(),
             fs::exists(target, ec) ? fmt::format("the previous {} is kept", kind)
                                    : fmt::format("there is no {}", kind));
}

}  // namespace

Plotter::Plotter(PlotOptions options, std::ostream& out, std::ostream& log)
    : options_(std::move(options)), out_(out), log_(log) {
  if (!options_.enabled) {
    fmt::print(log_, "plots skipped (--no-plots)\n");
    return;
  }
  gnuplot_ = find_on_path("gnuplot");
  if (gnuplot_.empty()) {
    fmt::print(log_,
               "plots skipped: gnuplot is not on the PATH (install gnuplot-nox); "
               "the numbers are still computed and checked\n");
    return;
  }
  std::error_code ec;
  if (!options_.in_terminal)
    fs::create_directories(options_.folder, ec);
  if (ec) {
    fmt::print(log_,
               "plots skipped: cannot create the folder {} ({}); the numbers are still "
               "computed and checked\n",
               options_.folder.string(), ec.message());
    return;
  }
  // A gnuplot that dies half-way must not take the chapter with it: writing to its closed pipe
  // then fails quietly instead of raising SIGPIPE, and draw() reports the figure as not drawn.
  std::signal(SIGPIPE, SIG_IGN);
  active_ = true;
}

void Plotter::draw(const std::string& name, int width, int height, const std::string& title,
                   const std::function<void(std::ostream&)>& script) {
  std::string gnuplot = "'";  // the program's path, quoted for the shell popen() runs
  for (char c : gnuplot_.string())
    gnuplot += c == '\'' ? std::string("'\\''") : std::string(1, c);
  gnuplot += "'";

  if (options_.in_terminal) {
    out_.flush();  // gnuplot writes straight to our stdout: keep the story in order
    Gnuplot gp(gnuplot);
    // About 9 pixels per character column and 18 per row gives the PNG's proportions.
    gp << fmt::format("set terminal dumb size {},{} noenhanced ansi256\nset output\nset title {}\n",
                      std::clamp(width / 9, 60, 200), std::clamp(height / 18, 20, 60),
                      quoted(title));
    script(gp);
    return;
  }

  // gnuplot draws into NAME.png.part; only when it reports no error is that file moved over
  // NAME.png, in one step. So a gnuplot that fails or is killed half-way leaves the previous
  // figure as it was, never a half-drawn or missing one.
  const fs::path png = options_.folder / (name + ".png");
  const fs::path part = png.string() + ".part";
  const fs::path status = png.string() + ".status";
  std::error_code ignored;
  fs::remove(part, ignored);
  fs::remove(status, ignored);
  {
    // gnuplot's stdout goes to /dev/null: were it unable to open the output file, it would
    // otherwise send the image's bytes to ours.
    Gnuplot gp(gnuplot + " > /dev/null");
    gp << fmt::format(
        "set terminal pngcairo size {},{} font 'DejaVu Sans,11' noenhanced\n"
        "set output {}\nset title {}\n",
        width, height, quoted(part.string()), quoted(title));
    script(gp);
    // Closing the output finishes the PNG; GPVAL_ERRNO is non-zero once any command failed.
    gp << "set output\nset print " << quoted(status.string())
       << "\nprint GPVAL_ERRNO\nunset print\n";
  }  // gnuplot has exited here
  const bool drawn = read_status(status) == "0" && fs::is_regular_file(part, ignored) &&
                     fs::file_size(part, ignored) > 0;
  fs::remove(status, ignored);
  put_in_place(log_, part, png, drawn, "gnuplot did not draw", "figure");
}

const std::vector<ColourStop>& weight_palette() {
  static const std::vector<ColourStop> stops = {
      {0.0, "#f7fbff"}, {0.5, "#6baed6"}, {1.0, "#08306b"}};
  return stops;
}

std::string weight_colour(double weight) {
  if (std::isnan(weight))
    throw math::InputError("weight_colour: the weight is NaN");
  const std::vector<ColourStop>& stops = weight_palette();
  const double w = std::clamp(weight, stops.front().at, stops.back().at);
  std::size_t upper = 1;
  while (upper + 1 < stops.size() && stops[upper].at < w)
    ++upper;
  const ColourStop& a = stops[upper - 1];
  const ColourStop& b = stops[upper];
  const double t = (w - a.at) / (b.at - a.at);
  std::string colour = "#";
  for (std::size_t channel = 0; channel < 3; ++channel) {
    const double from = std::stoi(a.colour.substr(1 + 2 * channel, 2), nullptr, 16);
    const double to = std::stoi(b.colour.substr(1 + 2 * channel, 2), nullptr, 16);
    colour += fmt::format("{:02x}", static_cast<int>(std::lround(from + t * (to - from))));
  }
  return colour;
}

std::vector<std::string> tick_labels(std::size_t count, std::size_t every) {
  if (every == 0)
    throw math::InputError("tick_labels: the spacing must be at least 1");
  std::vector<std::string> labels(count);
  for (std::size_t i = 0; i < count; i += every)
    labels[i] = std::to_string(i);
  return labels;
}

bool dark_weight(double weight) {
  return weight > kDarkFraction;
}

void Plotter::page_data(const std::string& file_name, const std::string& text) {
  if (file_name.empty() || file_name == "." || file_name == ".." ||
      fs::path(file_name).filename() != file_name)
    throw math::InputError(fmt::format("page data \"{}\" must be a plain file name", file_name));
  if (!options_.enabled || options_.in_terminal)
    return;
  // As with the figures: written to NAME.part, then put in place.
  const fs::path file = options_.folder / file_name;
  const fs::path part = file.string() + ".part";
  std::error_code ec;
  fs::create_directories(options_.folder, ec);
  bool written = false;
  if (!ec) {
    std::ofstream out(part, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    written = !out.fail();
  }
  put_in_place(log_, part, file, written, "could not write", "file");
}

void Plotter::heatmap(const Heatmap& h) {
  heatmaps({h.name, "", {h}});
}

void Plotter::heatmaps(const HeatmapRow& row) {
  if (row.panels.empty())
    throw math::InputError(fmt::format("figure {} has no panels", row.name));
  for (std::size_t k = 0; k < row.panels.size(); ++k) {
    const Heatmap& h = row.panels[k];
    require_labels(row.name + " (rows)", h.queries.size(), h.values.n_rows);
    require_labels(row.name + " (columns)", h.keys.size(), h.values.n_cols);
    math::require_nonempty(fmt::format("figure {}: panel {}", row.name, k), h.values);
    require_plottable(row.name, fmt::format("panel {}", k), h.values);
  }
  if (!active_)
    return;
  const arma::uword largest =
      std::max(row.panels.front().values.n_rows, row.panels.front().values.n_cols);
  const bool values = row.panels.front().write_values;
  if (values && largest > kMaxHeatmapTokens) {
    fmt::print(log_,
               "figure {} skipped: {} tokens are too many for a readable heatmap (at most {})\n",
               row.name, largest, kMaxHeatmapTokens);
    return;
  }
  const double reach = colour_reach(row.panels);
  const int cell_px = values ? 90 : 10, panels = static_cast<int>(row.panels.size());
  const int across = row.columns == 0 ? panels : std::min(panels, static_cast<int>(row.columns));
  const int down = (panels + across - 1) / across;  // rows of panels
  const int cols = static_cast<int>(row.panels.front().values.n_cols);
  const int rows = static_cast<int>(row.panels.front().values.n_rows);
  const int width = across * std::max(520, 260 + cell_px * cols);
  const int height = down * std::max(420, 170 + cell_px * rows) + (panels > 1 ? 40 : 0);
  draw(row.name, width, height, "", [&](std::ostream& gp) {
    std::vector<std::string> blocks;
    for (std::size_t k = 0; k < row.panels.size(); ++k)
      blocks.push_back(
          datablock(gp, fmt::format("cells{}", k + 1), long_rows(row.panels[k].values)));
    if (panels > 1)
      gp << fmt::format("set multiplot layout {},{} title {}\n", down, across, quoted(row.title));
    for (std::size_t k = 0; k < row.panels.size(); ++k)
      gp << heatmap_commands(row.panels[k], reach, blocks[k]);
    if (panels > 1)
      gp << "unset multiplot\n";
  });
}

void Plotter::bars(const BarChart& b) {
  for (const Series& series : b.series) {
    require_labels(b.name + " (" + series.label + ")", b.labels.size(), series.y.n_elem);
    // A NaN marks a bar that does not apply and is left out; an infinity is an error.
    const arma::uvec infinite = arma::find(arma::abs(series.y) == arma::datum::inf);
    if (!infinite.is_empty())
      throw math::InputError(fmt::format("figure {}: series {} holds an infinity at index {}",
                                         b.name, series.label, infinite(0)));
  }
  if (!active_)
    return;
  const double groups = static_cast<double>(b.labels.size());
  const double width = 0.8 / static_cast<double>(b.series.size());  // bars share 0.8 of a slot
  draw(b.name, 760, 440, b.title, [&](std::ostream& gp) {
    std::vector<std::string> blocks;
    for (std::size_t k = 0; k < b.series.size(); ++k) {
      std::vector<std::pair<arma::uword, double>> rows;
      for (arma::uword i = 0; i < b.series[k].y.n_elem; ++i)
        if (!std::isnan(b.series[k].y(i)))
          rows.emplace_back(i, b.series[k].y(i));
      blocks.push_back(datablock(gp, fmt::format("series{}", k + 1), rows));
    }
    gp << "set ylabel " << quoted(b.value_label) << "\n"
       << "set xtics " << tics(b.labels) << "\nset tics scale 0\n"
       << (b.series.size() > 1 ? "set key below box\n" : "unset key\n")
       << fmt::format("set xrange [-0.6:{}]\nset boxwidth {}\n", groups - 0.4, width)
       << (b.unit_range ? "set yrange [0:1]\n" : "set offsets 0, 0, graph 0.1, 0\n")
       << "set style fill solid 0.85 border -1\nset grid ytics\nplot ";
    // Side by side, bars are too narrow for a value written across them: it stands upright.
    const std::string value_style =
        b.series.size() > 1 ? "rotate by 90 left offset 0,0.4" : "offset 0,0.8";
    for (std::size_t k = 0; k < b.series.size(); ++k) {
      const double shift = -0.4 + width * (static_cast<double>(k) + 0.5);  // centre of bar k
      gp << (k ? ", " : "")
         << fmt::format(
                "{0} using ($1 + {1}):2 with boxes lc rgb {2} title {3}, "
                "{0} using ($1 + {1}):2:(sprintf('%.2f', $2)) with labels {4} notitle",
                blocks[k], shift, quoted(b.series[k].colour), quoted(b.series[k].label),
                value_style);
    }
    gp << "\n";
  });
}

void Plotter::ranges(const RangeChart& r) {
  require_labels(r.name + " (values)", r.labels.size(), r.value.n_elem);
  require_labels(r.name + " (low ends)", r.labels.size(), r.low.n_elem);
  require_labels(r.name + " (high ends)", r.labels.size(), r.high.n_elem);
  require_plottable(r.name, "value", r.value);
  require_plottable(r.name, "low end", r.low);
  require_plottable(r.name, "high end", r.high);
  for (arma::uword i = 0; i < r.value.n_elem; ++i)
    if (!(r.low(i) <= r.value(i) && r.value(i) <= r.high(i)))
      throw math::InputError(fmt::format("figure {}: row {} ({}) has its value {} outside [{}, {}]",
                                         r.name, i, r.labels[i], r.value(i), r.low(i), r.high(i)));
  if (std::isinf(r.reference))
    throw math::InputError(fmt::format("figure {}: the reference is infinite", r.name));
  if (!active_)
    return;
  const auto rows = static_cast<double>(r.labels.size());
  const int height = 140 + 42 * static_cast<int>(r.labels.size());
  draw(r.name, 760, height, r.title, [&](std::ostream& gp) {
    // Row i sits at y = rows − 1 − i, so that the first label is at the top.
    std::vector<std::tuple<double, double, double, double>> points;
    std::string ytics = "(";
    for (arma::uword i = 0; i < r.value.n_elem; ++i) {
      const double y = rows - 1.0 - static_cast<double>(i);
      points.emplace_back(r.value(i), y, r.low(i), r.high(i));
      ytics += fmt::format("{}{} {}", i ? ", " : "", quoted(r.labels[i]), y);
    }
    const std::string block = datablock(gp, "rows", points);
    gp << "set xlabel " << quoted(r.value_label) << "\n"
       << "set ytics " << ytics << ")\nset tics scale 0\nunset key\n"
       << fmt::format("set yrange [-0.6:{}]\n", rows - 0.4)
       << "set offsets graph 0.08, graph 0.08, 0, 0\nset grid xtics\n";
    if (!std::isnan(r.reference))
      gp << fmt::format(
          "set arrow from {0}, graph 0 to {0}, graph 1 nohead dashtype 2 lc rgb '#808080'\n",
          r.reference);
    gp << fmt::format(
        "plot {0} using 1:2:3:4 with xerrorbars pointtype 7 pointsize 1.2 lc rgb {1}, "
        "{0} using 1:2:(sprintf('%.{2}f', $1)) with labels offset 0,0.8 notitle\n",
        block, quoted(r.colour), r.decimals);
  });
}

void Plotter::lines(const LinePlot& p) {
  require_plottable(p.name, "x", p.x);
  for (const Series& series : p.series) {
    require_labels(p.name + " (" + series.label + ")", p.x.n_elem, series.y.n_elem);
    require_plottable(p.name, "series " + series.label, series.y);
  }
  if (p.y_from_zero && p.log_y)
    throw math::InputError(
        fmt::format("figure {}: a logarithmic y axis cannot start at 0", p.name));
  if (!active_)
    return;
  draw(p.name, 760, 480, p.title, [&](std::ostream& gp) {
    std::vector<std::string> blocks;
    for (std::size_t k = 0; k < p.series.size(); ++k) {
      std::vector<std::pair<double, double>> points;
      for (arma::uword j = 0; j < p.x.n_elem; ++j)
        points.emplace_back(p.x(j), p.series[k].y(j));
      blocks.push_back(datablock(gp, fmt::format("series{}", k + 1), points));
    }
    gp << "set xlabel " << quoted(p.x_label) << "\n"
       << "set ylabel " << quoted(p.y_label) << "\n"
       << (p.log_x ? "set logscale x 2\n" : "") << (p.log_y ? "set logscale y 10\n" : "")
       << (p.y_from_zero ? "set yrange [0:*]\n" : "") << "set grid\nset key " << p.key_at
       << " box opaque\n"
       << (p.y_from_zero ? "set offsets 0, 0, graph 0.05, 0\n"  // no margin below 0
                         : "set offsets 0, 0, graph 0.05, graph 0.05\n")
       << "plot ";
    // Points mark measurements; a long curve (a loss per training step) is drawn as a line.
    const std::string style = p.x.n_elem <= 40 ? "linespoints pt 7 ps 0.7" : "lines";
    for (std::size_t k = 0; k < p.series.size(); ++k) {
      const Series& s = p.series[k];
      gp << (k ? ", " : "")
         << fmt::format("{} using 1:2 with {} lw 2 dt {} lc rgb {} title {}", blocks[k], style,
                        s.dashed ? 2 : 1, quoted(s.colour), quoted(s.label));
    }
    gp << "\n";
  });
}

void Plotter::vectors(const VectorPicture& v) {
  for (const Arrow& a : v.arrows)
    if (a.tip.n_elem != 2)
      throw math::ShapeError(
          fmt::format("figure {}: arrow {} has tip {}, a 2-D picture needs (1 × 2)", v.name,
                      a.label, math::shape_of(a.tip)));
    else
      require_plottable(v.name, "arrow " + a.label, a.tip);
  if (!active_)
    return;
  draw(v.name, 640, 560, v.title, [&](std::ostream& gp) {
    std::vector<std::pair<double, double>> tips{{0.0, 0.0}};
    for (const Arrow& a : v.arrows)
      tips.emplace_back(a.tip(0), a.tip(1));
    const std::string block = datablock(gp, "tips", tips);
    gp << "set size ratio -1\nset grid\nunset key\nset xzeroaxis\nset yzeroaxis\n"
       << "set offsets graph 0.15, graph 0.25, graph 0.12, graph 0.12\n";
    int tag = 1;
    for (const Arrow& a : v.arrows) {
      gp << fmt::format(
                "set arrow {} from 0,0 to {},{} head filled size screen 0.02,15 lw 2.5 "
                "lc rgb {}\n",
                tag, a.tip(0), a.tip(1), quoted(a.colour))
         << fmt::format("set label {} {} at {},{} offset 0.6,0.6 textcolor rgb {}\n", tag,
                        quoted(a.label), a.tip(0), a.tip(1), quoted(a.colour));
      ++tag;
    }
    gp << "plot " << block << " using 1:2 with points pt 7 ps 0.8 lc rgb 'black'\n";
  });
}

}  // namespace attn::book
