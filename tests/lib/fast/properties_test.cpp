// The fast layer's promises for every input RapidCheck can think of: random shapes (n = 1
// included), block sizes, masks and values, in both precisions. ctest fixes the seed and the
// case count (tests/CMakeLists.txt), so every run checks the same cases.
#include <attn/fast/streaming.hpp>
#include <attn/math/compare.hpp>
#include <attn/math/streaming.hpp>

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <vector>

namespace {

// An (rows × cols) matrix of values in [−spread, spread], in steps of spread/1000: exactly
// representable in float after rounding, and far from overflow.
arma::mat values(arma::uword rows, arma::uword cols, double spread) {
  const auto steps =
      *rc::gen::container<std::vector<int>>(rows * cols, rc::gen::inRange(-1000, 1001));
  arma::mat m(rows, cols);
  for (arma::uword i = 0; i < m.n_elem; ++i)
    m(i) = steps[i] * spread / 1000.0;
  return arma::conv_to<arma::mat>::from(arma::conv_to<arma::fmat>::from(m));  // float's values
}

arma::uword size(arma::uword at_most) {
  return *rc::gen::inRange<arma::uword>(1, at_most + 1);
}

// A mask: none, causal, or padding from a random key on.
attn::math::StreamingMask mask(arma::uword keys) {
  switch (*rc::gen::inRange(0, 3)) {
    case 1:
      return {.causal = true};
    case 2:
      return {.key_length = size(keys)};
    default:
      return {};
  }
}

// The problem RapidCheck draws: shapes, blocks, mask and the size of the scores.
struct Problem {
  arma::mat Q, K, V;
  double scale;
  attn::math::StreamingMask mask;
  attn::math::StreamingBlocks blocks;
};

Problem problem() {
  const arma::uword n = size(70), m = size(70), d = size(12);
  const double spread = *rc::gen::element(0.5, 2.0, 6.0);  // scores up to d · spread²
  return {values(n, d, spread),
          values(m, d, spread),
          values(m, size(5), 3.0),
          1.0 / std::sqrt(static_cast<double>(d)),
          mask(m),
          {size(9), size(9)}};
}

RC_GTEST_PROP(FastStreamingProperties, EqualsTheReadableForm, ()) {
  const Problem p = problem();
  const auto fast = attn::fast::streaming_attention(p.Q, p.K, p.V, p.scale, p.mask, p.blocks);
  const auto readable = attn::math::streaming_attention(p.Q, p.K, p.V, p.scale, p.mask, p.blocks);
  RC_ASSERT(attn::math::relative_gap(fast.output, readable.output) <= 1e-12);
  RC_ASSERT(arma::abs(fast.log_sum_exp - readable.log_sum_exp).max() <= 1e-12);
}

// In float, each score's rounding is relative to the sum of |q_i k_i|, up to d · spread² · c
// here (scores up to about 125); the output's gap grows with it. Over 3000 such cases the worst
// gaps measured were 1.9e-6 (output, of its scale) and 8.6e-7 (log-sum-exp, relative); the
// tolerances are 2e-5 and 1e-5.
RC_GTEST_PROP(FastStreamingProperties, InFloatIsTheDoubleResultWithinFloatsRounding, ()) {
  const Problem p = problem();
  const auto twice = attn::fast::streaming_attention(p.Q, p.K, p.V, p.scale, p.mask, p.blocks);
  const auto single = attn::fast::streaming_attention(
      arma::conv_to<arma::fmat>::from(p.Q), arma::conv_to<arma::fmat>::from(p.K),
      arma::conv_to<arma::fmat>::from(p.V), p.scale, p.mask, p.blocks);
  RC_ASSERT(attn::math::relative_gap(arma::conv_to<arma::mat>::from(single.output), twice.output) <=
            2e-5);
  const arma::vec lse = arma::conv_to<arma::vec>::from(single.log_sum_exp);
  RC_ASSERT(arma::max(arma::abs(lse - twice.log_sum_exp) /
                      arma::max(arma::abs(twice.log_sum_exp), arma::ones(lse.n_elem))) <= 1e-5);
}

}  // namespace
