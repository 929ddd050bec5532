// attn::stats refuses what has no answer, naming it: too few runs, NaN or infinite numbers,
// groups of different lengths where runs are paired, probabilities outside (0, 1), runs that
// do not vary, designs without seeds enough.
#include "bad_input.hpp"
#include <attn/math/validate.hpp>
#include <attn/stats/experiment.hpp>

#include <gtest/gtest.h>

#include <vector>

namespace {

namespace stats = attn::stats;
using attn::math::InputError;
using attn::math::ShapeError;
using attn_bad_input::kInf;
using attn_bad_input::kNaN;
using attn_bad_input::ThrowsNaming;

const arma::vec kRuns = {1.90, 1.93, 1.91, 1.95};

TEST(BadInput, TooFewRunsHaveNoSpread) {
  EXPECT_TRUE(ThrowsNaming<InputError>([] { stats::summarise(arma::vec{1.9}); }, "at least two"));
  EXPECT_TRUE(ThrowsNaming<InputError>([] { stats::summarise(arma::vec()); }, "not 0"));
  const std::vector<stats::Summary> one = {{.n = 1, .mean = 1.9, .sd = 0.0}};
  EXPECT_TRUE(ThrowsNaming<InputError>([&] { stats::pooled(one); }, "a group of 1 run"));
  EXPECT_TRUE(ThrowsNaming<InputError>([] { stats::pooled({}); }, "at least one group"));
}

TEST(BadInput, NaNAndInfinityAreRefused) {
  EXPECT_TRUE(ThrowsNaming<InputError>(
      [] {
        stats::summarise(arma::vec{1.9, kNaN});
      },
      "non-finite entry nan at row 1"));
  EXPECT_TRUE(ThrowsNaming<InputError>(
      [] {
        stats::unpaired(kRuns, arma::vec{1.9, kInf}, 0.95);
      },
      "unpaired: y"));
  EXPECT_TRUE(ThrowsNaming<InputError>([] { stats::power(kNaN, 0.01, 5, 0.05); }, "effect"));
}

TEST(BadInput, PairedRunsNeedAPartnerEach) {
  EXPECT_TRUE(ThrowsNaming<ShapeError>(
      [] {
        stats::paired(kRuns, arma::vec{1.9, 1.92, 1.93}, 0.95);
      },
      "x has 4 runs and y 3"));
}

TEST(BadInput, RunsThatDoNotVaryHaveNoInterval) {
  EXPECT_TRUE(ThrowsNaming<InputError>([] { stats::paired(kRuns, kRuns - 0.01, 0.95); },
                                       "standard error is 0"));
}

TEST(BadInput, ProbabilitiesLieBetweenZeroAndOne) {
  EXPECT_TRUE(ThrowsNaming<InputError>([] { stats::t_quantile(1.0, 5); }, "t_quantile: p"));
  EXPECT_TRUE(ThrowsNaming<InputError>([] { stats::t_quantile(0.5, 0); }, "degrees of freedom"));
  EXPECT_TRUE(ThrowsNaming<InputError>([] { stats::welch(kRuns, kRuns + 0.1, 95); }, "confidence"));
  EXPECT_TRUE(ThrowsNaming<InputError>([] { stats::bonferroni_confidence(0.95, 0); },
                                       "at least one comparison"));
  EXPECT_TRUE(ThrowsNaming<InputError>(
      [] { stats::minimum_detectable_effect(0.01, 10, 0.05, 0.04); }, "no more than the test's"));
}

TEST(BadInput, ADesignNeedsChangesAndSeeds) {
  EXPECT_TRUE(ThrowsNaming<InputError>(
      [] { stats::design_se({.changes = 0, .change_seeds = 3, .baseline_seeds = 3}, 0.01); },
      "no change"));
  EXPECT_TRUE(ThrowsNaming<InputError>(
      [] { stats::design_df({.changes = 8, .change_seeds = 1, .baseline_seeds = 3}); },
      "not 1 per change"));
  EXPECT_TRUE(ThrowsNaming<InputError>(
      [] { stats::design_se({.changes = 8, .change_seeds = 2, .baseline_seeds = 2}, -1.0); },
      "spread of one run"));
  EXPECT_TRUE(ThrowsNaming<InputError>([] { stats::seeds_needed({.changes = 8}, 1.0, 1e-9, 2); },
                                       "no design of up to"));
}

TEST(BadInput, AContrastNeedsAWeightPerGroupSummingToZero) {
  const std::vector<stats::Summary> groups = {stats::summarise(kRuns), stats::summarise(kRuns)};
  const stats::PooledSpread spread = stats::pooled(groups);
  const std::vector<double> three = {1.0, -1.0, 0.0};
  EXPECT_TRUE(ThrowsNaming<ShapeError>([&] { stats::contrast(groups, three, spread, 0.95); },
                                       "3 weights for 2 groups"));
  const std::vector<double> uneven = {1.0, -0.5};
  EXPECT_TRUE(ThrowsNaming<InputError>([&] { stats::contrast(groups, uneven, spread, 0.95); },
                                       "sum to 0.5, not 0"));
  const std::vector<double> none = {0.0, 0.0};
  EXPECT_TRUE(ThrowsNaming<InputError>([&] { stats::contrast(groups, none, spread, 0.95); },
                                       "every weight is 0"));
  const std::vector<double> nan = {kNaN, 1.0};
  EXPECT_TRUE(ThrowsNaming<InputError>([&] { stats::contrast(groups, nan, spread, 0.95); },
                                       "weight is nan"));
}

TEST(BadInput, AgainstABaselineNeedsAChangeAndRunsInEveryGroup) {
  EXPECT_TRUE(ThrowsNaming<InputError>([] { stats::against_baseline(kRuns, {}, 0.95); },
                                       "no change to compare"));
  const std::vector<arma::vec> changes = {kRuns, arma::vec{1.9}};
  EXPECT_TRUE(ThrowsNaming<InputError>([&] { stats::against_baseline(kRuns, changes, 0.95); },
                                       "change 1: needs at least two runs"));
}

TEST(Finding, IsWhereTheIntervalLiesAgainstZero) {
  stats::Difference d{.low = -0.03, .high = -0.01};
  EXPECT_EQ(stats::finding(d), stats::Finding::lower);
  d = {.low = 0.002, .high = 0.04};
  EXPECT_EQ(stats::finding(d), stats::Finding::higher);
  d = {.low = -0.02, .high = 0.0};  // an end at 0 does not leave 0 out
  EXPECT_EQ(stats::finding(d), stats::Finding::not_detectable);
}

TEST(SeedsNeeded, IsTheFewestThatDetectTheEffect) {
  const stats::Design found = stats::seeds_needed({.changes = 8}, 0.014, 0.03, 2);
  EXPECT_EQ(found.baseline_seeds, 2 * found.change_seeds);
  EXPECT_LE(stats::design_minimum_detectable_effect(found, 0.014), 0.03);
  stats::Design fewer = found;
  fewer.change_seeds -= 1;
  fewer.baseline_seeds = 2 * fewer.change_seeds;
  EXPECT_GT(stats::design_minimum_detectable_effect(fewer, 0.014), 0.03);
}

}  // namespace
