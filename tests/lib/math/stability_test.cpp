// The math layer's softmax stability, path by path: every function that exponentiates scores
// must shift each row by its largest score (largest allowed score, under a mask). Each test
// feeds scores that span 2000 (250 in float), with the largest far above ln(DBL_MAX) ≈ 709.8
// (ln(FLT_MAX) ≈ 88.7), so that a row shifted by its smallest score overflows to infinity and
// one not shifted at all overflows, or underflows to 0/0 where every score is far below 0. The
// expected numbers are worked by hand (the row {top, top − 1, far below}, whose weights are
// 1/(1 + 1/e), (1/e)/(1 + 1/e) and 0) or computed apart, in long double (extreme_scores.hpp).
// Each test was seen to fail with the shift planted wrong in the path it names (by the smallest
// score, by none, and for the online softmax by the block's own largest score instead of the
// running maximum); the masked softmax's, the KV cache's and merge's wrong shifts, and the
// forgotten running maximum, failed no other test.
#include <attn/math/attention.hpp>
#include <attn/math/compare.hpp>
#include <attn/math/kv_cache.hpp>
#include <attn/math/layers.hpp>
#include <attn/math/mask.hpp>
#include <attn/math/multi_head.hpp>
#include <attn/math/sampling.hpp>
#include <attn/math/softmax.hpp>
#include <attn/math/streaming.hpp>

#include <gtest/gtest.h>

#include "extreme_scores.hpp"
#include "normal_inputs.hpp"

#include <cmath>
#include <ostream>
#include <vector>

