#include "attn/plot.hpp"

#include "attn/validate.hpp"

// Armadillo must come before gnuplot-iostream, or gnuplot-iostream does not recognise
// Armadillo types and silently sends matrices as flat lists.
#include <armadillo>
#include <gnuplot-iostream.h>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <tuple>
#include <unistd.h>

namespace attn {

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

// A string as a gnuplot double-quoted literal.
std::string quoted(const std::string& text) {
  std::string q = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') q += '\\';
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
    throw ShapeError(fmt::format("figure {}: {} labels for {} values", figure, labels, values));
}

// One heatmap cell as a long-format row: (query row, key column, value).
using Cell = std::tuple<arma::uword, arma::uword, double>;

std::vector<Cell> long_rows(const arma::mat& m) {
  std::vector<Cell> cells;
  for (arma::uword i = 0; i < m.n_rows; ++i)
    for (arma::uword j = 0; j < m.n_cols; ++j) cells.emplace_back(i, j, m(i, j));
  return cells;
}

// The colour range every panel of a heatmap figure shares: [0, 1] for weights, symmetric
// about 0 for scores.
double colour_reach(const std::vector<Heatmap>& panels) {
  if (panels.front().scale == ColourScale::weights) return 1.0;
  double reach = 1e-12;
  for (const Heatmap& h : panels) reach = std::max(reach, arma::abs(h.values).max());
  return reach;
}

// The gnuplot commands that draw one heatmap panel; data follow as two inline blocks.
std::string heatmap_commands(const Heatmap& h, double reach) {
  const bool weights = h.scale == ColourScale::weights;
  const double rows = static_cast<double>(h.values.n_rows);
  const double cols = static_cast<double>(h.values.n_cols);
  return fmt::format(
             "set title {}\n"
             "set xlabel 'key (the token being looked at)'\nset ylabel 'query (the token asking)'\n"
             "set xrange [-0.5:{}]\nset yrange [{}:-0.5]\nset xtics {}\nset ytics {}\n"
             "set tics scale 0\nset size ratio -1\nunset key\nset cbrange [{}:{}]\nset cblabel {}\n",
             quoted(h.title), cols - 0.5, rows - 0.5, tics(h.keys), tics(h.queries),
             weights ? 0.0 : -reach, reach, quoted(weights ? "weight" : "score")) +
         (weights ? "set palette defined (0 '#f7fbff', 0.5 '#6baed6', 1 '#08306b')\n"
                  : "set palette defined (-1 '#b2182b', 0 '#f7f7f7', 1 '#2166ac')\n") +
         // Dark cells get white text so every value stays readable.
         fmt::format("plot '-' using 2:1:3 with image, '-' using 2:1:(sprintf('%.{}f', $3)):"
                     "(abs($3) > {} ? 0xffffff : 0x000000) "
                     "with labels textcolor rgb variable font ',12'\n",
                     h.decimals, 0.6 * reach);
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
    fmt::print(log_, "plots skipped: gnuplot is not on the PATH (install gnuplot-nox); "
                     "the numbers are still computed and checked\n");
    return;
  }
  std::error_code ec;
  if (!options_.in_terminal) fs::create_directories(options_.folder, ec);
  if (ec) {
    fmt::print(log_, "plots skipped: cannot create the folder {} ({}); the numbers are still "
                     "computed and checked\n", options_.folder.string(), ec.message());
    return;
  }
  active_ = true;
}

fs::path Plotter::start(const std::string& name) const {
  const fs::path png = options_.folder / (name + ".png");
  std::error_code ignored;
  if (fs::is_regular_file(png, ignored)) fs::remove(png, ignored);  // finish() must not mistake
                                                                    // an old file for a new one
  return png;
}

std::string Plotter::command() const {
  // Writing PNGs, gnuplot's own stdout goes to /dev/null: if it cannot open the output file it
  // would otherwise send the image bytes to ours. In the terminal, its stdout is the picture.
  std::string quoted_path = "'";
  for (char c : gnuplot_.string()) quoted_path += c == '\'' ? std::string("'\\''") : std::string(1, c);
  quoted_path += "'";
  return options_.in_terminal ? quoted_path : quoted_path + " > /dev/null";
}

