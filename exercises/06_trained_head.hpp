/// \file
/// \brief Chapter 06's exercises: one Adam step, and the loss a trained head learns from.
#pragma once

#include <armadillo>

namespace attn::exercises {

/// \brief What Adam remembers about one parameter matrix from one step to the next
///        (exercise 6.1).
///
/// A default-constructed AdamMoments is the state before the first step: `m` and `v` empty,
/// which adam_update() reads as zeros of the parameter's shape, and `t` = 0. Keep one per
/// parameter matrix and pass it to every step of that matrix.
struct AdamMoments {
  arma::mat m;  ///< \f$m\f$, the running mean of the gradients, without bias correction.
  arma::mat v;  ///< \f$v\f$, the running mean of the squared gradients, without bias correction.
  int t = 0;    ///< the number of steps taken so far.
};

/// \brief Exercise 6.1: one Adam step on one parameter matrix.
///
/// Move \p theta one step against its \p gradient \f$g\f$ the way Adam does, and update
/// \p moments for the next call: count the step, \f$t \leftarrow t + 1\f$; update the running
/// means entry by entry, \f$m \leftarrow \beta_1 m + (1-\beta_1) g\f$ and
/// \f$v \leftarrow \beta_2 v + (1-\beta_2) g^2\f$; then step with the bias-corrected means,
/// \f$\theta \leftarrow \theta - \eta\, \hat m / (\sqrt{\hat v} + \epsilon)\f$, where
/// \f$\hat m = m / (1-\beta_1^t)\f$ and \f$\hat v = v / (1-\beta_2^t)\f$. Empty moments (a fresh
/// AdamMoments) stand for zeros of \p theta's shape. A \p gradient whose shape is not \p theta's
/// must throw std::invalid_argument. The test checks that a first step moves every entry by
/// about the learning rate \f$\eta\f$ (chapter 06 trains with 0.05) against the sign of its
/// gradient, that several steps land where the library's attn::math::AdamW does with no decay, that
/// a zero gradient leaves \p theta where it is, and that \p moments keeps \f$m\f$ and \f$v\f$
/// themselves (the corrections go into the step only).
///
/// \param theta a parameter matrix, updated in place. \param gradient \f$g\f$, theta's shape.
/// \param moments Adam's memory for this matrix, updated in place.
/// \param learning_rate \f$\eta\f$. \param beta1 \f$\beta_1\f$. \param beta2 \f$\beta_2\f$.
/// \param epsilon \f$\epsilon\f$.
///
/// \par Hint
/// Everything here is entry by entry: in Armadillo `%` multiplies two matrices entry by entry,
/// and arma::square and arma::sqrt act on every entry. On the first step the corrections give
/// \f$\hat m = g\f$ and \f$\hat v = g^2\f$, so the step is \f$\eta\, g / (|g| + \epsilon)\f$,
/// about \f$\eta\f$ however large or small the gradient is; without them \f$m\f$ would start at
/// a tenth of the gradient. Add \f$\epsilon\f$ after taking the square root, as the formula
/// does (attn::math::AdamW too); it is what keeps a zero gradient from dividing 0 by 0.
void adam_update(arma::mat& theta, const arma::mat& gradient, AdamMoments& moments,
                 double learning_rate, double beta1 = 0.9, double beta2 = 0.999,
                 double epsilon = 1e-8);

/// \brief One query's loss and its gradient with respect to the query's scores (exercise 6.2).
struct TargetLoss {
  double loss = 0.0;     ///< \f$L = -\log \mathrm{softmax}(s)_t\f$.
  arma::rowvec dscores;  ///< \f$\partial L / \partial s\f$, one entry per score.
};

/// \brief Exercise 6.2: the loss that trains the head, for one query.
///
/// Chapter 06 rewards weight on the target: with the weights \f$w = \mathrm{softmax}(s)\f$ of one
/// query's row of \p scores and \f$t\f$ = \p target, return the loss \f$L = -\log w_t\f$ and, in
/// `dscores`, its gradient with respect to every score, \f$\partial L / \partial s_j = w_j -
/// [j = t]\f$ (the weights minus a one-hot row). The test gives scores whose softmax puts 0.61 on
/// the target, the weight "it" gives "cat" after training, and expects \f$L = -\ln 0.61\f$; it
/// compares `dscores` with finite differences of your loss, gives scores of plus and minus 1000,
/// where the loss and its gradient must stay finite, and expects std::out_of_range for a
/// \p target that is not an entry of the row.
///
/// \param scores one query's scores `(1 × m)`. \param target the index \f$t\f$ of the key to
/// reward. \return \f$L\f$ and \f$\partial L / \partial s\f$ `(1 × m)`.
///
/// \par Hint
/// Do not take the logarithm of a weight that may have underflowed to 0. Written out,
/// \f$-\log w_t = \log \sum_k e^{s_k} - s_t\f$, and the log of that sum is safe once the largest
/// score is taken out of every exponent, as in exercise 1.1. The same form gives the gradient:
/// the derivative of \f$\log \sum_k e^{s_k}\f$ with respect to \f$s_j\f$ is
/// \f$e^{s_j} / \sum_k e^{s_k}\f$, which is a weight, and \f$-s_t\f$ adds its one only at the
/// target.
TargetLoss target_loss(const arma::rowvec& scores, arma::uword target);

}  // namespace attn::exercises