namespace {

using attn::math::relative_gap;  // throws on a NaN, which a wrong shift gives
using attn_test::largest_gap;    // NaN, and so a failure, where a wrong shift gave a NaN
using attn_test::top_two_weights;

// Weights are at most 1, each from an exponential within 1 ulp of e^t (glibc), a sum of three
// and a division: within a few ε = 2.2e-16 of the hand-worked values.
constexpr double kWeightTolerance = 1e-15;

// The hand-worked row {1000, 999, −1000}, and the same row 3000 lower, where every unshifted
// exponential underflows to 0.
const arma::mat kFarApart = {{1000.0, 999.0, -1000.0}, {-2000.0, -2001.0, -4000.0}};

TEST(SoftmaxStability, RowsSpanning2000AreShiftedByTheirLargestScore) {
  const arma::mat w = attn::math::softmax_rows(kFarApart);
  for (arma::uword i = 0; i < w.n_rows; ++i)
    EXPECT_LE(largest_gap(w.row(i), top_two_weights()), kWeightTolerance) << w;
  EXPECT_EQ(w(0, 2), 0.0);  // e^{−2000} is below the smallest double
  const arma::rowvec one = attn::math::softmax(kFarApart.row(1));
  EXPECT_LE(largest_gap(one, top_two_weights()), kWeightTolerance) << one;
}

// Keys of width 1 for two queries, 8 and −8: scores 8k exact in double. Keys 1 and 4 score
// ±5000, far above every other score, and the masks below block them where they are largest:
// a softmax that took its shift from a blocked score would leave every kept weight e^{−4000},
// 0, and divide 0 by 0.
const arma::mat kMaskedKeys = arma::colvec{125.0, 625.0, 124.875, -125.0, -625.0, -124.875};
const arma::mat kTwoQueries = arma::colvec{8.0, -8.0};
// Query 8 scores {1000, 5000, 999, −1000, −5000, −999}: keys 0 and 2 take the weight.
// Query −8 scores {−1000, −5000, −999, 1000, 5000, 999}: keys 3 and 5 take it.
const arma::umat kAllowed = {{1, 0, 1, 1, 0, 1}, {1, 1, 1, 1, 0, 1}};

TEST(MaskedSoftmaxStability, RowsAreShiftedByTheirLargestAllowedScore) {
  const arma::mat S = kTwoQueries * kMaskedKeys.t();
  const arma::mat w = attn::math::masked_softmax_rows(S, attn::math::Mask::from_allowed(kAllowed));
  const arma::rowvec t = top_two_weights();
  const arma::mat expected = {{t(0), 0.0, t(1), 0.0, 0.0, 0.0}, {0.0, 0.0, 0.0, t(0), 0.0, t(1)}};
  EXPECT_LE(largest_gap(w, expected), kWeightTolerance) << w;
  EXPECT_EQ(w(0, 1), 0.0);  // blocked: exactly 0
  EXPECT_EQ(w(1, 4), 0.0);
}

TEST(AttentionStability, MaskedAndUnmaskedAttendShiftEachRowByItsLargestScore) {
  const arma::mat V = attn_test::Normals(71).normal(6, 2);
  const arma::rowvec t = top_two_weights();
  // Unmasked, over keys {0, 2, 3, 5}: query 8 scores {1000, 999, −1000, −999}, query −8 the same
  // negated.
  const arma::uvec kept = {0, 2, 3, 5};
  const attn::math::Attention plain =
      attn::math::attend(kTwoQueries, kMaskedKeys.rows(kept), V.rows(kept), 1.0);
  const arma::mat expected =
      arma::join_cols(t(0) * V.row(0) + t(1) * V.row(2), t(0) * V.row(3) + t(1) * V.row(5));
  // Outputs are sums of two products of weights and values of order 1: within a few ε.
  EXPECT_LE(relative_gap(plain.output, expected), 1e-15);
  const attn::math::Attention masked = attn::math::attend(kTwoQueries, kMaskedKeys, V, 1.0,
                                                          attn::math::Mask::from_allowed(kAllowed));
  EXPECT_LE(relative_gap(masked.output, expected), 1e-15);
}

// Two heads of width 1 (scale 1/√1 = 1), every weight the identity: head h sees column h of the
// inputs, and the output is the two heads' outputs side by side. Each head's scores span 2000,
// and the heads put their weight on different keys.
TEST(MultiHeadStability, EveryHeadIsShiftedByItsOwnLargestScore) {
  const arma::mat I = arma::eye(2, 2);
  const attn::math::MultiHeadWeights W{2, 0, I, I, I, I, {}, {}, {}, {}};
  const arma::mat query = {{8.0, 8.0}, {-8.0, -8.0}};
  // Head 0's keys score 8 × {125, 124.875, −125, −124.875}; head 1's 8 × {−124.875, 125,
  // 124.875, −125}. Key 4 scores 5000 in both heads for query 8, and is blocked.
  const arma::mat key = {
      {125.0, -124.875}, {124.875, 125.0}, {-125.0, 124.875}, {-124.875, -125.0}, {625.0, 625.0}};
  const arma::mat value = attn_test::Normals(72).normal(5, 2);
  const arma::rowvec t = top_two_weights();
  // (query, head) → the keys with weights t(0) and t(1)
  const arma::umat top = {{0, 1}, {2, 3}};     // query 8: head 0, head 1
  const arma::umat second = {{1, 2}, {3, 0}};  // query −8: the same
  arma::mat expected(2, 2);
  for (arma::uword i = 0; i < 2; ++i)
    for (arma::uword h = 0; h < 2; ++h)
      expected(i, h) = t(0) * value(top(i, h), h) + t(1) * value(second(i, h), h);
  const attn::math::MultiHead plain =
      attn::math::multi_head_attention(query, key.rows(0, 3), value.rows(0, 3), W);
  EXPECT_LE(relative_gap(plain.output, expected), 1e-15);
  const arma::umat allowed = {{1, 1, 1, 1, 0}, {1, 1, 1, 1, 0}};
  const attn::math::MultiHead masked = attn::math::multi_head_attention(
      query, key, value, W, attn::math::Mask::from_allowed(allowed));
  EXPECT_LE(relative_gap(masked.output, expected), 1e-15);
}

TEST(CrossEntropyStability, LogitsSpanning2000GiveTheExactLossAndGradient) {
  // Row 0's target is its largest logit: −log softmax = log(1 + 1/e). Row 1's is its smallest,
  // 2000 below the largest: 2000 + log(1 + 1/e). Their mean is 1000 + log(1 + 1/e).
  const attn::math::CrossEntropy ce = attn::math::cross_entropy(kFarApart, arma::uvec{0, 2});
  // The second row's loss, near 2000, is rounded to a multiple of ulp(2000) = 2.3e-13, the
  // log-sum-exp before it to ulp(2000) too: 1e-12 is a few of those.
  EXPECT_NEAR(ce.loss, 1000.0 + std::log1p(std::exp(-1.0)), 1e-12);
  const arma::rowvec t = top_two_weights();
  const arma::mat expected = arma::mat{{t(0) - 1.0, t(1), 0.0}, {t(0), t(1), -1.0}} / 2.0;
  EXPECT_LE(largest_gap(ce.dlogits, expected), kWeightTolerance) << ce.dlogits;
}

TEST(SamplingStability, LogitsSpanning2000AreShiftedByTheirLargestAtAnyTemperature) {
  // Logits T × {1000, 999, −1000}: divided by T, the row above. T is a power of 2, so that the
  // division is exact; the shift is taken before it, so a wrong shift overflows at every T.
  for (double T : {0.5, 1.0, 2.0}) {
    for (arma::uword i = 0; i < kFarApart.n_rows; ++i) {
      attn::math::SamplingOptions options;
      options.temperature = T;
      const arma::rowvec q = attn::math::next_token_distribution(T * kFarApart.row(i), options);
      EXPECT_LE(largest_gap(q, top_two_weights()), kWeightTolerance)
          << "T = " << T << ", row " << i << ": " << q;
    }
  }
}

using attn_test::StreamingCase;  // n × m scores, cut into blocks, masked or not

// A weight, an exponential within an ulp or two, times a value, summed over at most 300 keys: in
// the worst case 300 ε = 7e-14 of the largest output. 1e-12, as the streaming tests use, is
// looser but still 1e12 times finer than any wrong shift, which gives NaN or garbage.
constexpr double kStreamingTolerance = 1e-12;

class StreamingStability : public ::testing::TestWithParam<StreamingCase> {};

TEST_P(StreamingStability, EqualsTheLongDoubleReference) {
  const StreamingCase c = GetParam();
  const attn_test::ExtremeInputs in = attn_test::extreme_inputs(c.n, c.m, 1.0, c.n + c.m);
  const attn_test::ReferenceAttention ref = attn_test::reference_attention(
      in.Q * in.K.t(), attn_test::allowed_grid(c.n, c.m, c.mask.causal, c.mask.key_length), in.V);
  const attn::math::StreamingAttention got =
      attn::math::streaming_attention(in.Q, in.K, in.V, 1.0, c.mask, c.blocks);
  EXPECT_LE(relative_gap(got.output, ref.output), kStreamingTolerance);
  // log-sum-exps up to about 1000: an ulp of 1000 is 1.1e-13
  EXPECT_LE(largest_gap(got.log_sum_exp, ref.log_sum_exp), kStreamingTolerance);
}

INSTANTIATE_TEST_SUITE_P(Blocks, StreamingStability,
                         ::testing::Values(StreamingCase{12, 12, {1, 1}, {}},
                                           StreamingCase{12, 12, {3, 4}, {}},
                                           StreamingCase{40, 40, {3, 7}, {true, 0}},
                                           StreamingCase{40, 45, {5, 8}, {false, 23}},
                                           StreamingCase{40, 40, {4, 6}, {true, 31}},
                                           StreamingCase{300, 300, {128, 256}, {}},
                                           StreamingCase{300, 300, {128, 256}, {true, 0}}));

// Two parts of the keys whose log-sum-exps lie 1000 to 2000 apart: the part with the smaller
// one must be weighted e^{−1000}, not the other e^{+1000}.
TEST(MergeStability, PartsWhoseLogSumExpsLie1000ApartMakeTheWhole) {
  const attn_test::ExtremeInputs in = attn_test::extreme_inputs(6, 10, 1.0, 74);
  const arma::mat S = in.Q * in.K.t();
  // Keys 125 and 124.875 in one part; −125, 0 and −62.5 in the other. Query 8 scores about 1000
  // in the first and 0 in the second; query −8, about −1000 and 1000.
  arma::umat first(6, 10, arma::fill::zeros);
  for (arma::uword j = 0; j < 10; ++j)
    if (j % 5 == 0 || j % 5 == 2)
      first.col(j).ones();
  const arma::umat all(6, 10, arma::fill::ones);
  const auto part = [&](const arma::umat& allowed) {
    const attn_test::ReferenceAttention r = attn_test::reference_attention(S, allowed, in.V);
    return attn::math::StreamingAttention{r.output, r.log_sum_exp};
  };
  const attn::math::StreamingAttention merged = attn::math::merge(part(first), part(all - first));
  const attn_test::ReferenceAttention whole = attn_test::reference_attention(S, all, in.V);
  // Two exponentials, a sum and two products per entry: within a few ε.
  EXPECT_LE(relative_gap(merged.output, whole.output), 1e-14);
  EXPECT_LE(largest_gap(merged.log_sum_exp, whole.log_sum_exp), 1e-12);  // ulp(1000)
}

// The KV cache's step t is row t of causal attention; the query 8 at step 2 already sees scores
// 1000, −1000 and 999.
TEST(KVCacheStability, EachStepOfScoresSpanning2000IsTheReferenceRow) {
  const arma::uword n = 60;
  const attn_test::ExtremeInputs in = attn_test::extreme_inputs(n, n, 1.0, 75);
  const attn_test::ReferenceAttention ref =
      attn_test::reference_attention(in.Q * in.K.t(), attn_test::allowed_grid(n, n, true, 0), in.V);
  attn::math::KVCache cache(1, in.V.n_cols);
  for (arma::uword t = 0; t < n; ++t) {
    cache.append(in.K.row(t), in.V.row(t));
    // at most 60 terms: 60 ε = 1.3e-14 in the worst case
    EXPECT_LE(relative_gap(cache.attend(in.Q.row(t), 1.0), ref.output.row(t)), 1e-13)
        << "step " << t;
  }
}

// The same in float: scores from −125 to 125 (a spread of 250; e^{89} overflows float).
TEST(KVCacheStability, InFloatEachStepOfScoresSpanning250IsTheReferenceRow) {
  const arma::uword n = 60;
  const attn_test::ExtremeInputs in = attn_test::extreme_inputs(n, n, 0.125, 76);
  const arma::fmat Q = arma::conv_to<arma::fmat>::from(in.Q);
  const arma::fmat K = arma::conv_to<arma::fmat>::from(in.K);
  const arma::fmat V = arma::conv_to<arma::fmat>::from(in.V);
  // The reference takes the float inputs themselves (exact in double), so only the cache's
  // float arithmetic separates the two.
  const attn_test::ReferenceAttention ref = attn_test::reference_attention(
      in.Q * in.K.t(), attn_test::allowed_grid(n, n, true, 0), arma::conv_to<arma::mat>::from(V));
  attn::math::KVCacheF cache(1, V.n_cols);
  for (arma::uword t = 0; t < n; ++t) {
    cache.append(K.row(t), V.row(t));
    const arma::rowvec z = arma::conv_to<arma::rowvec>::from(cache.attend(Q.row(t), 1.0));
    // at most 60 terms in float: 60 × 6e-8 = 3.6e-6 in the worst case
    EXPECT_LE(relative_gap(z, ref.output.row(t)), 4e-6) << "step " << t;
  }
}

}  // namespace
