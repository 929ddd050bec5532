// attn::stats against SciPy (tests/data/generate_stats_fixtures.py, Debian 13's python3-scipy):
// stats.t.ppf, ttest_rel, ttest_ind (Student and Welch), the noncentral t's power and the
// smallest detectable effect found from it. SciPy is not exact everywhere (its t.ppf is off by up
// to 1e-11 here, its noncentral t by 3e-10), so the script also computes every quantile, interval,
// power and effect exactly, with mpmath at 40 digits: the library equals the exact numbers within
// 1e-12, relative, and SciPy's within SciPy's own accuracy, 1e-9. The t and p of the tests are
// SciPy's, exact to 1e-12 (the script checks), and so held to 1e-12.
#include <attn/stats/experiment.hpp>
#include "fixture_blocks.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace {

namespace stats = attn::stats;

constexpr double kExact = 1e-12;  // relative, against the exact numbers and SciPy's t and p
constexpr double kSciPy = 1e-9;   // relative, against SciPy's quantiles, powers and effects

arma::mat at(const std::string& name) {
  return attn_test::fixture_block("scipy_stats.txt", name);
}

arma::vec runs(const std::string& name) {
  return arma::vectorise(at("runs " + name));
}

// |ours - theirs| <= tolerance |theirs|, or within kZero of it where theirs is 0 up to rounding
// (the median of a t distribution, which SciPy gives as 7e-17).
constexpr double kZero = 1e-15;
testing::AssertionResult close(double ours, double theirs, double tolerance = kExact) {
  if (std::abs(ours - theirs) <= tolerance * std::abs(theirs) || std::abs(ours - theirs) <= kZero)
    return testing::AssertionSuccess();
  return testing::AssertionFailure()
         << "ours " << ours << ", SciPy's " << theirs << ", relative gap "
         << std::abs(ours - theirs) / std::abs(theirs);
}

// A fixture's row: estimate, se, df, confidence, low, high (exact), t, p, SciPy's low and high.
void expect_difference(const stats::Difference& d, const arma::mat& scipy) {
  EXPECT_TRUE(close(d.estimate, scipy(0))) << "estimate";
  EXPECT_TRUE(close(d.se, scipy(1))) << "standard error";
  EXPECT_TRUE(close(d.df, scipy(2))) << "degrees of freedom";
  EXPECT_EQ(d.confidence, scipy(3));
  EXPECT_TRUE(close(d.low, scipy(4))) << "low";
  EXPECT_TRUE(close(d.high, scipy(5))) << "high";
  EXPECT_TRUE(close(d.t, scipy(6))) << "t";
  EXPECT_TRUE(close(d.p, scipy(7))) << "p";
  EXPECT_TRUE(close(d.low, scipy(8), kSciPy)) << "SciPy's low";
  EXPECT_TRUE(close(d.high, scipy(9), kSciPy)) << "SciPy's high";
}

TEST(SciPy, SummaryIsNumpysMeanAndSpreadWithOneDegreeLess) {
  const stats::Summary s = stats::summarise(runs("x"));
  const arma::mat scipy = at("summary x");
  EXPECT_EQ(static_cast<double>(s.n), scipy(0));
  EXPECT_TRUE(close(s.mean, scipy(1)));
  EXPECT_TRUE(close(s.sd, scipy(2)));
}

TEST(SciPy, PooledSpreadOverThreeGroups) {
  const std::vector<stats::Summary> groups = {
      stats::summarise(runs("x")), stats::summarise(runs("y")), stats::summarise(runs("z"))};
  const stats::PooledSpread p = stats::pooled(groups);
  const arma::mat scipy = at("pooled x y z");
  EXPECT_TRUE(close(p.sd, scipy(0)));
  EXPECT_EQ(p.df, scipy(1));
}

TEST(SciPy, StudentTQuantileIsStatsTPpf) {
  const arma::mat rows = at("t_quantile");
  for (arma::uword r = 0; r < rows.n_rows; ++r) {
    const double ours = stats::t_quantile(rows(r, 0), rows(r, 1));
    EXPECT_TRUE(close(ours, rows(r, 2), kSciPy))
        << "SciPy: p " << rows(r, 0) << ", df " << rows(r, 1);
    EXPECT_TRUE(close(ours, rows(r, 3))) << "exact: p " << rows(r, 0) << ", df " << rows(r, 1);
  }
}

