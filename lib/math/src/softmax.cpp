#include "attn/math/softmax.hpp"

#include "attn/math/validate.hpp"

namespace attn::math {

arma::mat softmax_rows(const arma::mat& scores) {
  require_nonempty("softmax input", scores);
  require_finite("softmax input", scores);
  //! [softmax-rows]
  arma::mat shifted = scores.each_col() - arma::max(scores, 1);  // (n × m), every entry <= 0
  arma::mat e = arma::exp(shifted);                              // (n × m), row max is exactly 1
  e.each_col() /= arma::sum(e, 1);
  return e;
  //! [softmax-rows]
}

arma::rowvec softmax(const arma::rowvec& scores) {
  return softmax_rows(scores);
}

arma::mat softmax_whole(const arma::mat& scores) {
  // The whole matrix as one long row, then back to its shape.
  const arma::rowvec flat = softmax(arma::vectorise(scores).t());
  return arma::reshape(flat, scores.n_rows, scores.n_cols);
}

}  // namespace attn::math
