#include <attn/math/validate.hpp>
#include <attn/stats/experiment.hpp>

#include <fmt/format.h>
#include <boost/math/distributions/non_central_t.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <boost/math/tools/roots.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>

namespace attn::stats {
namespace {

using math::InputError;

void require_probability(std::string_view what, double p) {
  if (!(p > 0.0 && p < 1.0))
    throw InputError(fmt::format("{} must lie strictly between 0 and 1, not {}", what, p));
}

void require_positive(std::string_view what, double value) {
  if (!(value > 0.0 && std::isfinite(value)))
    throw InputError(fmt::format("{} must be positive and finite, not {}", what, value));
}

void require_runs(std::string_view what, const arma::vec& x) {
  if (x.n_elem < 2)
    throw InputError(fmt::format("{}: needs at least two runs, not {}", what, x.n_elem));
  math::require_finite(what, arma::mat(x));
}

// d ± t_{1-α/2, ν} se, t = d / se, p = 2 (1 - T_ν(|t|)).
Difference interval(double estimate, double se, double df, double confidence) {
  if (!(se > 0.0))
    throw InputError(
        "a difference whose runs do not vary has no interval: its standard error is 0");
  const boost::math::students_t t_distribution(df);
  const double t = estimate / se;
  const double reach = boost::math::quantile(t_distribution, 0.5 + confidence / 2.0) * se;
  return {.estimate = estimate,
          .se = se,
          .df = df,
          .confidence = confidence,
          .low = estimate - reach,
          .high = estimate + reach,
          .t = t,
          .p = 2.0 * boost::math::cdf(boost::math::complement(t_distribution, std::abs(t)))};
}

}  // namespace

Summary summarise(const arma::vec& x) {
  require_runs("summarise", x);
  return {.n = x.n_elem, .mean = arma::mean(x), .sd = arma::stddev(x)};  // stddev: n - 1
}

PooledSpread pooled(std::span<const Summary> groups) {
  if (groups.empty())
    throw InputError("pooled: needs at least one group");
  double squares = 0.0;  // Σ (n_g - 1) s_g²
  double df = 0.0;       // Σ (n_g - 1)
  for (const Summary& g : groups) {
    if (g.n < 2)
      throw InputError(fmt::format("pooled: a group of {} run has no spread", g.n));
    const auto free = static_cast<double>(g.n - 1);
    squares += free * g.sd * g.sd;
    df += free;
  }
  return {.sd = std::sqrt(squares / df), .df = df};
}

double t_quantile(double p, double df) {
  require_probability("t_quantile: p", p);
  require_positive("t_quantile: the degrees of freedom", df);
  return boost::math::quantile(boost::math::students_t(df), p);
}

Difference paired(const arma::vec& x, const arma::vec& y, double confidence) {
  if (x.n_elem != y.n_elem)
    throw math::ShapeError(
        fmt::format("paired: x has {} runs and y {}; each run of x needs its "
                    "partner in y",
                    x.n_elem, y.n_elem));
  require_runs("paired: x", x);
  require_runs("paired: y", y);
  require_probability("paired: the confidence", confidence);
  const Summary d = summarise(x - y);
  const auto n = static_cast<double>(d.n);
  return interval(d.mean, d.sd / std::sqrt(n), n - 1.0, confidence);
}

Difference unpaired(const arma::vec& x, const arma::vec& y, double confidence) {
  require_runs("unpaired: x", x);
  require_runs("unpaired: y", y);
  require_probability("unpaired: the confidence", confidence);
  const Summary groups[] = {summarise(x), summarise(y)};
  return with_pooled_spread(groups[0], groups[1], pooled(groups), confidence);
}

Difference welch(const arma::vec& x, const arma::vec& y, double confidence) {
  require_runs("welch: x", x);
  require_runs("welch: y", y);
  require_probability("welch: the confidence", confidence);
  const Summary sx = summarise(x);
  const Summary sy = summarise(y);
  const double vx = sx.sd * sx.sd / static_cast<double>(sx.n);  // s_x² / n_x
  const double vy = sy.sd * sy.sd / static_cast<double>(sy.n);
  const double variance = vx + vy;
  const double df =
      variance * variance /
      (vx * vx / static_cast<double>(sx.n - 1) + vy * vy / static_cast<double>(sy.n - 1));
  return interval(sx.mean - sy.mean, std::sqrt(variance), df, confidence);
}

Difference with_pooled_spread(const Summary& x, const Summary& y, const PooledSpread& spread,
                              double confidence) {
  require_probability("with_pooled_spread: the confidence", confidence);
  require_positive("with_pooled_spread: the pooled spread", spread.sd);
  require_positive("with_pooled_spread: the degrees of freedom", spread.df);
  if (x.n < 1 || y.n < 1)
    throw InputError("with_pooled_spread: each group needs at least one run");
  const double se =
      spread.sd * std::sqrt(1.0 / static_cast<double>(x.n) + 1.0 / static_cast<double>(y.n));
  return interval(x.mean - y.mean, se, spread.df, confidence);
}

Difference contrast(std::span<const Summary> groups, std::span<const double> weights,
                    const PooledSpread& spread, double confidence) {
  if (weights.size() != groups.size())
    throw math::ShapeError(fmt::format("contrast: {} weights for {} groups; each group needs one",
                                       weights.size(), groups.size()));
  require_probability("contrast: the confidence", confidence);
  require_positive("contrast: the pooled spread", spread.sd);
  require_positive("contrast: the degrees of freedom", spread.df);
  double estimate = 0.0;  // Σ w_g x̄_g
  double squares = 0.0;   // Σ w_g² / n_g
  double total = 0.0;     // Σ w_g, which must be 0
  double size = 0.0;      // Σ |w_g|, what "0" is measured against
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const double w = weights[g];
    math::require_finite("contrast: a weight", w);
    if (groups[g].n < 1)
      throw InputError(fmt::format("contrast: group {} has no run", g));
    estimate += w * groups[g].mean;
    squares += w * w / static_cast<double>(groups[g].n);
    total += w;
    size += std::abs(w);
  }
  if (size == 0.0)
    throw InputError("contrast: every weight is 0, so the contrast compares nothing");
  if (std::abs(total) > 1e-12 * size)
    throw InputError(
        fmt::format("contrast: the weights sum to {}, not 0, so the contrast would "
                    "move with the level of every group",
                    total));
  return interval(estimate, spread.sd * std::sqrt(squares), spread.df, confidence);
}

