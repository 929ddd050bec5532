// Chapter 09's views of the online softmax: the recurrence worked by hand, also with scores
// that span 2000 (shifted by the running maximum, as tests/lib/math/stability_test.cpp asks of
// the streaming pass), the plan of blocks and the memory by formula.
#include <09_at_scale/online_softmax.hpp>
#include <attn/math/compare.hpp>
#include <attn/math/validate.hpp>

#include <gtest/gtest.h>

#include "bad_input.hpp"
#include "extreme_scores.hpp"
#include "normal_inputs.hpp"

#include <cmath>
#include <vector>

namespace {

using attn::math::relative_gap;  // throws on a NaN, which a wrong shift gives
using attn_bad_input::kInf;
using attn_bad_input::kNaN;
using attn_bad_input::ones;
using attn_bad_input::ThrowsNaming;
using attn_bad_input::with;
using attn_test::top_two_weights;

TEST(OnlineSoftmax, TheWorkedRecurrence) {
  const arma::rowvec scores = {1.0, 3.0, 2.0, 5.0};
  const arma::mat V = {{1.0, 0.0}, {0.0, 1.0}, {1.0, 1.0}, {2.0, 1.0}};
  const auto steps = attn::ch09::online_softmax_steps(scores, V, 2);
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

// One query's scores, its largest in the middle and the last blocks 2000 below it: a block's
// exponentials must be shifted by the running maximum, the largest score seen so far, not by the
// block's own smallest or largest score.
TEST(OnlineSoftmaxStability, BlocksSpanning2000AreShiftedByTheRunningMaximum) {
  const arma::rowvec scores = {-1000.0, 1000.0, 999.0, -1000.0, -1000.0, -1000.0};
  const arma::mat V = attn_test::Normals(73).normal(6, 2);
  const arma::rowvec t = top_two_weights();
  const arma::rowvec expected = t(0) * V.row(1) + t(1) * V.row(2);
  for (arma::uword block : {1, 2, 3, 4, 6}) {
    const std::vector<attn::ch09::OnlineStep> steps =
        attn::ch09::online_softmax_steps(scores, V, block);
    ASSERT_FALSE(steps.empty());
    const attn::ch09::OnlineStep& last = steps.back();
    EXPECT_EQ(last.m, 1000.0) << "block " << block;
    EXPECT_NEAR(last.l, 1.0 + std::exp(-1.0), 1e-15) << "block " << block;  // a few ε of 1.37
    EXPECT_LE(relative_gap(last.O / last.l, expected), 1e-15) << "block " << block;
  }
}

TEST(StreamingSchedule, CausalSkipsTheBlocksAboveTheDiagonal) {
  // 5 queries and 6 keys in blocks of 2 queries and 4 keys: query block 0 (rows 0-1) sees keys
  // 0-1 only, so key block 1 (keys 4-5) is skipped; rows 4 sees keys 0-4, partly block 1.
  const arma::umat plan = attn::ch09::streaming_schedule(5, 6, {true, 0}, {2, 4});
  // The plan {{1, 0}, {1, 0}, {2, 1}}, column by column. (Written as a small arma::umat here,
  // GCC 12 warned of freeing a non-heap object, Armadillo's storage for small matrices.)
  ASSERT_EQ(plan.n_rows, 3u);
  EXPECT_EQ(arma::conv_to<std::vector<arma::uword>>::from(arma::vectorise(plan)),
            (std::vector<arma::uword>{1, 1, 2, 0, 0, 1}))
      << plan;
  const arma::umat padded = attn::ch09::streaming_schedule(3, 10, {false, 5}, {3, 4});
  EXPECT_TRUE(arma::approx_equal(padded, arma::umat{{2, 1, 0}}, "absdiff", 0)) << padded;
  EXPECT_TRUE(arma::all(arma::vectorise(attn::ch09::streaming_schedule(7, 7, {}, {3, 3})) == 2));
  EXPECT_THROW(attn::ch09::streaming_schedule(0, 3, {}), attn::math::InputError);
}

TEST(AttentionMemory, TheFormulasAtTheChaptersSize) {
  const attn::ch09::AttentionMemory m = attn::ch09::attention_memory(65536, 65536, 64, 64);
  EXPECT_EQ(m.reference_grids, 3.0 * 65536.0 * 65536.0 * 8.0);  // 103079.2 MB
  EXPECT_EQ(m.streaming_data, 4.0 * 65536.0 * 64.0 * 8.0);      // 134.2 MB
  EXPECT_EQ(m.streaming_block, 128.0 * 256.0 * 8.0);
  EXPECT_EQ(attn::ch09::attention_memory(10, 30, 4, 2, {5, 7}).streaming_data,
            (40 * 4 + 40 * 2) * 8.0);
}

TEST(BadInput, OnlineSoftmaxStepsNameTheirOperands) {
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] {
        attn::ch09::online_softmax_steps(arma::rowvec{1.0, -kInf}, ones(2, 1), 1);
      },
      "scores"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] {
        attn::ch09::online_softmax_steps(arma::rowvec{1.0, 2.0}, with(ones(2, 1), 1, 0, kNaN), 1);
      },
      "V"));
  EXPECT_TRUE(ThrowsNaming<attn::math::ShapeError>(
      [] {
        attn::ch09::online_softmax_steps(arma::rowvec{1.0, 2.0}, ones(3, 1), 1);
      },
      "V (3 × 1)"));
}

TEST(BadInput, AttentionMemoryOfNothingIsNothing) {
  EXPECT_EQ(attn::ch09::attention_memory(0, 0, 0, 0).streaming_data, 0.0);
}

}  // namespace