TEST(SciPy, PairedIsTtestRel) {
  expect_difference(stats::paired(runs("x"), runs("y"), 0.95), at("paired x y 0.95"));
}

TEST(SciPy, UnpairedIsTtestInd) {
  expect_difference(stats::unpaired(runs("x"), runs("z"), 0.95), at("unpaired x z 0.95"));
}

TEST(SciPy, WelchIsTtestIndWithUnequalVariances) {
  expect_difference(stats::welch(runs("x"), runs("z"), 0.99), at("welch x z 0.99"));
}

TEST(SciPy, SpreadPooledOverTheWholeExperiment) {
  const std::vector<stats::Summary> groups = {
      stats::summarise(runs("x")), stats::summarise(runs("y")), stats::summarise(runs("z"))};
  const stats::Difference d =
      stats::with_pooled_spread(groups[0], groups[2], stats::pooled(groups), 0.99375);
  expect_difference(d, at("pooled x z 0.99375"));
}

TEST(SciPy, ContrastOfThreeMeansWithThePooledSpread) {
  const std::vector<stats::Summary> groups = {
      stats::summarise(runs("x")), stats::summarise(runs("y")), stats::summarise(runs("z"))};
  const std::vector<double> weights = {2.0, -1.0, -1.0};
  const stats::Difference d = stats::contrast(groups, weights, stats::pooled(groups), 0.95);
  expect_difference(d, at("contrast x y z (2 -1 -1) 0.95"));
}

TEST(SciPy, EachChangeAgainstTheBaselineWithBonferroni) {
  const std::vector<arma::vec> changes = {runs("x"), runs("y")};
  const stats::AgainstBaseline result = stats::against_baseline(runs("z"), changes, 0.95);
  const arma::mat scipy = at("against z: x y 0.95");
  ASSERT_EQ(result.differences.size(), scipy.n_rows);
  EXPECT_EQ(result.each_confidence, 1.0 - 0.05 / 2.0);
  for (arma::uword r = 0; r < scipy.n_rows; ++r) {
    SCOPED_TRACE("change " + std::to_string(r));
    expect_difference(result.differences[r], scipy.row(r));
  }
}

TEST(SciPy, PowerIsTheNoncentralTsTwoTails) {
  const arma::mat rows = at("power");
  for (arma::uword r = 0; r < rows.n_rows; ++r) {
    const double ours = stats::power(rows(r, 0), rows(r, 1), rows(r, 2), rows(r, 3));
    EXPECT_TRUE(close(ours, rows(r, 4), kSciPy)) << "SciPy: row " << r;
    EXPECT_TRUE(close(ours, rows(r, 5)))
        << "exact: effect " << rows(r, 0) << ", se " << rows(r, 1) << ", df " << rows(r, 2);
  }
}

TEST(SciPy, MinimumDetectableEffectIsBrentqOnThePower) {
  const arma::mat rows = at("minimum detectable effect");
  for (arma::uword r = 0; r < rows.n_rows; ++r) {
    const double ours =
        stats::minimum_detectable_effect(rows(r, 0), rows(r, 1), rows(r, 2), rows(r, 3));
    EXPECT_TRUE(close(ours, rows(r, 4), kSciPy)) << "SciPy: row " << r;
    EXPECT_TRUE(close(ours, rows(r, 5)))
        << "exact: se " << rows(r, 0) << ", df " << rows(r, 1) << ", power " << rows(r, 3);
  }
}

TEST(SciPy, DesignsFloorWithBonferroni) {
  const arma::mat rows = at("design");
  for (arma::uword r = 0; r < rows.n_rows; ++r) {
    const stats::Design design{.changes = static_cast<std::size_t>(rows(r, 0)),
                               .change_seeds = static_cast<std::size_t>(rows(r, 1)),
                               .baseline_seeds = static_cast<std::size_t>(rows(r, 2)),
                               .family_confidence = rows(r, 3),
                               .power = rows(r, 4)};
    const double ours = stats::design_minimum_detectable_effect(design, rows(r, 5));
    EXPECT_TRUE(close(ours, rows(r, 6), kSciPy)) << "SciPy: design row " << r;
    EXPECT_TRUE(close(ours, rows(r, 7))) << "exact: design row " << r;
  }
}

}  // namespace