Finding finding(const Difference& difference) {
  if (difference.high < 0.0)
    return Finding::lower;
  if (difference.low > 0.0)
    return Finding::higher;
  return Finding::not_detectable;
}

AgainstBaseline against_baseline(const arma::vec& baseline, std::span<const arma::vec> changes,
                                 double family_confidence) {
  if (changes.empty())
    throw InputError("against_baseline: there is no change to compare with the baseline");
  require_runs("against_baseline: the baseline", baseline);
  std::vector<Summary> groups = {summarise(baseline)};
  for (std::size_t k = 0; k < changes.size(); ++k) {
    require_runs(fmt::format("against_baseline: change {}", k), changes[k]);
    groups.push_back(summarise(changes[k]));
  }
  AgainstBaseline result;
  result.spread = pooled(groups);
  result.each_confidence = bonferroni_confidence(family_confidence, changes.size());
  for (std::size_t k = 1; k < groups.size(); ++k)
    result.differences.push_back(
        with_pooled_spread(groups[k], groups[0], result.spread, result.each_confidence));
  return result;
}

double bonferroni_confidence(double family_confidence, std::size_t comparisons) {
  require_probability("bonferroni_confidence: the family's confidence", family_confidence);
  if (comparisons < 1)
    throw InputError("bonferroni_confidence: needs at least one comparison");
  return 1.0 - (1.0 - family_confidence) / static_cast<double>(comparisons);
}

double power(double effect, double se, double df, double alpha) {
  math::require_finite("power: the effect", effect);
  require_positive("power: the standard error", se);
  require_positive("power: the degrees of freedom", df);
  require_probability("power: alpha", alpha);
  const double critical = boost::math::quantile(boost::math::students_t(df), 1.0 - alpha / 2.0);
  const boost::math::non_central_t shifted(df, effect / se);
  return boost::math::cdf(boost::math::complement(shifted, critical)) +
         boost::math::cdf(shifted, -critical);
}

double minimum_detectable_effect(double se, double df, double alpha, double target) {
  require_positive("minimum_detectable_effect: the standard error", se);
  require_positive("minimum_detectable_effect: the degrees of freedom", df);
  require_probability("minimum_detectable_effect: alpha", alpha);
  require_probability("minimum_detectable_effect: the power", target);
  if (!(target > alpha))
    throw InputError(
        fmt::format("minimum_detectable_effect: a power of {} is no more than the "
                    "test's level {}, which a difference of 0 already has",
                    target, alpha));
  // power() rises from alpha at a difference of 0 towards 1: the root lies between 0 and any
  // difference whose power is above the target.
  double upper = 8.0 * se;
  while (power(upper, se, df, alpha) < target)
    upper *= 2.0;
  const auto gap = [&](double effect) {
    return power(effect, se, df, alpha) - target;
  };
  std::uintmax_t iterations = 200;
  const auto [low, high] = boost::math::tools::toms748_solve(
      gap, 0.0, upper, boost::math::tools::eps_tolerance<double>(52), iterations);
  return (low + high) / 2.0;
}

namespace {
void require_design(std::string_view what, const Design& design) {
  if (design.changes < 1)
    throw InputError(fmt::format("{}: the design compares no change", what));
  if (design.change_seeds < 2 || design.baseline_seeds < 2)
    throw InputError(
        fmt::format("{}: every group needs at least two seeds, not {} per change "
                    "and {} for the baseline",
                    what, design.change_seeds, design.baseline_seeds));
  require_probability(fmt::format("{}: the family's confidence", what), design.family_confidence);
  require_probability(fmt::format("{}: the power", what), design.power);
}
}  // namespace

double design_se(const Design& design, double sd) {
  require_design("design_se", design);
  require_positive("design_se: the spread of one run", sd);
  return sd * std::sqrt(1.0 / static_cast<double>(design.change_seeds) +
                        1.0 / static_cast<double>(design.baseline_seeds));
}

double design_df(const Design& design) {
  require_design("design_df", design);
  return static_cast<double>(design.changes * (design.change_seeds - 1) +
                             (design.baseline_seeds - 1));
}

double design_minimum_detectable_effect(const Design& design, double sd) {
  const double alpha =
      1.0 - bonferroni_confidence(design.family_confidence, design.changes);  // per comparison
  return minimum_detectable_effect(design_se(design, sd), design_df(design), alpha, design.power);
}

Design seeds_needed(Design design, double sd, double effect, std::size_t baseline_per_change) {
  require_positive("seeds_needed: the effect", effect);
  if (baseline_per_change < 1)
    throw InputError("seeds_needed: the baseline needs at least as many seeds as each change");
  const std::size_t most = 10000;
  for (std::size_t n = 2; n <= most; ++n) {
    design.change_seeds = n;
    design.baseline_seeds = n * baseline_per_change;
    if (design_minimum_detectable_effect(design, sd) <= effect)
      return design;
  }
  throw InputError(
      fmt::format("seeds_needed: no design of up to {} seeds per change detects {} "
                  "at a spread of {}",
                  most, effect, sd));
}

}  // namespace attn::stats
