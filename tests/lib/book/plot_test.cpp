// The plotter's checks run whether or not gnuplot is there, so a bad figure is caught in CI too.
#include <attn/book/plot.hpp>
#include <attn/math/validate.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace {

attn::book::Plotter disabled_plotter(std::ostringstream& log) {
  static std::ostringstream out;
  return attn::book::Plotter({false, "unused", false}, out, log);
}

TEST(Plotter, DisabledSaysSoOnce) {
  std::ostringstream log;
  const attn::book::Plotter p = disabled_plotter(log);
  EXPECT_FALSE(p.active());
  EXPECT_EQ(log.str(), "plots skipped (--no-plots)\n");
}

TEST(Plotter, HeatmapLabelsMustMatchTheGrid) {
  std::ostringstream log;
  attn::book::Plotter p = disabled_plotter(log);
  const attn::book::Heatmap bad{
      "x", "t", {"a", "b"}, {"a", "b", "c"}, arma::mat(2, 2, arma::fill::zeros)};
  EXPECT_THROW(p.heatmap(bad), attn::math::ShapeError);
  EXPECT_THROW(p.heatmaps({"x", "t", {}}), attn::math::InputError);
}

TEST(Plotter, ArrowsMustBeTwoDimensional) {
  std::ostringstream log;
  attn::book::Plotter p = disabled_plotter(log);
  EXPECT_THROW(p.vectors({"x", "t", {{"a", arma::rowvec{1.0, 2.0, 3.0}, "red"}}}),
               attn::math::ShapeError);
  EXPECT_THROW(p.bars({"x", "t", {"a"}, {{"w", arma::rowvec{0.5, 0.5}, "blue"}}, "w"}),
               attn::math::ShapeError);
}

