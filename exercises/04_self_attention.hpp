/// \file
/// \brief Chapter 04's exercises: numpy's uniform double from raw bits, and the article's weights.
#pragma once

#include <attn/math/attention.hpp>

#include <armadillo>

#include <cstdint>

namespace attn::exercises {

/// \brief Exercise 4.1: numpy's uniform double, from one raw 64-bit draw.
///
/// `rng.random()` turns one 64-bit output of the PCG64 generator into a double in [0, 1). Write
/// that step: given the raw \p bits, return the double numpy returns. The test draws raw words
/// from the book's `default_rng(0)` and requires your doubles to equal, bit for bit, what
/// `default_rng(0).random()` gives for the same draws; it also tries 0 and the largest word,
/// which must give 0 and a number strictly below 1.
///
/// \param bits one raw output of PCG64.
/// \return a double in [0, 1).
///
/// \par Hint
/// A double carries 53 significant bits. Keep the top 53 of the 64 and scale them by
/// \f$2^{-53}\f$, which `std::ldexp` does exactly. The appendix on numpy's random numbers
/// (\ref appendix_numpy_random) describes numpy's own function.
double uniform_from_bits(std::uint64_t bits);

/// \brief Exercise 4.2: the weights the article prints for "the cat drank the milk".
///
/// Return the grid of attention weights \f$\mathrm{softmax}_{\text{rows}}(Q K^\top /
/// \sqrt{d_k})\f$ with \f$Q = X W_Q\f$ and \f$K = X W_K\f$. The test draws the article's
/// sentence from numpy's `default_rng(0)` (the book's random_sentence) and compares your grid
/// with the one the article prints, two digits, first row 0.03 0.32 0.12 0.51 0.02, and with the
/// library within \f$10^{-14}\f$.
///
/// \param X embeddings `(n × d_model)`. \param W the head's projections (\f$W_V\f$ unused).
/// \return the weights `(n × n)`.
///
/// \par Hint
/// The values take no part in the weights, so \f$W_V\f$ is not needed. \f$d_k\f$ is the number
/// of columns of \f$W_K\f$, here 4, not the width of the embeddings, 8.
arma::mat self_attention_weights(const arma::mat& X, const math::Projections& W);

}  // namespace attn::exercises
