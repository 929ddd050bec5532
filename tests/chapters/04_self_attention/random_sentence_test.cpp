// Chapter 04's random sentence: drawn in article 004's order, equal to numpy's draws.
#include <04_self_attention/random_sentence.hpp>

#include <gtest/gtest.h>

#include <cmath>

namespace {

// Article 004's draws: X (n × 8) first, then W_Q, W_K, W_V (8 × 4), each times 0.5. numpy's
// default_rng(0).normal() starts 0.1257302210933933, -0.1321048632913019 (numpy 1.24).
TEST(RandomSentence, DrawsInTheArticlesOrder) {
  const auto s = attn::ch04::random_sentence("0", "the cat drank the milk");
  ASSERT_EQ(s.tokens.size(), 5u);
  EXPECT_EQ(s.X.n_rows, 5u);
  EXPECT_EQ(s.X.n_cols, 8u);
  EXPECT_EQ(s.W.W_V.n_cols, 4u);
  EXPECT_DOUBLE_EQ(s.X(0, 0), 0.1257302210933933);
  EXPECT_DOUBLE_EQ(s.X(0, 1), -0.1321048632913019);  // C order: along the first row
  const auto wide = attn::ch04::random_sentence("0", "a b", {6, 3, 2, 1.0});
  EXPECT_EQ(wide.X.n_cols, 6u);
  EXPECT_EQ(wide.W.W_Q.n_cols, 3u);
  EXPECT_EQ(wide.W.W_V.n_cols, 2u);
  EXPECT_DOUBLE_EQ(wide.X(0, 0), s.X(0, 0));
  EXPECT_THROW(attn::ch04::random_sentence("0", "   "), std::invalid_argument);
  EXPECT_THROW(attn::ch04::random_sentence("-1", "a"), std::invalid_argument);
}

}  // namespace
