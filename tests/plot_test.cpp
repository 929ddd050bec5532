// The plotter's checks run whether or not gnuplot is there, so a bad figure is caught in CI too.
#include <attn/plot.hpp>
#include <attn/validate.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

namespace {

attn::Plotter disabled_plotter(std::ostringstream& log) {
  static std::ostringstream out;
  return attn::Plotter({false, "unused", false}, out, log);
}

TEST(Plotter, DisabledSaysSoOnce) {
  std::ostringstream log;
  const attn::Plotter p = disabled_plotter(log);
  EXPECT_FALSE(p.active());
  EXPECT_EQ(log.str(), "plots skipped (--no-plots)\n");
}

TEST(Plotter, HeatmapLabelsMustMatchTheGrid) {
  std::ostringstream log;
  attn::Plotter p = disabled_plotter(log);
  const attn::Heatmap bad{"x", "t", {"a", "b"}, {"a", "b", "c"}, arma::mat(2, 2, arma::fill::zeros)};
  EXPECT_THROW(p.heatmap(bad), attn::ShapeError);
  EXPECT_THROW(p.heatmaps({"x", "t", {}}), attn::InputError);
}

TEST(Plotter, ArrowsMustBeTwoDimensional) {
  std::ostringstream log;
  attn::Plotter p = disabled_plotter(log);
  EXPECT_THROW(p.vectors({"x", "t", {{"a", arma::rowvec{1.0, 2.0, 3.0}, "red"}}}), attn::ShapeError);
  EXPECT_THROW(p.bars({"x", "t", {"a"}, {{"w", arma::rowvec{0.5, 0.5}, "blue"}}, "w"}),
               attn::ShapeError);
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
  attn::Plotter p({true, folder, false}, out, log);
  ::setenv("PATH", path.c_str(), 1);
  ASSERT_TRUE(p.active());

  std::vector<std::string> tokens;
  for (int i = 0; i < 40; ++i) tokens.push_back("token" + std::to_string(i));
  const arma::mat grid(40, 40, arma::fill::randu);
  const attn::Heatmap panel{"", "panel", tokens, tokens, grid};
  p.heatmaps({"big", "two large panels", {panel, panel}});

  EXPECT_EQ(log.str(), "warning: gnuplot did not draw " + figure.string() +
                           "; the previous figure is kept\n");
  EXPECT_EQ(bytes_of(figure), "the previous figure");
  EXPECT_EQ(std::distance(fs::directory_iterator(folder), fs::directory_iterator()), 1)
      << "a temporary file was left in " << folder;
}

// gnuplot runs to the end but one command failed (here a key position it does not know):
// GPVAL_ERRNO is then not 0, and the half-made figure must not replace the previous one.
TEST(Plotter, AFailedGnuplotCommandKeepsThePreviousFigure) {
  namespace fs = std::filesystem;
  ASSERT_FALSE(attn::find_on_path("gnuplot").empty())
      << "gnuplot (gnuplot-nox) is a build dependency: scripts/install-deps installs it";
  const fs::path folder = fs::path(::testing::TempDir()) / "plotter-failed-command";
  fs::remove_all(folder);
  fs::create_directories(folder);
  const fs::path figure = folder / "curve.png";
  std::ofstream(figure, std::ios::binary) << "the previous figure";
  std::ostringstream out, log;
  attn::Plotter p({true, folder, false}, out, log);
  attn::LinePlot plot{"curve", "a curve", "x", "y", arma::rowvec{1.0, 2.0},
                      {{"y", arma::rowvec{1.0, 4.0}, "black"}}};
  plot.key_at = "nowhere known";
  p.lines(plot);
  EXPECT_EQ(log.str(), "warning: gnuplot did not draw " + figure.string() +
                           "; the previous figure is kept\n");
  EXPECT_EQ(bytes_of(figure), "the previous figure");
  EXPECT_EQ(std::distance(fs::directory_iterator(folder), fs::directory_iterator()), 1);
}

TEST(FindOnPath, FindsShellButNotNonsense) {
  EXPECT_FALSE(attn::find_on_path("sh").empty());
  EXPECT_TRUE(attn::find_on_path("no-such-program-anywhere").empty());
}

}  // namespace
