/// \file
/// \brief Softmax and cross-entropy over the vocabulary in `float`, one column a token: the
///        fast form of attn::math::cross_entropy(), which is one row a token and in double.
#pragma once

#include <armadillo>

namespace attn::fast {

/// \brief Each token's cost, \f$-\ln \mathrm{softmax}(z)_t = \ln \sum_k e^{z_k - m} + m - z_t\f$
///        with \f$m = \max_k z_k\f$, one pass per token; the logits become the shifted
///        exponentials \f$e^{z_k - m}\f$ in place, which the backward pass turns into the
///        gradient.
///
/// `// logits: (V × N), one column a token; targets, losses: (N); sums: (N)`
/// \param logits \f$z\f$ in, \f$e^{z - m}\f$ out. \param targets \f$t\f$, each below V.
/// \param sums \f$\sum_k e^{z_k - m}\f$ per token, sized here. \param losses the costs, in
///        nats, sized here.
void cross_entropy_forward(arma::fmat& logits, const arma::uvec& targets, arma::fvec& sums,
                           arma::vec& losses);

/// \brief The backward pass of cross_entropy_forward() for the mean cost over the \f$N\f$
///        tokens, in place: \f$\partial L/\partial z = (\mathrm{softmax}(z) -
///        \mathrm{onehot}(t))/N\f$.
///
/// `// exps: (V × N); sums, targets: (N)`
/// \param exps \f$e^{z - m}\f$ in (cross_entropy_forward()'s logits), \f$\partial L/\partial
///        z\f$ out. \param sums its sums. \param targets \f$t\f$.
void cross_entropy_backward(arma::fmat& exps, const arma::fvec& sums, const arma::uvec& targets);

}  // namespace attn::fast
