// Bad numbers, defined behaviour, book layer: text writes NaN and the infinities as Python
// writes them, grids and figures are drawn from finite numbers only, and the article checker
// fails on an infinity and names a bad decimal.
#include <attn/book/article_check.hpp>
#include <attn/book/grid_text.hpp>
#include <attn/book/plot.hpp>
#include <attn/math/validate.hpp>

#include "bad_input.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>

namespace {

using attn_bad_input::kInf;
using attn_bad_input::kNaN;
using attn_bad_input::ThrowsNaming;

TEST(BadInput, FixedWritesNaNAndInfinitiesAsPythonDoes) {
  EXPECT_EQ(attn::book::fixed(kNaN), "nan");
  EXPECT_EQ(attn::book::fixed(-kNaN, 3), "nan");  // Python prints no sign on a NaN
  EXPECT_EQ(attn::book::fixed(kInf), "inf");
  EXPECT_EQ(attn::book::fixed(-kInf, 1), "-inf");
  EXPECT_EQ(attn::book::vector_text(arma::rowvec{kNaN, 0.5}), "[nan, 0.50]");
  EXPECT_EQ(attn::book::vector_text(arma::rowvec()), "[]");
  EXPECT_NE(
      attn::book::grid_table({"a"}, {"b", "c"}, arma::mat{{kNaN, -kInf}}).find("     nan    -inf"),
      std::string::npos);
}

TEST(BadInput, TextRejectsNegativeDecimals) {
  EXPECT_TRUE(
      ThrowsNaming<attn::math::InputError>([] { attn::book::fixed(1.0, -1); }, "decimals = -1"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] { attn::book::vector_text(arma::rowvec{1.0}, -2); }, "decimals = -2"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] { attn::book::grid_table({"a"}, {"b"}, arma::mat(1, 1, arma::fill::ones), -1); },
      "grid_table: decimals"));
}

TEST(BadInput, GridFromTableNamesACellThatIsNotAFiniteNumber) {
  // std::stod read "nan" as NaN and "0.5x" as 0.5, silently.
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] { attn::book::grid_from_table("  a  b\n  a  0.5  nan\n"); },
      "\"nan\" in row 0, column 1"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] { attn::book::grid_from_table("  a  b\n  a  0.5  0.5\n  b  -inf  1\n"); },
      "\"-inf\" in row 1, column 0"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] { attn::book::grid_from_table("  a\n  a  0.5x\n"); }, "\"0.5x\""));
  EXPECT_TRUE(
      ThrowsNaming<attn::math::InputError>([] { attn::book::grid_from_table(""); }, "no header"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] { attn::book::grid_from_table("  a  b\n\n"); }, "no rows"));
}

TEST(BadInput, CellLabelsNameARowOutOfRange) {
  EXPECT_TRUE(ThrowsNaming<std::out_of_range>([] { attn::book::cell_labels({}, 0); },
                                              "row 0 is not one of the 0 tokens"));
  EXPECT_TRUE(ThrowsNaming<std::out_of_range>(
      [] {
        attn::book::cell_labels({"a", "b"}, 2);
      },
      "row 2"));
}

TEST(BadInput, ArticleChecksFailOnInfinityAndNameBadDecimals) {
  attn::book::ArticleChecks checks;
  checks.number("x", kInf, 2, kInf);  // equal after rounding, but no infinity matches
  EXPECT_FALSE(checks.all_passed());
  attn::book::ArticleChecks loose;
  loose.approximately("y", 0.6, kNaN, 0.6);
  EXPECT_FALSE(loose.all_passed());
  attn::book::ArticleChecks fine;
  EXPECT_TRUE(ThrowsNaming<std::invalid_argument>([&] { fine.number("z", 0.5, -1, 0.5); },
                                                  "decimals = -1"));
}

TEST(BadInput, FiguresAreDrawnFromFiniteNumbersOnly) {
  std::ostringstream out, log;
  attn::book::Plotter plots({false, "unused", false}, out,
                            log);  // checks run before "is it active?"
  attn::book::Heatmap h{"f", "", {"a", "b"}, {"c"}, arma::colvec{0.5, kNaN}};
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>([&] { plots.heatmap(h); },
                                                   "figure f: panel 0 has a non-finite entry nan"));
  h.queries.clear();
  h.keys.clear();
  h.values.reset();
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>([&] { plots.heatmap(h); }, "panel 0 is empty"));
  const attn::book::LinePlot lines{"g", "", "x", "y", arma::rowvec{1.0, kInf}, {}};
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>([&] { plots.lines(lines); }, "figure g: x"));
  const attn::book::BarChart bars{
      "b", "", {"a", "b"}, {{"before", arma::rowvec{0.1, kInf}, "red"}}, "w"};
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>([&] { plots.bars(bars); }, "series before"));
  // A NaN is a bar that does not apply: documented, and not an error.
  const attn::book::BarChart gap{
      "b", "", {"a", "b"}, {{"before", arma::rowvec{0.1, kNaN}, "red"}}, "w"};
  EXPECT_NO_THROW(plots.bars(gap));
  const attn::book::VectorPicture arrows{"v", "", {{"q", arma::rowvec{-kInf, 1.0}, "red"}}};
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>([&] { plots.vectors(arrows); }, "arrow q"));
  // Documented results of the colour helpers.
  EXPECT_EQ(attn::book::weight_colour(kInf), attn::book::weight_colour(1.0));
  EXPECT_EQ(attn::book::weight_colour(-kInf), attn::book::weight_colour(0.0));
  EXPECT_FALSE(attn::book::dark_weight(kNaN));
  EXPECT_TRUE(attn::book::tick_labels(0, 3).empty());
}

}  // namespace
