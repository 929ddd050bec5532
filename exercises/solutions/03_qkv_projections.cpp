// Chapter 03's exercises, answered. Reference solutions: look only after trying.
#include "03_qkv_projections.hpp"

#include <attn/math/validate.hpp>

#include <cmath>
#include <stdexcept>

namespace attn::exercises {

TokenQKV project_token(const arma::rowvec& x, const math::Projections& W) {
  for (const arma::mat* m : {&W.W_Q, &W.W_K, &W.W_V}) {
    if (x.n_cols != m->n_rows) {
      throw std::invalid_argument("x " + math::shape_of(x) + " cannot multiply a projection " +
                                  math::shape_of(*m));
    }
  }
  return {x * W.W_Q, x * W.W_K, x * W.W_V};
}

OneQuery attend_one(const arma::rowvec& q, const arma::mat& K, const arma::mat& V) {
  if (q.n_cols != K.n_cols || K.n_rows != V.n_rows) {
    throw std::invalid_argument("q " + math::shape_of(q) + ", K " + math::shape_of(K) + " and V " +
                                math::shape_of(V) + " do not fit together");
  }
  OneQuery result;
  result.scores = q * K.t() / std::sqrt(static_cast<double>(q.n_cols));
  result.weights = arma::exp(result.scores - result.scores.max());
  result.weights /= arma::accu(result.weights);
  result.output = result.weights * V;
  return result;
}

}  // namespace attn::exercises
