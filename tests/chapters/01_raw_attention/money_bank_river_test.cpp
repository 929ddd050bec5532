// Chapter 01's example: article 004's money, bank and river give its scores and blend.
#include <01_raw_attention/money_bank_river.hpp>
#include <attn/math/attention.hpp>

#include <gtest/gtest.h>

#include <cmath>

namespace {

// Article 004: "bank" asks; its scores are exactly 0.2, 1.0 and 0.7, and its blend is
// [0.734, 0.441] to the article's three decimals.
TEST(MoneyBankRiver, BankGetsTheArticlesScoresAndBlend) {
  const auto m = attn::ch01::money_bank_river();
  ASSERT_EQ(m.tokens[m.bank], "bank");
  const attn::math::Attention bank = attn::math::raw_attention_for(m.embeddings, m.bank);
  EXPECT_TRUE(arma::approx_equal(bank.scores, arma::mat{{0.2, 1.0, 0.7}}, "absdiff", 1e-15));
  EXPECT_NEAR(bank.output(0), 0.734, 5e-4);
  EXPECT_NEAR(bank.output(1), 0.441, 5e-4);
}

// The grid's bank row is the same computation as bank asking alone.
TEST(MoneyBankRiver, TheGridsBankRowIsBanksOwnQuery) {
  const auto m = attn::ch01::money_bank_river();
  const attn::math::Attention all = attn::math::raw_self_attention(m.embeddings);
  const attn::math::Attention bank = attn::math::raw_attention_for(m.embeddings, m.bank);
  EXPECT_TRUE(arma::approx_equal(all.weights.row(m.bank), bank.weights, "absdiff", 1e-15));
  EXPECT_TRUE(arma::approx_equal(all.output.row(m.bank), bank.output, "absdiff", 1e-15));
}

}  // namespace
