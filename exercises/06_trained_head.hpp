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

void adam_update(arma::mat& theta, const arma::mat& gradient, AdamMoments& moments,
                 double learning_rate, double beta1 = 0.9, double beta2 = 0.999,
                 double epsilon = 1e-8);

/// \brief One query's loss and its gradient with respect to the query's scores (exercise 6.2).
struct TargetLoss {
  double loss = 0.0;     ///< \f$L = -\log \mathrm{softmax}(s)_t\f$.
  arma::rowvec dscores;  ///< \f$\partial L / \partial s\f$, one entry per score.
};

TargetLoss target_loss(const arma::rowvec& scores, arma::uword target);

}  // namespace attn::exercises
