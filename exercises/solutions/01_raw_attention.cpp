// Chapter 01's exercises, answered. Reference solutions: look only after trying.
#include "01_raw_attention.hpp"

#include <cmath>
#include <stdexcept>

namespace attn::exercises {

arma::rowvec row_softmax(const arma::rowvec& scores) {
  const double largest = scores.max();
  arma::rowvec weights(scores.n_elem);
  double total = 0.0;
  for (arma::uword j = 0; j < scores.n_elem; ++j) {
    weights(j) = std::exp(scores(j) - largest);
    total += weights(j);
  }
  return weights / total;
}

arma::rowvec blend_for(const arma::mat& E, arma::uword query) {
  if (query >= E.n_rows) {
    throw std::out_of_range("query " + std::to_string(query) + " is not a row of E, which has " +
                            std::to_string(E.n_rows));
  }
  const arma::rowvec scores = (E * E.row(query).t()).t();
  return row_softmax(scores) * E;
}

}  // namespace attn::exercises
