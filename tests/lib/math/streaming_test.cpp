// Streaming attention, the readable form (attn::streaming_attention): the online softmax block
// by block equals the reference attend() on many shapes, block sizes, masks and extreme scores; and
// the recurrence worked by hand.
#include <attn/math/attention.hpp>
#include <attn/math/mask.hpp>
#include <attn/math/measure.hpp>
#include <attn/math/streaming.hpp>
#include <attn/math/validate.hpp>

#include <gtest/gtest.h>

#include "normal_inputs.hpp"

#include <cmath>
#include <limits>
#include <tuple>
#include <vector>

namespace {

using attn::relative_gap;  // |a − b| relative to the largest |b|: outputs of any size alike

TEST(OnlineSoftmax, TheWorkedRecurrence) {
  const arma::rowvec scores = {1.0, 3.0, 2.0, 5.0};
  const arma::mat V = {{1.0, 0.0}, {0.0, 1.0}, {1.0, 1.0}, {2.0, 1.0}};
  const auto steps = attn::online_softmax_steps(scores, V, 2);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].m, 3.0);
  EXPECT_NEAR(steps[0].l, 1.135335, 5e-7);
  EXPECT_NEAR(steps[0].O(0), 0.135335, 5e-7);
  EXPECT_NEAR(steps[0].O(1), 1.0, 5e-7);
  EXPECT_EQ(steps[1].m, 5.0);
  EXPECT_NEAR(steps[1].l, 1.203438, 5e-7);
  EXPECT_NEAR(steps[1].O(0), 2.068103, 5e-7);
  EXPECT_NEAR(steps[1].O(1), 1.185122, 5e-7);
  const arma::rowvec out = steps[1].O / steps[1].l;
  EXPECT_NEAR(out(0), 1.718495, 5e-7);
  EXPECT_NEAR(out(1), 0.984781, 5e-7);
  EXPECT_NEAR(steps[1].m + std::log(steps[1].l), 5.185182, 5e-7);
  // equal to the direct softmax of the same scores
  const arma::rowvec w =
      arma::exp(scores - scores.max()) / arma::accu(arma::exp(scores - scores.max()));
  EXPECT_LE(arma::abs(out - w * V).max(), 1e-15);
}

using Case = std::tuple<int, int, int, int, int,
                        int>;  // n, m, d, bq, bk, mask (0 none, 1 causal, 2 padding)
class StreamingShapes : public ::testing::TestWithParam<Case> {};