std::string bytes_of(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// tests/fake-gnuplot/gnuplot reads two lines, writes junk where it was told to draw, and dies.
// The figure here is two 40 × 40 panels, about 100 kB of data: more than a pipe holds, so the
// plotter is still writing when gnuplot has gone. It must neither die of SIGPIPE nor touch the
// figure already in the folder, and must leave no temporary file behind.
TEST(Plotter, GnuplotDyingHalfWayKeepsThePreviousFigure) {
  namespace fs = std::filesystem;
  const fs::path folder = fs::path(::testing::TempDir()) / "plotter-dying-gnuplot";
  fs::remove_all(folder);
  fs::create_directories(folder);
  const fs::path figure = folder / "big.png";
  std::ofstream(figure, std::ios::binary) << "the previous figure";

  const std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  ::setenv("PATH", (std::string(ATTN_FAKE_GNUPLOT_DIR) + ":" + path).c_str(), 1);
  std::ostringstream out, log;
  attn::book::Plotter p({true, folder, false}, out, log);
  ::setenv("PATH", path.c_str(), 1);
  ASSERT_TRUE(p.active());

  std::vector<std::string> tokens;
  for (int i = 0; i < 40; ++i)
    tokens.push_back("token" + std::to_string(i));
  const arma::mat grid(40, 40, arma::fill::randu);
  const attn::book::Heatmap panel{"", "panel", tokens, tokens, grid};
  p.heatmaps({"big", "two large panels", {panel, panel}});

  EXPECT_EQ(log.str(),
            "warning: gnuplot did not draw " + figure.string() + "; the previous figure is kept\n");
  EXPECT_EQ(bytes_of(figure), "the previous figure");
  EXPECT_EQ(std::distance(fs::directory_iterator(folder), fs::directory_iterator()), 1)
      << "a temporary file was left in " << folder;
}

// gnuplot runs to the end but one command failed (here a key position it does not know):
// GPVAL_ERRNO is then not 0, and the half-made figure must not replace the previous one.
TEST(Plotter, AFailedGnuplotCommandKeepsThePreviousFigure) {
  namespace fs = std::filesystem;
  ASSERT_FALSE(attn::book::find_on_path("gnuplot").empty())
      << "gnuplot (gnuplot-nox) is a build dependency: scripts/install-deps installs it";
  const fs::path folder = fs::path(::testing::TempDir()) / "plotter-failed-command";
  fs::remove_all(folder);
  fs::create_directories(folder);
  const fs::path figure = folder / "curve.png";
  std::ofstream(figure, std::ios::binary) << "the previous figure";
  std::ostringstream out, log;
  attn::book::Plotter p({true, folder, false}, out, log);
  attn::book::LinePlot plot{"curve",
                            "a curve",
                            "x",
                            "y",
                            arma::rowvec{1.0, 2.0},
                            {{"y", arma::rowvec{1.0, 4.0}, "black"}}};
  plot.key_at = "nowhere known";
  p.lines(plot);
  EXPECT_EQ(log.str(),
            "warning: gnuplot did not draw " + figure.string() + "; the previous figure is kept\n");
  EXPECT_EQ(bytes_of(figure), "the previous figure");
  EXPECT_EQ(std::distance(fs::directory_iterator(folder), fs::directory_iterator()), 1);
}

// A size starts its axis at 0, and gnuplot draws it with nothing in the log but the file; a
// logarithmic axis that should start at 0 is refused before gnuplot is asked.
TEST(Plotter, LinesFromZero) {
  namespace fs = std::filesystem;
  const fs::path folder = fs::path(::testing::TempDir()) / "plotter-from-zero";
  fs::remove_all(folder);
  fs::create_directories(folder);
  std::ostringstream out, log;
  attn::book::Plotter p({true, folder, false}, out, log);
  attn::book::LinePlot plot{"sizes",
                            "sizes",
                            "tokens",
                            "bytes",
                            arma::rowvec{1.0, 2.0, 3.0},
                            {{"held", arma::rowvec{10.0, 20.0, 30.0}, "black"}}};
  plot.y_from_zero = true;
  p.lines(plot);
  EXPECT_EQ(log.str(), "wrote " + (folder / "sizes.png").string() + "\n");
  plot.log_y = true;
  EXPECT_THROW(p.lines(plot), attn::math::InputError);
}

TEST(FindOnPath, FindsShellButNotNonsense) {
  EXPECT_FALSE(attn::book::find_on_path("sh").empty());
  EXPECT_TRUE(attn::book::find_on_path("no-such-program-anywhere").empty());
}

}  // namespace

