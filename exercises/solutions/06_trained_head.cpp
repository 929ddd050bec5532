// Chapter 06's exercises, answered. Reference solutions: look only after trying.
#include "06_trained_head.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace attn::exercises {

namespace {

std::string shape(const arma::mat& m) {
  return "(" + std::to_string(m.n_rows) + " × " + std::to_string(m.n_cols) + ")";
}

}  // namespace

void adam_update(arma::mat& theta, const arma::mat& gradient, AdamMoments& moments,
                 double learning_rate, double beta1, double beta2, double epsilon) {
  if (gradient.n_rows != theta.n_rows || gradient.n_cols != theta.n_cols) {
    throw std::invalid_argument("adam_update: the gradient " + shape(gradient) +
                                " is not the shape of the parameter " + shape(theta));
  }
  if (moments.m.is_empty())
    moments.m.zeros(arma::size(theta));
  if (moments.v.is_empty())
    moments.v.zeros(arma::size(theta));
  ++moments.t;
  moments.m = beta1 * moments.m + (1.0 - beta1) * gradient;
  moments.v = beta2 * moments.v + (1.0 - beta2) * arma::square(gradient);
  const arma::mat m_hat = moments.m / (1.0 - std::pow(beta1, moments.t));
  const arma::mat v_hat = moments.v / (1.0 - std::pow(beta2, moments.t));
  theta -= learning_rate * m_hat / (arma::sqrt(v_hat) + epsilon);
}

TargetLoss target_loss(const arma::rowvec& scores, arma::uword target) {
  if (target >= scores.n_elem) {
    throw std::out_of_range("target " + std::to_string(target) +
                            " is not an entry of the row of scores, which has " +
                            std::to_string(scores.n_elem));
  }
  const double largest = scores.max();
  const arma::rowvec exps = arma::exp(scores - largest);
  const double total = arma::accu(exps);
  TargetLoss result;
  result.loss = largest + std::log(total) - scores(target);
  result.dscores = exps / total;
  result.dscores(target) -= 1.0;
  return result;
}

}  // namespace attn::exercises
