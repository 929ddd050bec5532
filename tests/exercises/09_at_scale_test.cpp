// Chapter 09's exercises: the online softmax one key at a time, and partial results merged, on
// the chapter's worked example (scores [1 3 2 5], V rows [1 0] [0 1] [1 1] [2 1]) and on
// random rows.
#include "09_at_scale.hpp"

#include "exercise_checks.hpp"

#include <09_at_scale/online_softmax.hpp>
#include <attn/math/softmax.hpp>
#include <attn/math/streaming.hpp>
#include <attn/numpy/numpy_random.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

using attn_exercise::near;
using namespace attn::exercises;

namespace {

const double kInf = std::numeric_limits<double>::infinity();
const arma::rowvec kScores = {1, 3, 2, 5};
const arma::mat kV = {{1, 0}, {0, 1}, {1, 1}, {2, 1}};

// m, l and O of two states agree within tolerance (−∞ equals −∞); otherwise the first that differs.
::testing::AssertionResult near_state(const std::string& what, const OnlineState& actual,
                                      const OnlineState& expected, double tolerance) {
  for (const ::testing::AssertionResult& part :
       {near(what + ", m", actual.m, expected.m, tolerance),
        near(what + ", l", actual.l, expected.l, tolerance),
        near(what + ", O", actual.o, expected.o, tolerance)}) {
    if (!part)
      return part;
  }
  return ::testing::AssertionSuccess();
}

// Keys first to last of (scores, V), folded one at a time with online_update.
OnlineState fold(const arma::rowvec& scores, const arma::mat& V, arma::uword first,
                 arma::uword last) {
  OnlineState state = OnlineState::empty(V.n_cols);
  for (arma::uword j = first; j <= last; ++j) {
    state = online_update(state, scores(j), V.row(j));
  }
  return state;
}

// The library's state after keys first to last, for exercise 9.2, which must not rely on 9.1.
OnlineState library_state(const arma::rowvec& scores, const arma::mat& V, arma::uword first,
                          arma::uword last) {
  const attn::ch09::OnlineStep step =
      attn::ch09::online_softmax_steps(scores.cols(first, last), V.rows(first, last), 1).back();
  return {step.m, step.l, step.O};
}

}  // namespace

// Chapter 09's worked example, key by key: the numbers the chapter prints after each block of 2.
TEST(Exercise9_1, ChaptersExampleKeyByKey) {
  const OnlineState half = fold(kScores, kV, 0, 1);
  EXPECT_TRUE(near("after keys 1, 2: m", half.m, 3.0, 0.0));
  EXPECT_TRUE(near("after keys 1, 2: l", half.l, 1.135335, 5e-7));
  EXPECT_TRUE(near("after keys 1, 2: O", half.o, arma::rowvec{0.135335, 1.000000}, 5e-7));
  const OnlineState all = fold(kScores, kV, 0, 3);
  EXPECT_TRUE(near("after keys 1 to 4: m", all.m, 5.0, 0.0));
  EXPECT_TRUE(near("after keys 1 to 4: l", all.l, 1.203438, 5e-7));
  EXPECT_TRUE(near("after keys 1 to 4: O", all.o, arma::rowvec{2.068103, 1.185122}, 5e-7));
  EXPECT_TRUE(near("the output O / l", all.o / all.l, arma::rowvec{1.718495, 0.984781}, 5e-7));
  EXPECT_TRUE(near("the log-sum-exp m + log l", all.m + std::log(all.l), 5.185182, 5e-7));
}

// On random rows the fold is the softmax, not an approximation: O / l = softmax(scores) V.
TEST(Exercise9_1, EqualsTheSoftmaxOnRandomRows) {
  attn::numpy::Generator rng = attn::numpy::default_rng(9);
  const arma::rowvec scores = 4.0 * rng.normal(1, 40);
  const arma::mat V = rng.normal(40, 3);
  const OnlineState state = fold(scores, V, 0, 39);
  EXPECT_TRUE(near("m after 40 keys (the largest score)", state.m, scores.max(), 0.0));
  EXPECT_TRUE(
      near("l after 40 keys", state.l, arma::accu(arma::exp(scores - scores.max())), 1e-13));
  EXPECT_TRUE(
      near("O / l after 40 keys", state.o / state.l, attn::math::softmax(scores) * V, 1e-13));
}

