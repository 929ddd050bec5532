// Chapter 13's exercises: a head's weight on the previous token and its induction score, each held
// to a pattern worked by hand, refusing bad shapes, and held to the library's own measures
// (attn::gpt::profile(), attn::gpt::induction_score()) on random causal heads.
#include "13_what_heads_learned.hpp"

#include "exercise_checks.hpp"

#include <attn/gpt/heads.hpp>
#include <attn/math/layers.hpp>
#include <attn/math/mask.hpp>

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

using attn_exercise::near;
using namespace attn::exercises;

namespace {

// A random causal head over n tokens: the softmax of random scores, nothing above the diagonal.
arma::mat random_head(arma::uword n, unsigned seed) {
  arma::arma_rng::set_seed(seed);
  const arma::mat scores = 3.0 * arma::randn<arma::mat>(n, n);
  return attn::math::masked_softmax_rows(scores, attn::math::Mask::causal(n));
}

// ---- Exercise 13.1 ----

TEST(Exercise13_1, ScoresThePatternWorkedByHand) {
  const arma::mat a = {{1.0, 0.0, 0.0}, {0.25, 0.75, 0.0}, {0.5, 0.5, 0.0}};
  EXPECT_TRUE(
      near("previous_token_score of the 3 x 3 example", previous_token_score(a), 0.375, 1e-15));
  EXPECT_TRUE(near("a head that looks only at itself scores 0",
                   previous_token_score(arma::eye(5, 5).eval()), 0.0, 1e-15));
  arma::mat previous(5, 5, arma::fill::zeros);  // query 0 on itself, every other on the one before
  previous(0, 0) = 1.0;
  previous.diag(-1).ones();
  EXPECT_TRUE(
      near("a perfect previous-token head scores 1", previous_token_score(previous), 1.0, 1e-15));
}

TEST(Exercise13_1, RefusesWeightsThatAreNotASquareOfTwoRows) {
  EXPECT_THROW(previous_token_score(arma::mat(2, 3, arma::fill::zeros)), std::invalid_argument);
  EXPECT_THROW(previous_token_score(arma::mat(1, 1, arma::fill::ones)), std::invalid_argument);
}

TEST(Exercise13_1, EqualsTheLibrarysProfileOnRandomHeads) {
  for (unsigned seed = 1; seed <= 5; ++seed) {
    const arma::mat a = random_head(4 + seed, seed);
    EXPECT_TRUE(near("previous_token_score of random head " + std::to_string(seed),
                     previous_token_score(a), attn::gpt::profile(a).previous_token, 1e-12));
  }
}

// ---- Exercise 13.2 ----

TEST(Exercise13_2, ScoresThePatternWorkedByHand) {
  arma::mat a(6, 6, arma::fill::zeros);  // "a b c a b c", f = 0, p = 3
  for (arma::uword i = 0; i < 3; ++i)
    a(i, 0) = 1.0;
  a(3, 1) = 0.5;  // "a" on the "b" that followed the first "a"
  a(3, 3) = 0.5;
  a(4, 2) = 0.25;
  a(4, 0) = 0.75;
  a(5, 3) = 0.75;
  a(5, 5) = 0.25;
  EXPECT_TRUE(
      near("induction_score_of the 6 x 6 example", induction_score_of(a, 0, 3), 0.5, 1e-15));
}

TEST(Exercise13_2, ScoresAPerfectInductionHeadOneAndAPreviousTokenHeadZero) {
  const arma::uword f = 1, p = 4, n = f + 2 * p;
  arma::mat induction(n, n, arma::fill::zeros);
  arma::mat previous(n, n, arma::fill::zeros);
  for (arma::uword i = 0; i < n; ++i) {
    induction(i, i >= f + p ? i - p + 1 : 0) = 1.0;
    previous(i, i == 0 ? 0 : i - 1) = 1.0;
  }
  EXPECT_TRUE(near("a perfect induction head", induction_score_of(induction, f, p), 1.0, 1e-15));
  EXPECT_TRUE(near("a previous-token head", induction_score_of(previous, f, p), 0.0, 1e-15));
}

TEST(Exercise13_2, RefusesAPeriodOfZeroAndTooFewRows) {
  const arma::mat a = random_head(6, 7);
  EXPECT_THROW(induction_score_of(a, 0, 0), std::invalid_argument);
  EXPECT_THROW(induction_score_of(a, 1, 3), std::invalid_argument);  // needs 7 rows
  EXPECT_THROW(induction_score_of(arma::mat(6, 5, arma::fill::zeros), 0, 2), std::invalid_argument);
}

TEST(Exercise13_2, EqualsTheLibrarysScoreOnRandomHeads) {
  for (unsigned seed = 1; seed <= 5; ++seed) {
    const arma::mat a = random_head(12, 10 + seed);
    const arma::uword first = seed % 3, period = 2 + seed % 3;
    EXPECT_TRUE(near("induction_score_of random head " + std::to_string(seed),
                     induction_score_of(a, first, period),
                     attn::gpt::induction_score(a, first, period), 1e-12));
  }
}

}  // namespace
