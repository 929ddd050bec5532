/// \file
/// \brief Chapter 04's exercises: numpy's uniform double from raw bits, and the article's weights.
#pragma once

#include <attn/attention.hpp>

#include <armadillo>

#include <cstdint>

namespace attn::exercises {

double uniform_from_bits(std::uint64_t bits);
arma::mat self_attention_weights(const arma::mat& X, const Projections& W);

}  // namespace attn::exercises