// The first key from the empty state (m = −∞) gives m = s, l = 1, O = v, with no NaN.
TEST(Exercise9_1, TheFirstKeyGivesNoNaN) {
  OnlineState expected;
  expected.m = 1.0;
  expected.l = 1.0;
  expected.o = {1.0, 0.0};
  EXPECT_TRUE(near_state("the empty state after one key of score 1 and value [1 0]",
                         online_update(OnlineState::empty(2), 1.0, {1.0, 0.0}), expected, 0.0));
  expected.m = -3.0;
  expected.o = {0.5, -2.0};
  EXPECT_TRUE(near_state("the empty state after one key of score -3 and value [0.5 -2]",
                         online_update(OnlineState::empty(2), -3.0, {0.5, -2.0}), expected, 0.0));
}

// A masked key (score −∞) changes nothing: not the empty state, not a state with keys in it.
TEST(Exercise9_1, AMaskedKeyChangesNothing) {
  const OnlineState empty = OnlineState::empty(2);
  EXPECT_TRUE(near_state("the empty state after a masked key", online_update(empty, -kInf, {2, 1}),
                         empty, 0.0))
      << "a key of score -inf has weight 0, so it must leave m = -inf, l = 0, O = [0 0]";
  OnlineState two_keys;  // chapter 09's state after keys 1 and 2
  two_keys.m = 3.0;
  two_keys.l = std::exp(-2.0) + 1.0;
  two_keys.o = {std::exp(-2.0), 1.0};
  EXPECT_TRUE(near_state("the state after keys 1, 2 and then a masked key",
                         online_update(two_keys, -kInf, {2, 1}), two_keys, 0.0));
}

// Chapter 09's keys {1, 2} merged with {3, 4} give the state of all four.
TEST(Exercise9_2, ChaptersHalvesMergeIntoTheWhole) {
  const OnlineState merged =
      merge_states(library_state(kScores, kV, 0, 1), library_state(kScores, kV, 2, 3));
  EXPECT_TRUE(near_state("keys {1, 2} merged with keys {3, 4}", merged,
                         library_state(kScores, kV, 0, 3), 1e-14));
  EXPECT_TRUE(near("the merged l", merged.l, 1.203438, 5e-7));
  EXPECT_TRUE(
      near("the merged output O / l", merged.o / merged.l, arma::rowvec{1.718495, 0.984781}, 5e-7));
}

// The empty state is the identity of the merge, on either side, and two empties give no NaN.
TEST(Exercise9_2, MergingWithTheEmptyStateChangesNothing) {
  const OnlineState empty = OnlineState::empty(2);
  const OnlineState some = library_state(kScores, kV, 0, 2);
  EXPECT_TRUE(near_state("merge_states(empty, s)", merge_states(empty, some), some, 0.0));
  EXPECT_TRUE(near_state("merge_states(s, empty)", merge_states(some, empty), some, 0.0));
  EXPECT_TRUE(near_state("merge_states(empty, empty)", merge_states(empty, empty), empty, 0.0))
      << "two parts with no key make a part with no key: m = -inf, l = 0, O = [0 0]";
}

// Which part comes first does not matter, whichever holds the larger maximum.
TEST(Exercise9_2, OrderDoesNotMatter) {
  attn::numpy::Generator rng = attn::numpy::default_rng(10);
  const arma::rowvec scores = 4.0 * rng.normal(1, 40);
  const arma::mat V = rng.normal(40, 3);
  const OnlineState a = library_state(scores, V, 0, 24), b = library_state(scores, V, 25, 39);
  const OnlineState ab = merge_states(a, b);
  EXPECT_TRUE(
      near_state("merge_states(b, a) against merge_states(a, b)", merge_states(b, a), ab, 1e-15));
  EXPECT_TRUE(near_state("merge_states(a, b) against all 40 keys", ab,
                         library_state(scores, V, 0, 39), 1e-13));
  EXPECT_TRUE(near("the merged output O / l", ab.o / ab.l, attn::math::softmax(scores) * V, 1e-13));
}
