#include "attn/plot.hpp"

#include "attn/validate.hpp"

// Armadillo must come before gnuplot-iostream, or gnuplot-iostream does not recognise
// Armadillo types and silently sends matrices as flat lists.
#include <armadillo>
#include <gnuplot-iostream.h>

#include <fmt/format.h>
#include <fmt/ostream.h>

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

}  // namespace

Plotter::Plotter(PlotOptions options, std::ostream& log) : options_(std::move(options)), log_(log) {
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
  fs::create_directories(options_.folder, ec);
  if (ec) {
    fmt::print(log_, "plots skipped: cannot create the folder {} ({}); the numbers are still "
                     "computed and checked\n", options_.folder.string(), ec.message());
    return;
  }
  active_ = true;
}

fs::path Plotter::start(const std::string& name) { return options_.folder / (name + ".png"); }

std::string Plotter::preamble(const fs::path& png, int width, int height,
                              const std::string& title) const {
  return fmt::format("set terminal pngcairo size {},{} font 'DejaVu Sans,11' noenhanced\n"
                     "set output {}\nset title {}\n",
                     width, height, quoted(png.string()), quoted(title));
}

void Plotter::finish(const fs::path& png) {
  std::error_code ec;
  if (fs::file_size(png, ec) > 0 && !ec) fmt::print(log_, "wrote {}\n", png.string());
  else fmt::print(log_, "warning: gnuplot did not write {}\n", png.string());
}

void Plotter::heatmap(const Heatmap& h) {
  require_labels(h.name + " (rows)", h.queries.size(), h.values.n_rows);
  require_labels(h.name + " (columns)", h.keys.size(), h.values.n_cols);
  if (!active_) return;
  const fs::path png = start(h.name);
  const bool weights = h.scale == ColourScale::weights;
  const double reach = weights ? 1.0 : std::max(arma::abs(h.values).max(), 1e-12);
  const double low = weights ? 0.0 : -reach;
  const auto cell_px = 90, rows = static_cast<int>(h.values.n_rows),
             cols = static_cast<int>(h.values.n_cols);
  {
    Gnuplot gp(gnuplot_.string());
    gp << preamble(png, std::max(520, 260 + cell_px * cols), std::max(420, 170 + cell_px * rows),
                   h.title)
       << "set xlabel 'key (the token being looked at)'\nset ylabel 'query (the token asking)'\n"
       << fmt::format("set xrange [-0.5:{}]\nset yrange [{}:-0.5]\n", cols - 0.5, rows - 0.5)
       << "set xtics " << tics(h.keys) << "\nset ytics " << tics(h.queries) << "\n"
       << "set tics scale 0\nset size ratio -1\nunset key\n"
       << fmt::format("set cbrange [{}:{}]\n", low, reach)
       << "set cblabel " << quoted(weights ? "weight" : "score") << "\n"
       << (weights ? "set palette defined (0 '#f7fbff', 0.5 '#6baed6', 1 '#08306b')\n"
                   : "set palette defined (-1 '#b2182b', 0 '#f7f7f7', 1 '#2166ac')\n")
       // Dark cells get white text so every value stays readable.
       << fmt::format("plot '-' using 2:1:3 with image, '-' using 2:1:(sprintf('%.{}f', $3)):"
                      "(abs($3) > {} ? 0xffffff : 0x000000) "
                      "with labels textcolor rgb variable font ',13'\n",
                      h.decimals, 0.6 * reach);
    const auto cells = long_rows(h.values);
    gp.send1d(cells);
    gp.send1d(cells);
  }
  finish(png);
}

void Plotter::bars(const BarChart& b) {
  require_labels(b.name, b.labels.size(), b.values.n_elem);
  if (!active_) return;
  const fs::path png = start(b.name);
  {
    Gnuplot gp(gnuplot_.string());
    gp << preamble(png, 720, 440, b.title)
       << "set ylabel " << quoted(b.value_label) << "\n"
       << "set xtics " << tics(b.labels) << "\nset tics scale 0\nunset key\n"
       << fmt::format("set xrange [-0.6:{}]\n", b.values.n_elem - 0.4)
       << (b.unit_range ? "set yrange [0:1]\n" : "set offsets 0, 0, graph 0.1, 0\n")
       << "set style fill solid 0.85 border -1\nset boxwidth 0.6\nset grid ytics\n"
       << "plot '-' using 1:2 with boxes lc rgb '#3182bd', "
          "'-' using 1:2:(sprintf('%.2f', $2)) with labels offset 0,0.8\n";
    std::vector<std::pair<arma::uword, double>> rows;
    for (arma::uword i = 0; i < b.values.n_elem; ++i) rows.emplace_back(i, b.values(i));
    gp.send1d(rows);
    gp.send1d(rows);
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
    Gnuplot gp(gnuplot_.string());
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
