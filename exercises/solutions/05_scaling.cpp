// Chapter 05's exercises, answered. Reference solutions: look only after trying.
#include "05_scaling.hpp"

#include <stdexcept>
#include <string>

namespace attn::exercises {

arma::mat softmax_jacobian_of(const arma::rowvec& weights) {
  return arma::diagmat(weights) - weights.t() * weights;  // y_i (δ_ij − y_j)
}

arma::rowvec softmax_backward_row(const arma::rowvec& weights, const arma::rowvec& upstream) {
  if (weights.n_elem != upstream.n_elem) {
    throw std::invalid_argument("weights have " + std::to_string(weights.n_elem) +
                                " entries but upstream has " + std::to_string(upstream.n_elem));
  }
  return weights % (upstream - arma::dot(upstream, weights));
}

}  // namespace attn::exercises
