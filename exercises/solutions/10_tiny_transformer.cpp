// Chapter 10's exercises, answered. Reference solutions: look only after trying.
#include "10_tiny_transformer.hpp"

#include <attn/math/validate.hpp>

#include <cmath>
#include <stdexcept>
#include <string>

namespace attn::exercises {

arma::rowvec layer_norm_backward_row(const arma::rowvec& x, const arma::rowvec& gamma,
                                     const arma::rowvec& dy, double eps) {
  for (const arma::rowvec* other : {&gamma, &dy}) {
    if (other->n_elem != x.n_elem) {
      throw std::invalid_argument("layer norm of x " + math::shape_of(x) + " cannot take " +
                                  (other == &gamma ? "gamma " : "dy ") + math::shape_of(*other));
    }
  }
  const double d = static_cast<double>(x.n_elem);
  const arma::rowvec centred = x - arma::accu(x) / d;
  const double inv_std = 1.0 / std::sqrt(arma::accu(centred % centred) / d + eps);
  const arma::rowvec x_hat = centred * inv_std;
  const arma::rowvec g = gamma % dy;  // dL/dx_hat
  const double g_mean = arma::accu(g) / d;
  const double gx_mean = arma::accu(g % x_hat) / d;
  return inv_std * (g - g_mean - x_hat * gx_mean);
}

double cross_entropy_row(const arma::rowvec& logits, arma::uword target) {
  if (target >= logits.n_elem) {
    throw std::out_of_range("target " + std::to_string(target) + " is not a column of logits " +
                            math::shape_of(logits));
  }
  const double largest = logits.max();
  const double log_sum_exp = largest + std::log(arma::accu(arma::exp(logits - largest)));
  return log_sum_exp - logits(target);
}

}  // namespace attn::exercises
