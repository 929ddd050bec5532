/// \file
/// \brief Chapter 12's worked example: today's attention on a few tokens drawn from numpy's
///        `default_rng(2026)` (grouped-query attention with RoPE inside a sliding window, RMSNorm
///        and SwiGLU), small enough to print two heads' weights.
///        tests/data/generate_modern_fixtures.py draws the same numbers with numpy and computes
///        the same lines with PyTorch (tests/golden/ch12_todays_attention.torch.txt; the test
///        ch12.torch).
#pragma once

#include <attn/math/mask.hpp>
#include <attn/math/multi_head.hpp>

#include <armadillo>

#include <cstdint>
#include <string>

namespace attn::ch12 {

inline constexpr std::uint64_t kExampleSeed = 2026;  ///< of the example's draws.
inline constexpr arma::uword kExampleTokens = 5;     ///< tokens.
inline constexpr arma::uword kExampleWidth = 16;   ///< d_model: heads of 4, two rotary pairs each.
inline constexpr arma::uword kExampleHeads = 4;    ///< query heads.
inline constexpr arma::uword kExampleKvHeads = 2;  ///< key/value heads.
inline constexpr arma::uword kExampleWindow = 3;   ///< the sliding window, in keys.
inline constexpr arma::uword kExampleHidden = 24;  ///< SwiGLU's hidden width.

/// \brief Each piece on the example's tokens.
struct Example {
  arma::mat x;                ///< `(kExampleTokens × kExampleWidth)`: the tokens, N(0, 1).
  math::Mask band;            ///< causal, each query reading its last kExampleWindow keys.
  math::MultiHead attention;  ///< grouped-query self-attention of x, with RoPE, within band.
  arma::rowvec rms_norm;      ///< `(1 × kExampleWidth)`: RMSNorm (gain 1) of the first token.
  arma::rowvec swiglu;        ///< `(1 × kExampleWidth)`: SwiGLU of the first token.
};

/// \brief The worked example, drawn from `default_rng(kExampleSeed)` in numpy's order: x, then
///        \f$W_Q, W_K, W_V, W_O\f$ and SwiGLU's \f$W_{gate}, W_{up}, W_{down}\f$, each a standard
///        normal matrix divided by \f$\sqrt{\text{fan-in}}\f$.
/// \return every piece's numbers.
Example worked_example();

/// \brief Whether every head's weights are 0 outside the example's band and each row sums to 1
///        within \p tolerance. \param example worked_example()'s. \param tolerance on the sums.
/// \return true if so.
bool banded(const Example& example, double tolerance);

/// \brief Numbers as the example prints them: four decimals each, at most eight to a line, each
///        line indented by two spaces. \param row the numbers. \return the lines, without a last
///        line end.
std::string decimals(const arma::rowvec& row);

}  // namespace attn::ch12
