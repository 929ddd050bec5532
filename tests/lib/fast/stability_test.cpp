// The fast streaming kernels' softmax stability, in double and in float, with and without masks:
// each block's exponentials must be shifted by the query's running maximum. The scores span 2000
// in double and 250 in float, with the largest far above ln(DBL_MAX) ≈ 709.8 (ln(FLT_MAX) ≈ 88.7),
// so that a block shifted by its smallest score, or not at all, leaves exp_shifted's range (it is
// wrong beyond e^{709}, e^{88} in float) or underflows to 0/0. The expected numbers are computed
// apart, in long double (extreme_scores.hpp), not by the readable form, which could share a
// wrong shift. Each test was seen to fail with the shift planted wrong in its precision (by the
// block's smallest score, by none, or by the block's own largest score instead of the running
// maximum; the last failed no other test).
#include <attn/fast/streaming.hpp>
#include <attn/math/compare.hpp>
#include <attn/math/streaming.hpp>

#include <gtest/gtest.h>

#include "extreme_scores.hpp"

#include <ostream>

namespace {

using attn::math::relative_gap;  // throws on a NaN, which a wrong shift gives
using attn_test::largest_gap;    // NaN, and so a failure, where a wrong shift gave a NaN

using attn_test::StreamingCase;  // n × m scores, cut into blocks, masked or not

// Small blocks; the default blocks of each precision; a causal mask with float's blocks, whose
// diagonal is taken in steps of 64 keys narrower than a block.
const auto kCases = ::testing::Values(
    StreamingCase{12, 12, {1, 1}, {}}, StreamingCase{12, 12, {3, 4}, {}},
    StreamingCase{40, 40, {3, 7}, {true, 0}}, StreamingCase{40, 45, {5, 8}, {false, 23}},
    StreamingCase{40, 40, {4, 6}, {true, 31}}, StreamingCase{300, 517, {128, 256}, {}},
    StreamingCase{300, 300, {128, 256}, {true, 0}}, StreamingCase{700, 700, {256, 512}, {}},
    StreamingCase{700, 700, {256, 512}, {true, 0}},
    StreamingCase{700, 700, {256, 512}, {true, 450}});

attn_test::ReferenceAttention reference(const attn_test::ExtremeInputs& in,
                                        const StreamingCase& c) {
  return attn_test::reference_attention(
      in.Q * in.K.t(), attn_test::allowed_grid(c.n, c.m, c.mask.causal, c.mask.key_length), in.V);
}

class FastStreamingStability : public ::testing::TestWithParam<StreamingCase> {};

TEST_P(FastStreamingStability, ScoresSpanning2000EqualTheLongDoubleReference) {
  const StreamingCase c = GetParam();
  const attn_test::ExtremeInputs in = attn_test::extreme_inputs(c.n, c.m, 1.0, c.n + c.m);
  const attn_test::ReferenceAttention ref = reference(in, c);
  const attn::math::StreamingAttention got =
      attn::fast::streaming_attention(in.Q, in.K, in.V, 1.0, c.mask, c.blocks);
  // Each weight from exp_shifted, within 2ε of e^t, times a value, summed over at most 700 keys:
  // 700 ε = 1.6e-13 of the largest output in the worst case; 1e-12 is the tolerance the fast
  // tests hold the readable form to. A wrong shift gives NaN or garbage, or is refused.
  EXPECT_LE(relative_gap(got.output, ref.output), 1e-12);
  // log-sum-exps up to about 1000: an ulp of 1000 is 1.1e-13
  EXPECT_LE(largest_gap(got.log_sum_exp, ref.log_sum_exp), 1e-12);
}

INSTANTIATE_TEST_SUITE_P(Blocks, FastStreamingStability, kCases);

class FastStreamingFloatStability : public ::testing::TestWithParam<StreamingCase> {};

TEST_P(FastStreamingFloatStability, ScoresSpanning250EqualTheLongDoubleReference) {
  const StreamingCase c = GetParam();
  const attn_test::ExtremeInputs in = attn_test::extreme_inputs(c.n, c.m, 0.125, c.n + c.m);
  const arma::fmat V = arma::conv_to<arma::fmat>::from(in.V);
  // The reference takes the float inputs themselves (Q and K are exact in float; V is rounded
  // to float first), so only the kernel's float arithmetic separates the two.
  const attn_test::ReferenceAttention ref =
      reference({in.Q, in.K, arma::conv_to<arma::mat>::from(V)}, c);
  const attn::math::StreamingAttentionF got = attn::fast::streaming_attention(
      arma::conv_to<arma::fmat>::from(in.Q), arma::conv_to<arma::fmat>::from(in.K), V, 1.0, c.mask,
      c.blocks);
  // In float, ε = 6e-8: a sum over 700 keys could in the worst case lose 700 ε = 4e-5 of the
  // largest output. Here a row's weight sits on a few keys, and the worst case measured was
  // 9e-8; 2e-5 is the tolerance the float tests hold the double form to on random shapes.
  EXPECT_LE(relative_gap(arma::conv_to<arma::mat>::from(got.output), ref.output), 2e-5);
  // log-sum-exps up to about 125, rounded to float: half an ulp of 125 is 3.8e-6
  EXPECT_LE(largest_gap(arma::conv_to<arma::vec>::from(got.log_sum_exp), ref.log_sum_exp), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Blocks, FastStreamingFloatStability, kCases);

}  // namespace
