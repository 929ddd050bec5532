// The plotter's checks run whether or not gnuplot is there, so a bad figure is caught in CI too.
#include <attn/plot.hpp>
#include <attn/validate.hpp>

#include <gtest/gtest.h>

#include <sstream>

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

TEST(FindOnPath, FindsShellButNotNonsense) {
  EXPECT_FALSE(attn::find_on_path("sh").empty());
  EXPECT_TRUE(attn::find_on_path("no-such-program-anywhere").empty());
}

}  // namespace
