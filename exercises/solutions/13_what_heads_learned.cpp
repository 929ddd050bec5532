// Chapter 13's exercises, answered. Reference solutions: look only after trying.
#include "13_what_heads_learned.hpp"

#include <stdexcept>
#include <string>

namespace attn::exercises {

double previous_token_score(const arma::mat& weights) {
  if (weights.n_rows != weights.n_cols || weights.n_rows < 2)
    throw std::invalid_argument("previous_token_score: weights of " +
                                std::to_string(weights.n_rows) + " x " +
                                std::to_string(weights.n_cols) + "; a square of 2 rows or more");
  return arma::mean(weights.diag(-1));
}

double induction_score_of(const arma::mat& weights, arma::uword first, arma::uword period) {
  if (period == 0)
    throw std::invalid_argument("induction_score_of: a period of 0");
  if (weights.n_rows != weights.n_cols || weights.n_rows < first + 2 * period)
    throw std::invalid_argument("induction_score_of: weights of " + std::to_string(weights.n_rows) +
                                " x " + std::to_string(weights.n_cols) + "; a square of at least " +
                                std::to_string(first + 2 * period) + " rows");
  double sum = 0.0;
  for (arma::uword i = first + period; i < first + 2 * period; ++i)
    sum += weights(i, i - period + 1);
  return sum / static_cast<double>(period);
}

}  // namespace attn::exercises
