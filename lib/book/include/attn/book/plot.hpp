/// \file
/// \brief Every figure of the book, drawn by gnuplot through gnuplot-iostream.
///
/// Figures are PNG files named `NN-MM-what.png` (chapter, figure, subject) in one folder, by
/// default the build's `plots/` (`build/plots`). A figure is drawn into `NAME.png.part` and
/// moved over `NAME.png` only once gnuplot reports that it drew it without an error, so a
/// gnuplot that fails or is killed half-way leaves the previous file as it was. Heatmaps follow one
/// convention everywhere: queries are rows, top to bottom; keys are columns; tokens label both
/// axes; every cell shows its value; weights use a fixed 0..1 colour scale and scores a scale
/// symmetric about 0.
///
/// Without gnuplot on the `PATH` nothing is drawn: the chapter still computes, prints and
/// checks, and one line on stderr says that plots were skipped. With `in_terminal` the same
/// figures are drawn as coloured text on stdout (gnuplot's `dumb` terminal), for readers on SSH,
/// and no file is written or removed.
///
/// All data reach gnuplot as named datablocks (`$cells1 << EOD`), which gnuplot 5.4 (Debian 12)
/// and 6.0 (Debian 13) read alike; gnuplot 6 no longer accepts inline data inside a multiplot.
///
/// A figure is drawn from finite numbers only: gnuplot would drop a NaN point without a word
/// and fail on an infinite range, so every drawing function throws InputError, naming the
/// figure and the panel, series or arrow, before anything is drawn (with or without gnuplot).
#pragma once

#include <armadillo>

#include <filesystem>
#include <functional>
#include <iosfwd>
#include <limits>
#include <string>
#include <vector>

