// Chapter 08's exercises, answered. Reference solutions: look only after trying.
#include "08_masks_and_heads.hpp"

#include <limits>
#include <stdexcept>
#include <string>

namespace attn::exercises {

arma::mat causal_additive_mask(arma::uword n) {
  arma::mat mask(n, n, arma::fill::zeros);
  for (arma::uword i = 0; i < n; ++i) {
    for (arma::uword j = i + 1; j < n; ++j) {
      mask(i, j) = -std::numeric_limits<double>::infinity();  // key j comes after query i
    }
  }
  return mask;
}

std::vector<arma::mat> split_into_heads(const arma::mat& X, arma::uword heads) {
  const arma::uword d = X.n_cols;
  if (heads == 0 || d % heads != 0) {
    throw std::invalid_argument(std::to_string(heads) + " heads cannot share d = " +
                                std::to_string(d) + " columns equally");
  }
  const arma::uword width = d / heads;
  std::vector<arma::mat> blocks;
  for (arma::uword k = 0; k < heads; ++k) {
    blocks.push_back(X.cols(k * width, (k + 1) * width - 1));
  }
  return blocks;
}

}  // namespace attn::exercises
