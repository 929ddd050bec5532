// Streaming attention, the readable form (attn::math::streaming_attention): the online softmax
// block by block equals the reference attend() on many shapes, block sizes, masks and extreme
// scores; and the recurrence worked by hand.
#include <attn/math/attention.hpp>
#include <attn/math/compare.hpp>
#include <attn/math/kv_cache.hpp>
#include <attn/math/mask.hpp>
#include <attn/math/streaming.hpp>
#include <attn/math/validate.hpp>

#include <gtest/gtest.h>

#include "normal_inputs.hpp"

#include <cmath>
#include <limits>
#include <tuple>
#include <vector>

namespace {

using attn::math::relative_gap;  // |a − b| relative to the largest |b|: outputs of any size alike

using Case = std::tuple<int, int, int, int, int,
                        int>;  // n, m, d, bq, bk, mask (0 none, 1 causal, 2 padding)
class StreamingShapes : public ::testing::TestWithParam<Case> {};

TEST_P(StreamingShapes, EqualsTheReference) {
  const auto [n, m, d, bq, bk, which] = GetParam();
  const attn_test::Normals draw(static_cast<std::uint64_t>(n * 1000 + m * 10 + d + which));
  const arma::mat Q = draw.normal(n, d), K = draw.normal(m, d), V = draw.normal(m, 3);
  const double c = 1.0 / std::sqrt(static_cast<double>(d));
  attn::math::StreamingMask rule;
  attn::math::Mask grid = attn::math::Mask::none(n, m);
  if (which == 1) {
    rule.causal = true;
    grid = attn::math::Mask::from_allowed(arma::trimatl(arma::umat(n, m, arma::fill::ones)));
  } else if (which == 2) {
    rule.key_length = (m + 1) / 2;
    grid = attn::math::Mask::padding(n, m, rule.key_length);
  }
  const attn::math::Attention reference = attn::math::attend(Q, K, V, c, grid);
  const attn::math::StreamingAttention fast = attn::math::streaming_attention(
      Q, K, V, c, rule, {static_cast<arma::uword>(bq), static_cast<arma::uword>(bk)});
  EXPECT_LE(relative_gap(fast.output, reference.output), 1e-12);
  // log-sum-exp of each row's allowed scores
  for (arma::uword i = 0; i < static_cast<arma::uword>(n); ++i) {
    const arma::uvec keys = arma::find(grid.allowed().row(i));
    const arma::rowvec s = arma::rowvec(reference.scores.row(i)).cols(keys);
    EXPECT_NEAR(fast.log_sum_exp(i), s.max() + std::log(arma::accu(arma::exp(s - s.max()))), 1e-12)
        << "row " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, StreamingShapes,
    ::testing::Values(Case{1, 1, 4, 64, 128, 0}, Case{1, 7, 3, 1, 2, 0}, Case{7, 1, 3, 2, 5, 0},
                      Case{33, 33, 8, 5, 7, 0}, Case{33, 33, 8, 5, 7, 1}, Case{33, 40, 8, 4, 3, 2},
                      Case{100, 100, 16, 64, 128, 1}, Case{257, 129, 64, 64, 128, 0},
                      Case{130, 130, 4, 7, 11, 1}, Case{300, 300, 64, 128, 256, 1},
                      Case{300, 517, 64, 128, 256, 2}, Case{600, 600, 16, 128, 256, 0}));

TEST(Merge, TwoHalvesOfTheKeysMakeTheWhole) {
  const attn_test::Normals draw(91);
  const arma::mat Q = draw.normal(37, 8), K = draw.normal(50, 8), V = draw.normal(50, 3);
  const attn::math::StreamingAttention whole = attn::math::streaming_attention(Q, K, V, 0.4);
  const attn::math::StreamingAttention left =
      attn::math::streaming_attention(Q, K.rows(0, 19), V.rows(0, 19), 0.4);
  const attn::math::StreamingAttention right =
      attn::math::streaming_attention(Q, K.rows(20, 49), V.rows(20, 49), 0.4);
  const attn::math::StreamingAttention merged = attn::math::merge(left, right);
  EXPECT_LE(relative_gap(merged.output, whole.output), 1e-12);
  EXPECT_LE(relative_gap(merged.log_sum_exp, whole.log_sum_exp), 1e-12);
  EXPECT_THROW(attn::math::merge(left, attn::math::streaming_attention(Q.rows(0, 3), K, V, 0.4)),
               attn::math::ShapeError);
}

TEST(Streaming, ScoresNear700NeitherOverflowNorVanish) {
  const attn_test::Normals draw(51);
  arma::mat Q = draw.normal(9, 2), K = draw.normal(12, 2);
  const arma::mat V = draw.normal(12, 2);
  Q.col(0).fill(35.0);
  K.col(0).fill(20.0);  // scores about 700
  for (double sign : {1.0, -1.0}) {
    const attn::math::StreamingAttention fast =
        attn::math::streaming_attention(Q * sign, K, V, 1.0, {}, {4, 5});
    EXPECT_TRUE(fast.output.is_finite());
    EXPECT_LE(relative_gap(fast.output, attn::math::attend(Q * sign, K, V, 1.0).output), 1e-12);
  }
}

TEST(Streaming, RefusesWhatItCannotCompute) {
  const arma::mat Q(3, 2, arma::fill::ones), K(4, 2, arma::fill::ones), V(4, 1, arma::fill::ones);
  EXPECT_THROW(attn::math::streaming_attention(Q, K, V, 1.0, {}, {0, 4}), attn::math::InputError);
  EXPECT_THROW(attn::math::streaming_attention(Q, arma::mat(4, 3, arma::fill::ones), V, 1.0),
               attn::math::ShapeError);
  EXPECT_THROW(attn::math::streaming_attention(Q, K, arma::mat(5, 1, arma::fill::ones), 1.0),
               attn::math::ShapeError);
  arma::mat bad = Q;
  bad(1, 1) = arma::datum::nan;
  EXPECT_THROW(attn::math::streaming_attention(bad, K, V, 1.0), attn::math::InputError);
}

TEST(KVCache, DecodingStepByStepIsFullCausalAttentionRowByRow) {
  const attn_test::Normals draw(61);
  const arma::uword n = 40, d = 8;
  const arma::mat Q = draw.normal(n, d), K = draw.normal(n, d), V = draw.normal(n, 5);
  const double c = 1.0 / std::sqrt(8.0);
  const arma::mat full = attn::math::attend(Q, K, V, c, attn::math::Mask::causal(n)).output;
  attn::math::KVCache cache(d, 5);
  for (arma::uword t = 0; t < n; ++t) {
    cache.append(K.row(t), V.row(t));
    EXPECT_EQ(cache.size(), t + 1);
    EXPECT_LE(relative_gap(cache.attend(Q.row(t), c), full.row(t)), 1e-12) << "step " << t;
  }
}

TEST(KVCache, ScoresNear700NeitherOverflowNorVanish) {
  attn::math::KVCache cache(1, 1);
  cache.append(arma::rowvec{30.0}, arma::rowvec{1.0});
  cache.append(arma::rowvec{29.9}, arma::rowvec{3.0});
  const arma::rowvec z = cache.attend(arma::rowvec{25.0}, 1.0);  // scores 750 and 747.5
  const double w = 1.0 / (1.0 + std::exp(-2.5));                 // the first key's weight
  EXPECT_NEAR(z(0), w * 1.0 + (1.0 - w) * 3.0, 1e-12);
}

TEST(KVCache, RefusesWhatDoesNotFit) {
  attn::math::KVCache cache(2, 3);
  EXPECT_THROW(cache.attend(arma::rowvec{1.0, 2.0}, 1.0), attn::math::InputError);
  EXPECT_THROW(cache.append(arma::rowvec{1.0}, arma::rowvec{1.0, 2.0, 3.0}),
               attn::math::ShapeError);
  cache.append(arma::rowvec{1.0, 2.0}, arma::rowvec{1.0, 2.0, 3.0});
  EXPECT_THROW(cache.attend(arma::rowvec{1.0, 2.0, 3.0}, 1.0), attn::math::ShapeError);
  EXPECT_THROW(attn::math::KVCache(0, 3), attn::math::InputError);
}

// The cache in float: each step equals the double cache's on the same (float) numbers within
// float's rounding (unit roundoff 6e-8, times the few operations of a step), and it refuses
// what the double cache refuses.
TEST(KVCacheFloat, EachStepIsTheDoubleCachesWithinFloatsRounding) {
  const attn_test::Normals draw(62);
  const arma::uword n = 300, d = 16;
  const arma::fmat Q = arma::conv_to<arma::fmat>::from(draw.normal(n, d));
  const arma::fmat K = arma::conv_to<arma::fmat>::from(draw.normal(n, d));
  const arma::fmat V = arma::conv_to<arma::fmat>::from(draw.normal(n, 4));
  const double c = 0.25;
  attn::math::KVCacheF single(d, 4);
  attn::math::KVCache twice(d, 4);
  for (arma::uword t = 0; t < n; ++t) {
    single.append(K.row(t), V.row(t));
    twice.append(arma::conv_to<arma::rowvec>::from(K.row(t)),
                 arma::conv_to<arma::rowvec>::from(V.row(t)));
    const arma::rowvec z = arma::conv_to<arma::rowvec>::from(single.attend(Q.row(t), c));
    EXPECT_LE(relative_gap(z, twice.attend(arma::conv_to<arma::rowvec>::from(Q.row(t)), c)), 1e-6)
        << "step " << t;
  }
  arma::frowvec bad = Q.row(0);
  bad(2) = arma::datum::nan;
  EXPECT_THROW(single.attend(bad, c), attn::math::InputError);
  EXPECT_THROW(single.append(bad, V.row(0)), attn::math::InputError);
  EXPECT_THROW(single.attend(arma::frowvec(3, arma::fill::ones), c), attn::math::ShapeError);
  EXPECT_THROW(attn::math::KVCacheF(4, 0), attn::math::InputError);
}

}  // namespace