namespace attn::book {

/// \brief Where and whether figures are drawn.
struct PlotOptions {
  bool enabled = true;           ///< false with `--no-plots`.
  std::filesystem::path folder;  ///< where PNG files go (created if missing).
  bool in_terminal = false;      ///< draw on stdout as ANSI text instead of PNG files.
};

/// \brief How a heatmap's colours map to values.
enum class ColourScale {
  weights,  ///< fixed 0..1, so grids of different chapters compare by eye.
  scores,   ///< symmetric about 0 (−max|v| .. +max|v|): sign shows as hue.
};

/// \brief One stop of a colour scale: at this value, this colour; colours between two stops
///        are mixed linearly in RGB, as gnuplot's `set palette defined` mixes them.
struct ColourStop {
  double at;           ///< the value.
  std::string colour;  ///< `#rrggbb`.
};

/// \brief The weights' fixed 0..1 colour scale (ColourScale::weights): white-blue at 0 to
///        navy at 1. The heatmaps and the book's interactive page both paint with it.
/// \return the stops, in increasing order of value.
const std::vector<ColourStop>& weight_palette();

/// \brief The colour of a weight on weight_palette(), as gnuplot paints a heatmap cell.
/// \param weight the value; below 0 counts as 0 and above 1 as 1, \f$\pm\infty\f$ included.
/// \return `#rrggbb`.
/// \throws InputError if \p weight is NaN.
std::string weight_colour(double weight);

/// \brief Whether a cell of this weight is dark enough that its value is written in white
///        rather than black (above 0.6, the rule every weight heatmap follows).
/// \param weight the value. \return true for white text; false for NaN, true for \f$+\infty\f$.
bool dark_weight(double weight);

/// \brief A grid of values drawn as coloured cells with the value written in each.
struct Heatmap {
  std::string name = {};             ///< file stem, `"01-02-weights"`; unused in a HeatmapRow.
  std::string title;                 ///< shown above the grid.
  std::vector<std::string> queries;  ///< one label per row.
  std::vector<std::string> keys;     ///< one label per column.
  arma::mat values;                  ///< `(queries × keys)`.
  ColourScale scale = ColourScale::weights;  ///< colour mapping.
  int decimals = 2;                          ///< digits written in each cell.
  /// false for a large grid, such as a position encoding: colours only, small cells, and no
  /// limit on the number of rows and columns (labels may be empty strings to thin the ticks).
  bool write_values = true;
  std::string x_label = "key (the token being looked at)";  ///< under the columns.
  std::string y_label = "query (the token asking)";         ///< beside the rows.
  std::string colour_label = {};  ///< beside the colour box; empty: "weight" or "score", by scale.
};

/// \brief Several heatmaps side by side in one figure, on one shared colour scale.
struct HeatmapRow {
  std::string name;             ///< file stem of the figure.
  std::string title;            ///< shown above all panels.
  std::vector<Heatmap> panels;  ///< left to right; their own names are not used.
  /// Panels in each row of the figure, which then has as many rows as it needs (a layer's heads
  /// a row); 0: all of them in one row.
  std::size_t columns = 0;
};

/// \brief One arrow from the origin in a 2-D picture.
struct Arrow {
  std::string label;   ///< written at the tip.
  arma::rowvec tip;    ///< `(1 × 2)`: where the arrow ends.
  std::string colour;  ///< any gnuplot colour name or `#rrggbb`.
};

/// \brief 2-D vectors drawn as arrows from the origin, with equal axis scales.
struct VectorPicture {
  std::string name;           ///< file stem.
  std::string title;          ///< shown above the picture.
  std::vector<Arrow> arrows;  ///< drawn in order.
};

/// \brief One curve of a line plot.
struct Series {
  std::string label;    ///< shown in the key.
  arma::rowvec y;       ///< `(1 × points)`, one value per x.
  std::string colour;   ///< any gnuplot colour name or `#rrggbb`.
  bool dashed = false;  ///< dashed for reference lines.
};

/// \brief Curves against a shared x axis (for example a measurement against d_k).
struct LinePlot {
  std::string name;                 ///< file stem.
  std::string title;                ///< shown above the plot.
  std::string x_label;              ///< x-axis label.
  std::string y_label;              ///< y-axis label.
  arma::rowvec x;                   ///< `(1 × points)`.
  std::vector<Series> series;       ///< drawn in order, each with a key entry.
  bool log_x = false;               ///< logarithmic x axis (base 2).
  bool log_y = false;               ///< logarithmic y axis (base 10).
  std::string key_at = "top left";  ///< where the key sits, in gnuplot's words.
  /// The y axis starts at 0 (for sizes and counts, which a margin below would push below 0);
  /// otherwise gnuplot fits it to the curves. Not with log_y.
  bool y_from_zero = false;
};

/// \brief Labelled bars, one group per token, one bar per series (for example a query's
///        weights before and after training).
struct BarChart {
  std::string name;                 ///< file stem.
  std::string title;                ///< shown above the bars.
  std::vector<std::string> labels;  ///< one label per group.
  /// One bar per group each; `y` has one value per label, NaN where a bar does not apply (no
  /// bar is drawn there).
  std::vector<Series> series;
  std::string value_label;  ///< y-axis label.
  bool unit_range = true;   ///< fix the y-axis to 0..1 (for weights).
};

/// \brief One measurement per row, drawn as a point on a horizontal bar that spans its range:
///        for example the mean of several seeds' runs, between the lowest and the highest.
struct RangeChart {
  std::string name;                 ///< file stem.
  std::string title;                ///< shown above the chart.
  std::vector<std::string> labels;  ///< one row each, the first at the top.
  arma::rowvec value;               ///< `(1 × rows)`: the point of each row, written beside it.
  arma::rowvec low;                 ///< `(1 × rows)`: where its bar starts, at most the value.
  arma::rowvec high;                ///< `(1 × rows)`: where its bar ends, at least the value.
  std::string value_label;          ///< the x axis's label.
  std::string colour;               ///< any gnuplot colour name or `#rrggbb`.
  /// A value to compare every row with, drawn as a dashed vertical line (the first row's, for
  /// a baseline), or NaN for none.
  double reference = std::numeric_limits<double>::quiet_NaN();
  int decimals = 3;  ///< digits of the value written beside each point.
};

/// \brief Draws the book's figures, or says once why it does not.
class Plotter {
 public:
  /// \brief Looks for gnuplot on the `PATH` once; reports on \p log if plots will be skipped.
  ///
  /// Once gnuplot is found, the process ignores SIGPIPE from then on: a gnuplot that dies
  /// half-way makes writes to its pipe fail instead of killing the program.
  /// \param options where and whether to draw.
  /// \param out the chapter's stdout, flushed before a figure is drawn in the terminal.
  /// \param log where messages go (stderr).
  Plotter(PlotOptions options, std::ostream& out, std::ostream& log);