TEST_P(StreamingShapes, EqualsTheReference) {
  const auto [n, m, d, bq, bk, which] = GetParam();
  const attn_test::Normals draw(static_cast<std::uint64_t>(n * 1000 + m * 10 + d + which));
  const arma::mat Q = draw.normal(n, d), K = draw.normal(m, d), V = draw.normal(m, 3);
  const double c = 1.0 / std::sqrt(static_cast<double>(d));
  attn::StreamingMask rule;
  attn::Mask grid = attn::Mask::none(n, m);
  if (which == 1) {
    rule.causal = true;
    grid = attn::Mask::from_allowed(arma::trimatl(arma::umat(n, m, arma::fill::ones)));
  } else if (which == 2) {
    rule.key_length = (m + 1) / 2;
    grid = attn::Mask::padding(n, m, rule.key_length);
  }
  const attn::Attention reference = attn::attend(Q, K, V, c, grid);
  const attn::StreamingAttention fast = attn::streaming_attention(
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

TEST(StreamingSchedule, CausalSkipsTheBlocksAboveTheDiagonal) {
  // 5 queries and 6 keys in blocks of 2 queries and 4 keys: query block 0 (rows 0-1) sees keys
  // 0-1 only, so key block 1 (keys 4-5) is skipped; rows 4 sees keys 0-4, partly block 1.
  const arma::umat plan = attn::streaming_schedule(5, 6, {true, 0}, {2, 4});
  const arma::umat want = {{1, 0}, {1, 0}, {2, 1}};
  EXPECT_TRUE(arma::approx_equal(plan, want, "absdiff", 0)) << plan;
  const arma::umat padded = attn::streaming_schedule(3, 10, {false, 5}, {3, 4});
  EXPECT_TRUE(arma::approx_equal(padded, arma::umat{{2, 1, 0}}, "absdiff", 0)) << padded;
  EXPECT_TRUE(arma::all(arma::vectorise(attn::streaming_schedule(7, 7, {}, {3, 3})) == 2));
  EXPECT_THROW(attn::streaming_schedule(0, 3, {}), attn::InputError);
}

TEST(Merge, TwoHalvesOfTheKeysMakeTheWhole) {
  const attn_test::Normals draw(91);
  const arma::mat Q = draw.normal(37, 8), K = draw.normal(50, 8), V = draw.normal(50, 3);
  const attn::StreamingAttention whole = attn::streaming_attention(Q, K, V, 0.4);
  const attn::StreamingAttention left =
      attn::streaming_attention(Q, K.rows(0, 19), V.rows(0, 19), 0.4);
  const attn::StreamingAttention right =
      attn::streaming_attention(Q, K.rows(20, 49), V.rows(20, 49), 0.4);
  const attn::StreamingAttention merged = attn::merge(left, right);
  EXPECT_LE(relative_gap(merged.output, whole.output), 1e-12);
  EXPECT_LE(relative_gap(merged.log_sum_exp, whole.log_sum_exp), 1e-12);
  EXPECT_THROW(attn::merge(left, attn::streaming_attention(Q.rows(0, 3), K, V, 0.4)),
               attn::ShapeError);
}

TEST(AttentionMemory, TheFormulasAtTheChaptersSize) {
  const attn::AttentionMemory m = attn::attention_memory(65536, 65536, 64, 64);
  EXPECT_EQ(m.reference_grids, 3.0 * 65536.0 * 65536.0 * 8.0);  // 103079.2 MB
  EXPECT_EQ(m.streaming_data, 4.0 * 65536.0 * 64.0 * 8.0);      // 134.2 MB
  EXPECT_EQ(m.streaming_block, 128.0 * 256.0 * 8.0);
  EXPECT_EQ(attn::attention_memory(10, 30, 4, 2, {5, 7}).streaming_data, (40 * 4 + 40 * 2) * 8.0);
}

TEST(Streaming, ScoresNear700NeitherOverflowNorVanish) {
  const attn_test::Normals draw(51);
  arma::mat Q = draw.normal(9, 2), K = draw.normal(12, 2);
  const arma::mat V = draw.normal(12, 2);
  Q.col(0).fill(35.0);
  K.col(0).fill(20.0);  // scores about 700
  for (double sign : {1.0, -1.0}) {
    const attn::StreamingAttention fast =
        attn::streaming_attention(Q * sign, K, V, 1.0, {}, {4, 5});
    EXPECT_TRUE(fast.output.is_finite());
    EXPECT_LE(relative_gap(fast.output, attn::attend(Q * sign, K, V, 1.0).output), 1e-12);
  }
}

TEST(Streaming, RefusesWhatItCannotCompute) {
  const arma::mat Q(3, 2, arma::fill::ones), K(4, 2, arma::fill::ones), V(4, 1, arma::fill::ones);
  EXPECT_THROW(attn::streaming_attention(Q, K, V, 1.0, {}, {0, 4}), attn::InputError);
  EXPECT_THROW(attn::streaming_attention(Q, arma::mat(4, 3, arma::fill::ones), V, 1.0),
               attn::ShapeError);
  EXPECT_THROW(attn::streaming_attention(Q, K, arma::mat(5, 1, arma::fill::ones), 1.0),
               attn::ShapeError);
  arma::mat bad = Q;
  bad(1, 1) = arma::datum::nan;
  EXPECT_THROW(attn::streaming_attention(bad, K, V, 1.0), attn::InputError);
}

TEST(KVCache, DecodingStepByStepIsFullCausalAttentionRowByRow) {
  const attn_test::Normals draw(61);
  const arma::uword n = 40, d = 8;
  const arma::mat Q = draw.normal(n, d), K = draw.normal(n, d), V = draw.normal(n, 5);
  const double c = 1.0 / std::sqrt(8.0);
  const arma::mat full = attn::attend(Q, K, V, c, attn::Mask::causal(n)).output;
  attn::KVCache cache(d, 5);
  for (arma::uword t = 0; t < n; ++t) {
    cache.append(K.row(t), V.row(t));
    EXPECT_EQ(cache.size(), t + 1);
    EXPECT_LE(relative_gap(cache.attend(Q.row(t), c), full.row(t)), 1e-12) << "step " << t;
  }
}

TEST(KVCache, ScoresNear700NeitherOverflowNorVanish) {
  attn::KVCache cache(1, 1);
  cache.append(arma::rowvec{30.0}, arma::rowvec{1.0});
  cache.append(arma::rowvec{29.9}, arma::rowvec{3.0});
  const arma::rowvec z = cache.attend(arma::rowvec{25.0}, 1.0);  // scores 750 and 747.5
  const double w = 1.0 / (1.0 + std::exp(-2.5));                 // the first key's weight
  EXPECT_NEAR(z(0), w * 1.0 + (1.0 - w) * 3.0, 1e-12);
}

TEST(KVCache, RefusesWhatDoesNotFit) {
  attn::KVCache cache(2, 3);
  EXPECT_THROW(cache.attend(arma::rowvec{1.0, 2.0}, 1.0), attn::InputError);
  EXPECT_THROW(cache.append(arma::rowvec{1.0}, arma::rowvec{1.0, 2.0, 3.0}), attn::ShapeError);
  cache.append(arma::rowvec{1.0, 2.0}, arma::rowvec{1.0, 2.0, 3.0});
  EXPECT_THROW(cache.attend(arma::rowvec{1.0, 2.0, 3.0}, 1.0), attn::ShapeError);
  EXPECT_THROW(attn::KVCache(0, 3), attn::InputError);
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
  attn::KVCacheF single(d, 4);
  attn::KVCache twice(d, 4);
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
  EXPECT_THROW(single.attend(bad, c), attn::InputError);
  EXPECT_THROW(single.append(bad, V.row(0)), attn::InputError);
  EXPECT_THROW(single.attend(arma::frowvec(3, arma::fill::ones), c), attn::ShapeError);
  EXPECT_THROW(attn::KVCacheF(4, 0), attn::InputError);
}

}  // namespace