std::string Plotter::preamble(const fs::path& png, int width, int height,
                              const std::string& title) const {
  if (options_.in_terminal) {
    out_.flush();  // gnuplot writes straight to our stdout: keep the story in order
    // About 9 pixels per character column and 18 per row gives the PNG's proportions.
    return fmt::format("set terminal dumb size {},{} ansi256\nset output\nset title {}\n",
                       std::clamp(width / 9, 60, 200), std::clamp(height / 18, 20, 60),
                       quoted(title));
  }
  return fmt::format("set terminal pngcairo size {},{} font 'DejaVu Sans,11' noenhanced\n"
                     "set output {}\nset title {}\n",
                     width, height, quoted(png.string()), quoted(title));
}

void Plotter::finish(const fs::path& png) {
  if (options_.in_terminal) return;
  std::error_code ec;
  if (fs::file_size(png, ec) > 0 && !ec) fmt::print(log_, "wrote {}\n", png.string());
  else fmt::print(log_, "warning: gnuplot did not write {}\n", png.string());
}

void Plotter::heatmap(const Heatmap& h) { heatmaps({h.name, "", {h}}); }

void Plotter::heatmaps(const HeatmapRow& row) {
  if (row.panels.empty()) throw InputError(fmt::format("figure {} has no panels", row.name));
  for (const Heatmap& h : row.panels) {
    require_labels(row.name + " (rows)", h.queries.size(), h.values.n_rows);
    require_labels(row.name + " (columns)", h.keys.size(), h.values.n_cols);
  }
  if (!active_) return;
  const arma::uword largest = std::max(row.panels.front().values.n_rows, row.panels.front().values.n_cols);
  if (largest > kMaxHeatmapTokens) {
    fmt::print(log_, "figure {} skipped: {} tokens are too many for a readable heatmap (at most {})\n",
               row.name, largest, kMaxHeatmapTokens);
    return;
  }
  const fs::path png = start(row.name);
  const double reach = colour_reach(row.panels);
  const int cell_px = 90, panels = static_cast<int>(row.panels.size());
  const int cols = static_cast<int>(row.panels.front().values.n_cols);
  const int rows = static_cast<int>(row.panels.front().values.n_rows);
  const int width = panels * std::max(520, 260 + cell_px * cols);
  const int height = std::max(420, 170 + cell_px * rows) + (panels > 1 ? 40 : 0);
  {
    Gnuplot gp(command());
    gp << preamble(png, width, height, "");
    if (panels > 1) gp << fmt::format("set multiplot layout 1,{} title {}\n", panels, quoted(row.title));
    for (const Heatmap& h : row.panels) {
      gp << heatmap_commands(h, reach);
      const auto cells = long_rows(h.values);
      gp.send1d(cells);
      gp.send1d(cells);
    }
    if (panels > 1) gp << "unset multiplot\n";
  }
  finish(png);
}

void Plotter::bars(const BarChart& b) {
  for (const Series& series : b.series)
    require_labels(b.name + " (" + series.label + ")", b.labels.size(), series.y.n_elem);
  if (!active_) return;
  const fs::path png = start(b.name);
  const double groups = static_cast<double>(b.labels.size());
  const double width = 0.8 / static_cast<double>(b.series.size());  // bars share 0.8 of a slot
  {
    Gnuplot gp(command());
    gp << preamble(png, 760, 440, b.title) << "set ylabel " << quoted(b.value_label) << "\n"
       << "set xtics " << tics(b.labels) << "\nset tics scale 0\n"
       << (b.series.size() > 1 ? "set key top right box opaque\n" : "unset key\n")
       << fmt::format("set xrange [-0.6:{}]\nset boxwidth {}\n", groups - 0.4, width)
       << (b.unit_range ? "set yrange [0:1]\n" : "set offsets 0, 0, graph 0.1, 0\n")
       << "set style fill solid 0.85 border -1\nset grid ytics\nplot ";
    for (std::size_t k = 0; k < b.series.size(); ++k) {
      const double shift = -0.4 + width * (static_cast<double>(k) + 0.5);  // centre of bar k
      gp << (k ? ", " : "")
         << fmt::format("'-' using ($1 + {0}):2 with boxes lc rgb {1} title {2}, "
                        "'-' using ($1 + {0}):2:(sprintf('%.2f', $2)) with labels offset 0,0.8 "
                        "notitle",
                        shift, quoted(b.series[k].colour), quoted(b.series[k].label));
    }
    gp << "\n";
    for (const Series& series : b.series) {
      std::vector<std::pair<arma::uword, double>> rows;
      for (arma::uword i = 0; i < series.y.n_elem; ++i) rows.emplace_back(i, series.y(i));
      gp.send1d(rows);
      gp.send1d(rows);
    }
  }
  finish(png);
}