namespace {

// The weights' colour scale, as gnuplot's `set palette defined` mixes it: the stops exactly,
// linear in RGB between them, clamped outside 0..1.
TEST(WeightColour, FollowsThePaletteStops) {
  const auto& stops = attn::book::weight_palette();
  ASSERT_EQ(stops.size(), 3u);
  EXPECT_EQ(attn::book::weight_colour(0.0), stops[0].colour);
  EXPECT_EQ(attn::book::weight_colour(0.5), stops[1].colour);
  EXPECT_EQ(attn::book::weight_colour(1.0), stops[2].colour);
  EXPECT_EQ(attn::book::weight_colour(-3.0), stops[0].colour);
  EXPECT_EQ(attn::book::weight_colour(7.0), stops[2].colour);
  // Half-way from #6baed6 to #08306b: (107 + 8) / 2 = 57.5, (174 + 48) / 2 = 111, (214 + 107) / 2 =
  // 160.5.
  EXPECT_EQ(attn::book::weight_colour(0.75), "#3a6fa1");
  EXPECT_THROW(attn::book::weight_colour(std::nan("")), attn::math::InputError);
}

TEST(WeightColour, DarkCellsAreAboveSixTenths) {
  EXPECT_FALSE(attn::book::dark_weight(0.6));
  EXPECT_TRUE(attn::book::dark_weight(0.61));
}

TEST(PageData, WrittenNextToTheFiguresEvenWithoutGnuplot) {
  namespace fs = std::filesystem;
  const fs::path folder = fs::path(::testing::TempDir()) / "page-data" / "figures";
  fs::remove_all(folder.parent_path());
  const std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  ::setenv("PATH", "/nonexistent", 1);
  std::ostringstream out, log;
  attn::book::Plotter p({true, folder, false}, out, log);
  ::setenv("PATH", path.c_str(), 1);
  ASSERT_FALSE(p.active());
  p.page_data("walk.js", "window.x = 1;\n");
  EXPECT_EQ(bytes_of(folder / "walk.js"), "window.x = 1;\n");
  EXPECT_NE(log.str().find("wrote " + (folder / "walk.js").string()), std::string::npos)
      << log.str();
  p.page_data("walk.js", "window.x = 2;\n");
  EXPECT_EQ(bytes_of(folder / "walk.js"), "window.x = 2;\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(folder), fs::directory_iterator()), 1)
      << "a temporary file was left in " << folder;
}

TEST(PageData, NotWrittenWithNoPlotsOrInTheTerminal) {
  namespace fs = std::filesystem;
  const fs::path folder = fs::path(::testing::TempDir()) / "page-data-off";
  fs::remove_all(folder);
  std::ostringstream out, log;
  attn::book::Plotter({false, folder, false}, out, log).page_data("walk.js", "x");
  attn::book::Plotter({true, folder, true}, out, log).page_data("walk.js", "x");
  EXPECT_FALSE(fs::exists(folder / "walk.js"));
}

TEST(PageData, RefusesPathsAndReportsAFolderItCannotMake) {
  namespace fs = std::filesystem;
  std::ostringstream out, log;
  attn::book::Plotter off({false, "unused", false}, out, log);
  for (const char* bad : {"", ".", "..", "../walk.js", "sub/walk.js", "/tmp/walk.js"})
    EXPECT_THROW(off.page_data(bad, "x"), attn::math::InputError) << '"' << bad << '"';

  const fs::path blocker = fs::path(::testing::TempDir()) / "page-data-blocker";
  fs::remove_all(blocker);
  std::ofstream(blocker) << "a file where the folder should be";
  std::ostringstream log2;
  attn::book::Plotter p({true, blocker / "figures", false}, out, log2);
  p.page_data("walk.js", "x");
  EXPECT_NE(log2.str().find("warning: could not write " +
                            (blocker / "figures" / "walk.js").string() + "; there is no file"),
            std::string::npos)
      << log2.str();
}

TEST(TickLabels, WriteEveryNthIndex) {
  EXPECT_EQ(attn::book::tick_labels(5, 2), (std::vector<std::string>{"0", "", "2", "", "4"}));
  EXPECT_EQ(attn::book::tick_labels(0, 3), std::vector<std::string>{});
  EXPECT_THROW(attn::book::tick_labels(4, 0), attn::math::InputError);
}

// A heatmap with values written in its cells is skipped beyond 40 tokens; one drawn in colours
// only (a position encoding) is not.
TEST(Plotter, LargeGridsAreDrawnWhenNoValuesAreWritten) {
  namespace fs = std::filesystem;
  const fs::path folder = fs::path(::testing::TempDir()) / "plotter-large-grid";
  fs::remove_all(folder);
  std::ostringstream out, log;
  attn::book::Plotter p({true, folder, false}, out, log);
  ASSERT_TRUE(p.active()) << "gnuplot (gnuplot-nox) is a build dependency";
  attn::book::Heatmap grid{"big",
                           "big",
                           attn::book::tick_labels(50, 10),
                           attn::book::tick_labels(64, 16),
                           arma::mat(50, 64, arma::fill::randu),
                           attn::book::ColourScale::scores};
  p.heatmap(grid);
  EXPECT_NE(log.str().find("figure big skipped: 64 tokens are too many"), std::string::npos)
      << log.str();
  grid.write_values = false;
  p.heatmap(grid);
  EXPECT_TRUE(fs::is_regular_file(folder / "big.png")) << log.str();
}

// Panels in a grid (a layer's heads a row): five panels, two a row, make three rows, and the
// figure is as wide as two panels and as tall as three, gnuplot saying nothing but the file.
TEST(Plotter, HeatmapPanelsFillRowsOfTheGivenWidth) {
  namespace fs = std::filesystem;
  const fs::path folder = fs::path(::testing::TempDir()) / "plotter-grid";
  fs::remove_all(folder);
  std::ostringstream out, log;
  attn::book::Plotter p({true, folder, false}, out, log);
  ASSERT_TRUE(p.active()) << "gnuplot (gnuplot-nox) is a build dependency";
  const std::vector<std::string> tokens = {"a", "b", "c"};
  attn::book::Heatmap panel{"", "head", tokens, tokens, arma::mat(3, 3, arma::fill::eye)};
  panel.write_values = false;  // small cells: each panel takes its least size, 520 by 420
  p.heatmaps({.name = "grid", .title = "five heads", .panels = {5, panel}, .columns = 2});
  EXPECT_EQ(log.str(), "wrote " + (folder / "grid.png").string() + "\n");
  // A PNG's width and height: big-endian, at bytes 16 to 23 (its IHDR chunk).
  const std::string png = bytes_of(folder / "grid.png");
  ASSERT_GT(png.size(), 24u);
  const auto number_at = [&](std::size_t at) {
    std::uint32_t n = 0;
    for (std::size_t k = at; k < at + 4; ++k)
      n = (n << 8) | static_cast<unsigned char>(png[k]);
    return n;
  };
  EXPECT_EQ(number_at(16), 2u * 520u);
  EXPECT_EQ(number_at(20), 3u * 420u + 40u);  // and the title's band
}

// A range chart (a mean over seeds between the lowest and highest) is drawn, and the log holds
// only the line that says so: a gnuplot warning there would be a figure drawn wrong.
TEST(Plotter, RangeChartIsDrawnAndOnlyReported) {
  namespace fs = std::filesystem;
  const fs::path folder = fs::path(::testing::TempDir()) / "plotter-ranges";
  fs::remove_all(folder);
  std::ostringstream out, log;
  attn::book::Plotter p({true, folder, false}, out, log);
  ASSERT_TRUE(p.active()) << "gnuplot (gnuplot-nox) is a build dependency";
  p.ranges({.name = "ranges",
            .title = "three changes, two seeds each",
            .labels = {"the baseline", "one change, with \"quotes\"", "another"},
            .value = {1.676, 1.584, 1.763},
            .low = {1.675, 1.581, 1.758},
            .high = {1.677, 1.587, 1.768},
            .value_label = "bits per byte",
            .colour = "#1f77b4",
            .reference = 1.676});
  EXPECT_TRUE(fs::is_regular_file(folder / "ranges.png"));
  EXPECT_EQ(log.str(), "wrote " + (folder / "ranges.png").string() + "\n");
}

TEST(Plotter, RangeChartNamesARowOutsideItsRange) {
  std::ostringstream log;
  attn::book::Plotter p = disabled_plotter(log);
  attn::book::RangeChart chart{.name = "r",
                               .title = "t",
                               .labels = {"a", "b"},
                               .value = {1.0, 2.0},
                               .low = {0.5, 2.5},
                               .high = {1.5, 3.0},
                               .value_label = "x",
                               .colour = "red"};
  try {
    p.ranges(chart);
    FAIL() << "a value below its range was accepted";
  } catch (const attn::math::InputError& e) {
    EXPECT_STREQ(e.what(), "figure r: row 1 (b) has its value 2 outside [2.5, 3]");
  }
  chart.low = {0.5};
  EXPECT_THROW(p.ranges(chart), attn::math::ShapeError);
  chart.low = {0.5, 1.5};
  chart.high = {1.5, std::nan("")};
  EXPECT_THROW(p.ranges(chart), attn::math::InputError);
  chart.high = {1.5, 3.0};
  chart.reference = std::numeric_limits<double>::infinity();
  EXPECT_THROW(p.ranges(chart), attn::math::InputError);
}

}  // namespace
