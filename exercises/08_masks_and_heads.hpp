/// \file
/// \brief Chapter 08's exercises: a causal mask as numbers to add, and the columns of each head.
#pragma once

#include <armadillo>

#include <vector>

namespace attn::exercises {

arma::mat causal_additive_mask(arma::uword n);
std::vector<arma::mat> split_into_heads(const arma::mat& X, arma::uword heads);

}  // namespace attn::exercises
