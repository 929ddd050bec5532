#include <attn/attention.hpp>
#include <attn/examples.hpp>
#include <attn/validate.hpp>

#include <gtest/gtest.h>

#include <cmath>

namespace {

using attn::examples::nimbus_thread;
using attn::examples::token_index;

// Article 004: "bank" asks; its scores are exactly 0.2, 1.0 and 0.7, and its blend is
// [0.734, 0.441] to the article's three decimals.
TEST(MoneyBankRiver, BankGetsTheArticlesScoresAndBlend) {
  const auto m = attn::examples::money_bank_river();
  ASSERT_EQ(m.tokens[m.bank], "bank");
  const attn::Attention bank = attn::raw_attention_for(m.embeddings, m.bank);
  EXPECT_TRUE(arma::approx_equal(bank.scores, arma::mat{{0.2, 1.0, 0.7}}, "absdiff", 1e-15));
  EXPECT_NEAR(bank.output(0), 0.734, 5e-4);
  EXPECT_NEAR(bank.output(1), 0.441, 5e-4);
}

// The grid's bank row is the same computation as bank asking alone.
TEST(MoneyBankRiver, TheGridsBankRowIsBanksOwnQuery) {
  const auto m = attn::examples::money_bank_river();
  const attn::Attention all = attn::raw_self_attention(m.embeddings);
  const attn::Attention bank = attn::raw_attention_for(m.embeddings, m.bank);
  EXPECT_TRUE(arma::approx_equal(all.weights.row(m.bank), bank.weights, "absdiff", 1e-15));
  EXPECT_TRUE(arma::approx_equal(all.output.row(m.bank), bank.output, "absdiff", 1e-15));
}

TEST(NimbusThread, ShapesMatchTheDesign) {
  const auto t = nimbus_thread();
  EXPECT_EQ(t.tokens.size(), 6u);
  EXPECT_EQ(attn::shape_of(t.embeddings), "(6 × 2)");
  EXPECT_EQ(attn::shape_of(t.projections.W_Q), "(2 × 2)");
  EXPECT_NE(arma::det(t.projections.W_V), 0.0) << "W_V must keep all information";
}

TEST(NimbusThread, ReproducesModuleNumbersBeforeRounding) {
  const auto t = nimbus_thread();
  const attn::QKV qkv = attn::project(t.embeddings, t.projections);
  const arma::uword exp = token_index(t.tokens, "export"), fail = token_index(t.tokens, "fail");
  EXPECT_NEAR(qkv.Q(exp, 0), 0.35, 1e-12);
  EXPECT_NEAR(qkv.Q(exp, 1), 0.22, 1e-12);
  EXPECT_NEAR(arma::dot(qkv.Q.row(exp), qkv.K.row(fail)) / std::sqrt(2.0), 0.504 / std::sqrt(2.0),
              1e-12);
}

TEST(TokenIndex, UnknownTokenListsTheValidOnes) {
  const auto t = nimbus_thread();
  EXPECT_EQ(token_index(t.tokens, "Nimbus"), 3u);
  try {
    token_index(t.tokens, "bank");
    FAIL() << "unknown token accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "unknown token \"bank\"; the tokens are: why, did, my, Nimbus, export, fail");
  }
}

TEST(StrongestOther, LeavesTheQueryItselfOut) {
  const arma::mat w = {{0.7, 0.2, 0.1}, {0.3, 0.3, 0.4}, {0.5, 0.1, 0.4}};
  EXPECT_EQ(attn::strongest_other(w, 0), 1u);
  EXPECT_EQ(attn::strongest_other(w, 1), 2u);
  EXPECT_EQ(attn::strongest_other(w, 2), 0u);
}

TEST(StrongestOther, RejectsNonSquareGridsAndBadRows) {
  EXPECT_THROW(attn::strongest_other(arma::mat(2, 3, arma::fill::ones), 0), attn::ShapeError);
  EXPECT_THROW(attn::strongest_other(arma::mat(1, 1, arma::fill::ones), 0), attn::ShapeError);
  EXPECT_THROW(attn::strongest_other(arma::mat(2, 2, arma::fill::ones), 2), std::out_of_range);
}

// Article 004's draws: X (n × 8) first, then W_Q, W_K, W_V (8 × 4), each times 0.5. numpy's
// default_rng(0).normal() starts 0.1257302210933933, -0.1321048632913019 (numpy 1.24).
TEST(RandomSentence, DrawsInTheArticlesOrder) {
  const auto s = attn::examples::random_sentence("0", "the cat drank the milk");
  ASSERT_EQ(s.tokens.size(), 5u);
  EXPECT_EQ(s.X.n_rows, 5u);
  EXPECT_EQ(s.X.n_cols, 8u);
  EXPECT_EQ(s.W.W_V.n_cols, 4u);
  EXPECT_DOUBLE_EQ(s.X(0, 0), 0.1257302210933933);
  EXPECT_DOUBLE_EQ(s.X(0, 1), -0.1321048632913019);  // C order: along the first row
  const auto wide = attn::examples::random_sentence("0", "a b", {6, 3, 2, 1.0});
  EXPECT_EQ(wide.X.n_cols, 6u);
  EXPECT_EQ(wide.W.W_Q.n_cols, 3u);
  EXPECT_EQ(wide.W.W_V.n_cols, 2u);
  EXPECT_DOUBLE_EQ(wide.X(0, 0), s.X(0, 0));
  EXPECT_THROW(attn::examples::random_sentence("0", "   "), std::invalid_argument);
  EXPECT_THROW(attn::examples::random_sentence("-1", "a"), std::invalid_argument);
}

}  // namespace
