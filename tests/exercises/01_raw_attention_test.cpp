// Chapter 01's exercises: the softmax of a row, and "bank"'s blend with the article's numbers.
#include "01_raw_attention.hpp"

#include "exercise_checks.hpp"

#include <01_raw_attention/money_bank_river.hpp>
#include <attn/math/softmax.hpp>

#include <gtest/gtest.h>

using attn_exercise::near;
using namespace attn::exercises;

TEST(Exercise1_1, BanksWeightsAreTheArticles) {
  const arma::rowvec weights = row_softmax({0.2, 1.0, 0.7});
  // The article prints two digits; chapter 01 prints five: 0.20516 0.45659 0.33825.
  EXPECT_TRUE(near("the weights of [0.2 1.0 0.7], to the article's two digits", weights,
                   arma::rowvec{0.21, 0.46, 0.34}, 0.005));
  EXPECT_TRUE(near("the weights of [0.2 1.0 0.7]", weights, arma::rowvec{0.20516, 0.45659, 0.33825},
                   0.000005));
}

TEST(Exercise1_1, WeightsArePositiveAndSumToOne) {
  const arma::rowvec scores{-3.0, 0.0, 2.5, 2.5, 7.0};
  const arma::rowvec weights = row_softmax(scores);
  EXPECT_TRUE(near("the sum of the weights", arma::accu(weights), 1.0, 1e-12));
  EXPECT_TRUE(weights.min() > 0.0)
      << "every weight must be positive; the smallest is " << weights.min();
  EXPECT_TRUE(
      near("the weights of two equal scores (entries 2 and 3)", weights(2), weights(3), 0.0));
  EXPECT_TRUE(near("the weights", weights, attn::math::softmax(scores), 1e-15));
}

TEST(Exercise1_1, LargeScoresDoNotOverflow) {
  // e^1000 is infinite in a double, so exp(s) / sum(exp(s)) would give inf / inf = NaN.
  const arma::rowvec weights = row_softmax({1000.0, 999.0, 998.0});
  EXPECT_TRUE(weights.is_finite()) << "the weights of [1000 999 998] are not finite: " << weights
                                   << "subtract the largest score first";
  EXPECT_TRUE(near("the weights of [1000 999 998] (the same as of [2 1 0])", weights,
                   attn::math::softmax(arma::rowvec{2.0, 1.0, 0.0}), 1e-15));
}

TEST(Exercise1_2, BanksBlendIsTheArticles) {
  const auto example = attn::ch01::money_bank_river();
  const arma::rowvec z_bank = blend_for(example.embeddings, example.bank);
  EXPECT_TRUE(
      near("z_bank, to the article's three digits", z_bank, arma::rowvec{0.734, 0.441}, 0.0005));
  EXPECT_TRUE(near("z_bank, to chapter 01's six digits", z_bank, arma::rowvec{0.734397, 0.441214},
                   0.0000005));
}

TEST(Exercise1_2, EveryTokensBlendIsChapter01s) {
  const auto example = attn::ch01::money_bank_river();
  // Chapter 01: money -> [0.541, 0.689], river -> [0.622, 0.595].
  EXPECT_TRUE(
      near("z_money", blend_for(example.embeddings, 0), arma::rowvec{0.541, 0.689}, 0.0005));
  EXPECT_TRUE(
      near("z_river", blend_for(example.embeddings, 2), arma::rowvec{0.622, 0.595}, 0.0005));
}

TEST(Exercise1_2, AQueryOutsideTheSentenceIsRefused) {
  const auto example = attn::ch01::money_bank_river();
  EXPECT_THROW(blend_for(example.embeddings, 3), std::out_of_range)
      << "E has 3 rows (0, 1, 2), so query 3 must throw std::out_of_range";
}
