// Chapter 04's exercises, answered. Reference solutions: look only after trying.
#include "04_self_attention.hpp"

#include <cmath>

namespace attn::exercises {

double uniform_from_bits(std::uint64_t bits) {
  return std::ldexp(static_cast<double>(bits >> 11), -53);  // 53 bits, exact in a double
}

arma::mat self_attention_weights(const arma::mat& X, const math::Projections& W) {
  const arma::mat Q = X * W.W_Q, K = X * W.W_K;
  const arma::mat scores = Q * K.t() / std::sqrt(static_cast<double>(W.W_K.n_cols));
  arma::mat weights = arma::exp(scores.each_col() - arma::max(scores, 1));
  weights.each_col() /= arma::sum(weights, 1);
  return weights;
}

}  // namespace attn::exercises
