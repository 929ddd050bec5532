/// \file
/// \brief The statistics of an experiment that trains models from several seeds and compares
///        them: a group's mean and spread, the spread pooled over groups, Student-t intervals
///        for a difference of means (paired and unpaired), Bonferroni's correction for \f$k\f$
///        comparisons, the power of a design and the smallest effect it can detect.
///
/// A run's number (bits per byte, say) is one draw from the distribution of runs of that
/// model; a different seed gives a different draw. An interval for a difference of means is a
/// range that, made the same way, contains the true difference in 95% of experiments (or
/// whatever confidence it is given): it says how large the difference could be, not only
/// whether it is zero. Every function here equals the exact number (mpmath at 40 digits) within
/// \f$10^{-12}\f$, and SciPy's (`scipy.stats.t`, `nct`, `ttest_rel`, `ttest_ind`) as closely as
/// SciPy itself computes it: its t and p within \f$10^{-12}\f$, its quantiles and noncentral t,
/// which are off by up to \f$3 \cdot 10^{-10}\f$, within \f$10^{-9}\f$
/// (tests/data/generate_stats_fixtures.py).
///
/// Notation: a group of \f$n\f$ runs \f$x_1 \dots x_n\f$ has the mean
/// \f$\bar x = \frac1n\sum_i x_i\f$ and the sample spread (standard deviation)
/// \f$s = \sqrt{\frac{1}{n-1}\sum_i (x_i - \bar x)^2}\f$; \f$T_\nu\f$ is the distribution
/// function of Student's t with \f$\nu\f$ degrees of freedom.
#pragma once

#include <armadillo>

#include <cstddef>
#include <span>
#include <vector>