  /// \brief Whether figures are actually drawn. \return false if disabled or no gnuplot.
  bool active() const { return active_; }

  /// \brief Draws one heatmap. \param h the figure.
  /// \throws ShapeError if the labels do not match the values' shape.
  /// \throws InputError if the values are empty or hold a NaN or an infinity.
  void heatmap(const Heatmap& h);
  /// \brief Draws heatmaps side by side on one colour scale; a grid of more than 40 tokens
  ///        with values written in it is skipped with a message, as no one could read it.
  /// \param row the figure.
  /// \throws ShapeError if a panel's labels do not match its values.
  /// \throws InputError if there is no panel, or a panel's values are empty or hold a NaN or
  ///         an infinity (the panel is named by its index).
  void heatmaps(const HeatmapRow& row);
  /// \brief Draws a bar chart. \param b the figure.
  /// \throws ShapeError if labels and values disagree.
  /// \throws InputError if a series holds an infinity (the series is named). A NaN is a bar
  ///         that does not apply: nothing is drawn for it.
  void bars(const BarChart& b);
  /// \brief Draws curves against one x axis. \param p the figure.
  /// \throws ShapeError unless every series has one value per x.
  /// \throws InputError if \p p's x or a series holds a NaN or an infinity (it is named).
  void lines(const LinePlot& p);
  /// \brief Draws one point and its range per row. \param r the figure.
  /// \throws ShapeError unless value, low and high have one entry per label.
  /// \throws InputError if a value or an end holds a NaN or an infinity, or a row's value is
  ///         outside its range (the row is named), or the reference is infinite.
  void ranges(const RangeChart& r);
  /// \brief Draws 2-D arrows. \param v the figure.
  /// \throws ShapeError unless every tip is `(1 × 2)`.
  /// \throws InputError if a tip holds a NaN or an infinity (the arrow is named).
  void vectors(const VectorPicture& v);

  /// \brief Writes a data file for the book's pages next to the figures, such as the numbers
  ///        an interactive figure shows, replacing an earlier one in one step.
  ///
  /// gnuplot is not needed. Nothing is written with `--no-plots` or `--plots-in-terminal`.
  /// \param file_name the file's name in the figures' folder, `"03-05-token-walks.js"`.
  /// \param text its contents.
  /// \throws InputError if \p file_name is not a plain file name.
  void page_data(const std::string& file_name, const std::string& text);

 private:
  // Runs one gnuplot session for figure `name`: sets up the PNG (or terminal) output, lets
  // `script` send the data and commands, and puts the finished file in place.
  void draw(const std::string& name, int width, int height, const std::string& title,
            const std::function<void(std::ostream&)>& script);

  PlotOptions options_;
  std::ostream& out_;
  std::ostream& log_;
  std::filesystem::path gnuplot_;
  bool active_ = false;
};

/// \brief Labels for a long axis: the index of every \p every-th entry, the others empty, so
///        that a heatmap of many rows or columns (Heatmap::write_values false) stays readable.
/// \param count the number of labels. \param every the spacing of the written ones.
/// \return `{"0", "", ..., "10", "", ...}` for \p every = 10; none for \p count 0.
/// \throws InputError if \p every is zero.
std::vector<std::string> tick_labels(std::size_t count, std::size_t every);

/// \brief The full path of an executable found on the `PATH`, or an empty path.
/// \param program a program name such as `"gnuplot"`. \return its path, or empty if absent.
std::filesystem::path find_on_path(const std::string& program);

}  // namespace attn::book
