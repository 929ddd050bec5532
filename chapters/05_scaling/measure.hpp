/// \file
/// \brief Measuring what the \f$1/\sqrt{d_k}\f$ scale does: how far dot products spread, and
///        how decided (saturated) a softmax row is. Chapter 05 tabulates these.
#pragma once

#include <armadillo>

#include <vector>

/// \brief Chapter 05's own material: measurements of what the 1/√d_k scale changes.
namespace attn::ch05 {

/// \brief How far a sample of dot products \f$q \cdot k\f$ spreads around 0.
struct Spread {
  /// \f$\mathrm{Var}(q \cdot k)\f$, dividing by the sample size (as numpy's `var` does).
  double variance = 0.0;
  double mean_abs = 0.0;  ///< \f$\overline{|q \cdot k|}\f$: the typical size of one score.
};

/// \brief The spread of one dot product per pair of rows:
///
/// \f[ d_p = q_p \cdot k_p, \qquad \mathrm{Var} = \frac{1}{P} \sum_p (d_p - \bar d)^2, \qquad
///     \overline{|d|} = \frac{1}{P} \sum_p |d_p| \f]
///
/// For entries drawn independently from \f$N(0, 1)\f$ the variance is \f$d_k\f$, so the scaled
/// score \f$q \cdot k / \sqrt{d_k}\f$ has variance 1 whatever the width.
/// \param q queries `(P × d_k)`, one per pair. \param k keys `(P × d_k)`, one per pair.
/// \return the variance and the mean absolute value of the `P` dot products.
/// \throws ShapeError unless \p q and \p k have the same shape; InputError if they are empty
///         or not finite.
Spread measure_spread(const arma::mat& q, const arma::mat& k);

/// \brief How decided one row of softmax weights is.
struct Sharpness {
  double max_weight = 0.0;  ///< \f$\max_j w_j\f$: 1 for a one-hot pick, \f$1/m\f$ for uniform.
  /// \f$-\sum_j w_j \ln w_j\f$ in nats: 0 for a one-hot pick, \f$\ln m\f$ for uniform.
  double entropy = 0.0;
  double jacobian_norm = 0.0;  ///< \f$\lVert J \rVert_F\f$: how much gradient reaches the scores.
};

/// \brief The sharpness of \f$w = \mathrm{softmax}(s)\f$:
///
/// \f[ \max_j w_j, \qquad H = -\sum_{j:\,w_j > 0} w_j \ln w_j, \qquad
///     \lVert J \rVert_F, \quad J = \mathrm{diag}(w) - w^\top w \f]
///
/// Every gradient on its way from the weights back to the scores is multiplied by \f$J\f$, so a
/// small \f$\lVert J \rVert_F\f$ means little of it reaches the scores. What reaches \f$W_Q\f$
/// and \f$W_K\f$ is that times the keys and the scale (chapter 05).
/// A weight that underflows to 0 adds nothing to \f$H\f$ (\f$0 \ln 0 = 0\f$).
/// \param scores `s: (1 × m)`, finite, non-empty.
/// \return the largest weight, the entropy and the Frobenius norm of the Jacobian.
/// \throws InputError if \p scores is empty or holds a NaN or an infinity.
Sharpness sharpness(const arma::rowvec& scores);

/// \brief One query and the keys it is scored against.
struct Probe {
  arma::rowvec q;  ///< `(1 × d_k)`
  arma::mat K;     ///< `(m × d_k)`
};

/// \brief Sharpness without and with the scale, each averaged over the probes.
struct Saturation {
  Sharpness unscaled;  ///< of \f$\mathrm{softmax}(q K^\top)\f$.
  Sharpness scaled;    ///< of \f$\mathrm{softmax}(q K^\top / \sqrt{d_k})\f$.
};

/// \brief The mean sharpness of the softmax of every probe's scores, unscaled and scaled:
///
/// \f[ \frac{1}{T} \sum_t \mathrm{sharpness}\big(q_t K_t^\top\big), \qquad
///     \frac{1}{T} \sum_t \mathrm{sharpness}\big(c\, q_t K_t^\top\big), \qquad
///     c = \frac{1}{\sqrt{d_k}} \f]
///
/// \param probes `T` queries `(1 × d_k)` with their keys `(m × d_k)`; all share one \f$d_k\f$.
/// \return the two means.
/// \throws InputError if \p probes is empty, or a query or its keys are empty or hold a NaN
///         or an infinity (named `Q` and `K`).
/// \throws ShapeError if a query and its keys differ in width.
Saturation measure_saturation(const std::vector<Probe>& probes);

}  // namespace attn::ch05