namespace attn::stats {

/// \brief One group of runs: how many, their mean, their sample spread.
struct Summary {
  std::size_t n = 0;  ///< runs in the group.
  double mean = 0.0;  ///< \f$\bar x\f$.
  double sd = 0.0;    ///< \f$s\f$, with \f$n - 1\f$ in the denominator.
};

/// \brief The mean and sample spread of \p x.
/// \param x the runs' numbers, at least two, all finite.
/// \return the Summary. \throws attn::math::InputError if \p x has fewer than two numbers or
///         one that is NaN or infinite.
Summary summarise(const arma::vec& x);

/// \brief A spread pooled over several groups and its degrees of freedom:
///        \f$s_p = \sqrt{\sum_g (n_g - 1) s_g^2 / \sum_g (n_g - 1)}\f$, \f$\nu = \sum_g (n_g -
///        1)\f$.
///
/// It assumes that every group has the same true spread, and estimates that spread with the
/// degrees of freedom of all the groups together, as an analysis of variance does.
struct PooledSpread {
  double sd = 0.0;  ///< \f$s_p\f$.
  double df = 0.0;  ///< \f$\nu\f$.
};

/// \brief Pools the spreads of \p groups (each of at least two runs).
/// \param groups the groups' summaries. \return \f$s_p\f$ and \f$\nu\f$.
/// \throws attn::math::InputError if \p groups is empty or a group has fewer than two runs.
PooledSpread pooled(std::span<const Summary> groups);

/// \brief Student's t quantile: the \f$t\f$ with \f$T_\nu(t) = p\f$ (SciPy's `stats.t.ppf`).
/// \param p a probability in (0, 1). \param df \f$\nu > 0\f$.
/// \return the quantile. \throws attn::math::InputError for \p p or \p df out of range.
double t_quantile(double p, double df);

/// \brief A difference of two means, \f$d = \bar x - \bar y\f$, with its interval
///        \f$d \pm t_{1-\alpha/2,\,\nu}\,\mathrm{se}\f$ at confidence \f$1 - \alpha\f$ and its
///        two-sided test of "no difference": \f$t = d/\mathrm{se}\f$,
///        \f$p = 2\,(1 - T_\nu(|t|))\f$.
struct Difference {
  double estimate = 0.0;    ///< \f$d\f$.
  double se = 0.0;          ///< its standard error.
  double df = 0.0;          ///< \f$\nu\f$.
  double confidence = 0.0;  ///< \f$1 - \alpha\f$.
  double low = 0.0;         ///< \f$d - t_{1-\alpha/2,\,\nu}\,\mathrm{se}\f$.
  double high = 0.0;        ///< \f$d + t_{1-\alpha/2,\,\nu}\,\mathrm{se}\f$.
  double t = 0.0;           ///< \f$d / \mathrm{se}\f$.
  double p = 0.0;           ///< the two-sided p-value.
};

/// \brief Paired runs: \f$d_i = x_i - y_i\f$ (run \f$i\f$ of both shares its seed),
///        \f$\mathrm{se} = s_d/\sqrt n\f$, \f$\nu = n - 1\f$ (SciPy's `stats.ttest_rel`).
/// \param x,y the two groups, the same length \f$n \ge 2\f$, finite.
/// \param confidence of the interval, in (0, 1). \return the Difference.
/// \throws attn::math::ShapeError if the lengths differ, naming both; attn::math::InputError
///         for too few or non-finite numbers, a confidence out of range, or differences that
///         are all equal (no spread, so no interval).
Difference paired(const arma::vec& x, const arma::vec& y, double confidence);

/// \brief Independent groups with one spread: \f$\mathrm{se} = s_p\sqrt{1/n_x + 1/n_y}\f$,
///        \f$s_p\f$ pooled over the two, \f$\nu = n_x + n_y - 2\f$ (SciPy's
///        `stats.ttest_ind`).
/// \param x,y the groups, at least two runs each, finite. \param confidence in (0, 1).
/// \return the Difference. \throws attn::math::InputError as paired() does.
Difference unpaired(const arma::vec& x, const arma::vec& y, double confidence);

/// \brief Independent groups, each with its own spread (Welch):
///        \f$\mathrm{se}^2 = s_x^2/n_x + s_y^2/n_y\f$ and Welch–Satterthwaite's
///        \f$\nu = \mathrm{se}^4 / \bigl(\frac{(s_x^2/n_x)^2}{n_x-1} +
///        \frac{(s_y^2/n_y)^2}{n_y-1}\bigr)\f$ (SciPy's `stats.ttest_ind(..., equal_var=False)`).
/// \param x,y the groups. \param confidence in (0, 1). \return the Difference.
/// \throws attn::math::InputError as paired() does.
Difference welch(const arma::vec& x, const arma::vec& y, double confidence);

/// \brief Two groups of a larger experiment whose spread is pooled over all its groups:
///        \f$\mathrm{se} = s_p\sqrt{1/n_x + 1/n_y}\f$ with \p spread's \f$s_p\f$ and \f$\nu\f$.
///        With more groups in the pool, \f$\nu\f$ is larger and the interval narrower than
///        unpaired()'s.
/// \param x,y the two groups' summaries. \param spread pooled() over the experiment's groups.
/// \param confidence in (0, 1). \return the Difference.
/// \throws attn::math::InputError for a confidence out of range or a spread that is not
///         positive and finite.
Difference with_pooled_spread(const Summary& x, const Summary& y, const PooledSpread& spread,
                              double confidence);

/// \brief A contrast of group means, \f$c = \sum_g w_g \bar x_g\f$ with
///        \f$\sum_g w_g = 0\f$, and its interval with the spread pooled over the experiment:
///        \f$\mathrm{se} = s_p\sqrt{\sum_g w_g^2 / n_g}\f$. with_pooled_spread() is the contrast
///        \f$(1, -1)\f$; chapter 12 asks with \f$(1, -1, -1, -1, -1, -1, 4)\f$ whether five
///        changes made together gain more than the sum of their gains made alone.
/// \param groups the groups' summaries. \param weights one per group, summing to 0.
/// \param spread pooled() over the experiment's groups. \param confidence in (0, 1).
/// \return the Difference. \throws attn::math::ShapeError if there is not one weight per group,
///         naming both counts; attn::math::InputError if the weights do not sum to 0 (within
///         \f$10^{-12}\f$ of their size), are all 0 or not finite, or as with_pooled_spread().
Difference contrast(std::span<const Summary> groups, std::span<const double> weights,
                    const PooledSpread& spread, double confidence);

/// \brief Bonferroni's correction: the confidence each of \p comparisons intervals needs so that
///        all of them hold at once with probability at least \p family_confidence:
///        \f$1 - (1 - c)/k\f$. (The chance that any one misses is at most the sum of the
///        chances that each misses.)
/// \param family_confidence \f$c\f$ in (0, 1). \param comparisons \f$k \ge 1\f$.
/// \return each interval's confidence. \throws attn::math::InputError for either out of range.
double bonferroni_confidence(double family_confidence, std::size_t comparisons);

/// \brief Where an interval for a difference \f$x - y\f$ lies: wholly below 0 (\f$x\f$ is
///        smaller, with the interval's confidence), wholly above, or around 0, where the
///        experiment cannot tell the difference from none.
enum class Finding {
  lower,           ///< high < 0.
  higher,          ///< low > 0.
  not_detectable,  ///< the interval holds 0.
};

/// \brief What \p difference's interval supports. \param difference the interval.
/// \return Finding::lower, Finding::higher or Finding::not_detectable.
Finding finding(const Difference& difference);

/// \brief Several changes, each measured against one baseline, as an analysis of variance
///        reads them: the spread pooled over all \f$k + 1\f$ groups, and each change's
///        difference from the baseline with Bonferroni's interval at
///        bonferroni_confidence(\p family_confidence, \f$k\f$), so that all \f$k\f$ intervals
///        hold at once with probability at least \p family_confidence.
///
/// Bonferroni, rather than Holm or Dunnett: Holm's step-down procedure tests, but gives no
/// intervals; Dunnett's exact critical value for comparisons that share a baseline needs the
/// multivariate t distribution, which Boost does not have. Bonferroni's intervals hold whatever
/// the comparisons share, and with \f$k = 8\f$ they are only a little wider than Dunnett's
/// (tests/lib/stats/simulation_test.cpp measures the family's error rate: just under 5%).
struct AgainstBaseline {
  PooledSpread spread;                  ///< over the baseline and every change.
  double each_confidence = 0.0;         ///< each interval's, after the correction.
  std::vector<Difference> differences;  ///< change minus baseline, in the changes' order.
};

/// \brief Compares each of \p changes with \p baseline. \param baseline its runs, at least two.
/// \param changes each change's runs, at least two each. \param family_confidence in (0, 1).
/// \return the pooled spread and the \f$k\f$ intervals.
/// \throws attn::math::InputError if there is no change, or as summarise() and
///         with_pooled_spread() do (the group is named).
AgainstBaseline against_baseline(const arma::vec& baseline, std::span<const arma::vec> changes,
                                 double family_confidence);

/// \brief The power of the two-sided t test at level \f$\alpha\f$: the chance that it finds a
///        true difference \f$\delta\f$ whose estimate has standard error \f$\mathrm{se}\f$ and
///        \f$\nu\f$ degrees of freedom. With \f$c = t_{1-\alpha/2,\,\nu}\f$ and
///        \f$T'\f$ noncentral t with \f$\nu\f$ degrees of freedom and noncentrality
///        \f$\delta/\mathrm{se}\f$: \f$P(T' > c) + P(T' < -c)\f$ (SciPy's `stats.nct`).
/// \param effect \f$\delta\f$. \param se the standard error. \param df \f$\nu\f$.
/// \param alpha the test's level, in (0, 1). \return the power.
/// \throws attn::math::InputError for arguments out of range.
double power(double effect, double se, double df, double alpha);

/// \brief The smallest true difference that the test of power() finds with probability
///        \p target: the \f$\delta > 0\f$ with power(\f$\delta\f$) = \p target.
/// \param se the standard error. \param df \f$\nu\f$. \param alpha the test's level.
/// \param target the power wanted, in (\f$\alpha\f$, 1). \return \f$\delta\f$.
/// \throws attn::math::InputError for arguments out of range.
double minimum_detectable_effect(double se, double df, double alpha, double target);

/// \brief An experiment that compares \p changes variants with one baseline: each variant run
///        from \p change_seeds seeds, the baseline from \p baseline_seeds, the spread pooled over
///        all \f$k + 1\f$ groups, and each difference's interval corrected by Bonferroni for the
///        \f$k\f$ comparisons, so that all \f$k\f$ hold at once with \p family_confidence.
struct Design {
  std::size_t changes = 0;          ///< \f$k\f$, the comparisons.
  std::size_t change_seeds = 0;     ///< \f$n_c\f$, runs of each variant.
  std::size_t baseline_seeds = 0;   ///< \f$n_b\f$, runs of the baseline.
  double family_confidence = 0.95;  ///< that all \f$k\f$ intervals hold at once.
  double power = 0.8;               ///< for the smallest detectable effect.
};

/// \brief The standard error of one variant's difference from the baseline in \p design, for a
///        true spread \f$\sigma\f$ of one run: \f$\sigma\sqrt{1/n_c + 1/n_b}\f$.
/// \param design the experiment. \param sd \f$\sigma\f$. \return the standard error.
/// \throws attn::math::InputError if \p design has no change, fewer than two seeds per group,
///         or \p sd is not positive and finite.
double design_se(const Design& design, double sd);

/// \brief The degrees of freedom of \p design's pooled spread: \f$k(n_c - 1) + (n_b - 1)\f$.
/// \param design the experiment. \return \f$\nu\f$. \throws as design_se().
double design_df(const Design& design);

/// \brief The smallest true difference \p design finds with its power, after the correction:
///        minimum_detectable_effect() at design_se(), design_df() and
///        \f$\alpha = (1 - c)/k\f$ per comparison.
/// \param design the experiment. \param sd \f$\sigma\f$, one run's spread.
/// \return the difference, in the runs' unit. \throws as design_se().
double design_minimum_detectable_effect(const Design& design, double sd);

/// \brief The fewest seeds per variant, with the baseline given \p baseline_per_change times as
///        many, for which \p design detects \p effect: the smallest \f$n_c \ge 2\f$ whose
///        design_minimum_detectable_effect() is at most \p effect.
/// \param design the experiment (its seed counts are ignored). \param sd \f$\sigma\f$.
/// \param effect the difference to detect, positive. \param baseline_per_change
///        \f$n_b / n_c\f$, at least 1. \return the Design with those counts.
/// \throws attn::math::InputError for arguments out of range, or if no design of up to 10,000
///         seeds per variant detects \p effect.
Design seeds_needed(Design design, double sd, double effect, std::size_t baseline_per_change);

}  // namespace attn::stats