void Plotter::lines(const LinePlot& p) {
  for (const Series& series : p.series)
    require_labels(p.name + " (" + series.label + ")", p.x.n_elem, series.y.n_elem);
  if (!active_) return;
  const fs::path png = start(p.name);
  {
    Gnuplot gp(command());
    gp << preamble(png, 760, 480, p.title) << "set xlabel " << quoted(p.x_label) << "\n"
       << "set ylabel " << quoted(p.y_label) << "\n"
       << (p.log_x ? "set logscale x 2\n" : "") << (p.log_y ? "set logscale y 10\n" : "")
       << "set grid\nset key " << p.key_at << " box opaque\n"
       << "set offsets 0, 0, graph 0.05, graph 0.05\n"
       << "plot ";
    // Points mark measurements; a long curve (a loss per training step) is drawn as a line.
    const std::string style = p.x.n_elem <= 40 ? "linespoints pt 7 ps 0.7" : "lines";
    for (std::size_t i = 0; i < p.series.size(); ++i) {
      const Series& s = p.series[i];
      gp << (i ? ", " : "")
         << fmt::format("'-' using 1:2 with {} lw 2 dt {} lc rgb {} title {}", style,
                        s.dashed ? 2 : 1, quoted(s.colour), quoted(s.label));
    }
    gp << "\n";
    for (const Series& s : p.series) {
      std::vector<std::pair<double, double>> points;
      for (arma::uword j = 0; j < p.x.n_elem; ++j) points.emplace_back(p.x(j), s.y(j));
      gp.send1d(points);
    }
  }
  finish(png);
}

void Plotter::vectors(const VectorPicture& v) {
  for (const Arrow& a : v.arrows)
    if (a.tip.n_elem != 2)
      throw ShapeError(fmt::format("figure {}: arrow {} has tip {}, a 2-D picture needs (1 × 2)",
                                   v.name, a.label, shape_of(a.tip)));
  if (!active_) return;
  const fs::path png = start(v.name);
  {
    Gnuplot gp(command());
    gp << preamble(png, 640, 560, v.title)
       << "set size ratio -1\nset grid\nunset key\nset xzeroaxis\nset yzeroaxis\n"
       << "set offsets graph 0.15, graph 0.25, graph 0.12, graph 0.12\n";
    std::vector<std::pair<double, double>> tips{{0.0, 0.0}};
    int tag = 1;
    for (const Arrow& a : v.arrows) {
      gp << fmt::format("set arrow {} from 0,0 to {},{} head filled size screen 0.02,15 lw 2.5 "
                        "lc rgb {}\n", tag, a.tip(0), a.tip(1), quoted(a.colour))
         << fmt::format("set label {} {} at {},{} offset 0.6,0.6 textcolor rgb {}\n", tag,
                        quoted(a.label), a.tip(0), a.tip(1), quoted(a.colour));
      tips.emplace_back(a.tip(0), a.tip(1));
      ++tag;
    }
    gp << "plot '-' using 1:2 with points pt 7 ps 0.8 lc rgb 'black'\n";
    gp.send1d(tips);
  }
  finish(png);
}

}  // namespace attn
