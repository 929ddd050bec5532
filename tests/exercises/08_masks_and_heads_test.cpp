// Chapter 08's exercises: the causal mask as an additive matrix, and the columns of each head.
#include "08_masks_and_heads.hpp"

#include "exercise_checks.hpp"

#include <attn/math/mask.hpp>
#include <attn/math/multi_head.hpp>
#include <attn/math/validate.hpp>
#include <attn/numpy/numpy_random.hpp>

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

using attn_exercise::near;
using namespace attn::exercises;

namespace {

// The softmax of each row of S, where S may hold −∞ (attn::math::softmax_rows refuses it). Every
// row of a causal grid keeps its diagonal, so each row's maximum is finite.
arma::mat softmax_rows_with_infinities(const arma::mat& S) {
  arma::mat W(S.n_rows, S.n_cols);
  for (arma::uword i = 0; i < S.n_rows; ++i) {
    const arma::rowvec e = arma::exp(S.row(i) - S.row(i).max());
    W.row(i) = e / arma::accu(e);
  }
  return W;
}

}  // namespace

// The library's convention, 0 = may attend and −∞ = may not, for sentences of 1 to 6 tokens.
TEST(Exercise8_1, EqualsTheLibrarysAdditiveMask) {
  for (arma::uword n = 1; n <= 6; ++n) {
    EXPECT_TRUE(near("causal_additive_mask(" + std::to_string(n) + ")", causal_additive_mask(n),
                     attn::math::Mask::causal(n).additive(), 0.0));
  }
}

// One token may attend to itself only: nothing is blocked.
TEST(Exercise8_1, OneTokenGivesZero) {
  const arma::mat zero(1, 1, arma::fill::zeros);
  EXPECT_TRUE(near("causal_additive_mask(1)", causal_additive_mask(1), zero, 0.0))
      << "a single token sees itself, so its mask is [0]";
}

// Added to scores, the mask gives weights of exactly 0 above the diagonal and exactly 1 for the
// first token on itself, the weights attn::math::masked_softmax_rows gives with Mask::causal.
TEST(Exercise8_1, MaskedWeightsAreExactlyZero) {
  const arma::uword n = 5;
  attn::numpy::Generator rng = attn::numpy::default_rng(8);
  const arma::mat scores = 3.0 * rng.normal(n, n);
  const arma::mat mask = causal_additive_mask(n);
  ASSERT_TRUE(mask.n_rows == n && mask.n_cols == n)
      << "causal_additive_mask(5) has shape " << attn::math::shape_of(mask) << ", expected (5 × 5)";
  const arma::mat weights = softmax_rows_with_infinities(scores + mask);
  for (arma::uword i = 0; i < n; ++i) {
    for (arma::uword j = i + 1; j < n; ++j) {
      EXPECT_EQ(weights(i, j), 0.0) << "query " << i << " must not see the later key " << j
                                    << ": its weight should be exactly 0, not " << weights(i, j);
    }
  }
  EXPECT_TRUE(near("the first token's weights", weights.row(0), arma::rowvec{1, 0, 0, 0, 0}, 0.0))
      << "the first token has nothing before it, so all its weight stays on itself";
  EXPECT_TRUE(near("the masked weights", weights,
                   attn::math::masked_softmax_rows(scores, attn::math::Mask::causal(n)), 1e-15));
}

// The blocks are the library's, head 0 first, for every head count that divides d = 8.
TEST(Exercise8_2, EqualsTheLibrarysSplit) {
  attn::numpy::Generator rng = attn::numpy::default_rng(8);
  const arma::mat X = rng.normal(5, 8);
  for (const arma::uword heads : {1, 2, 4, 8}) {
    const std::vector<arma::mat> mine = split_into_heads(X, heads);
    const std::vector<arma::mat> library = attn::math::split_heads(X, heads);
    ASSERT_EQ(mine.size(), library.size())
        << "split_into_heads(X, " << heads << ") should return " << heads << " blocks";
    for (std::size_t k = 0; k < mine.size(); ++k) {
      EXPECT_TRUE(near("head " + std::to_string(k) + " of " + std::to_string(heads), mine[k],
                       library[k], 0.0));
    }
  }
}

// Chapter 08's shapes: (5 × 8) in 2 heads gives two (5 × 4) blocks, and side by side they are X.
TEST(Exercise8_2, ConcatenatingTheHeadsGivesXBack) {
  attn::numpy::Generator rng = attn::numpy::default_rng(9);
  const arma::mat X = rng.normal(5, 8);
  const std::vector<arma::mat> heads = split_into_heads(X, 2);
  ASSERT_EQ(heads.size(), 2U) << "X (5 × 8) split into 2 heads should give 2 blocks";
  for (const arma::mat& head : heads) {
    EXPECT_TRUE(head.n_rows == 5 && head.n_cols == 4)
        << "each head of X (5 × 8) should be (5 × 4), not " << attn::math::shape_of(head);
  }
  EXPECT_TRUE(
      near("concat_heads(split_into_heads(X, 2))", attn::math::concat_heads(heads), X, 0.0));
}

// Heads that cannot share the columns equally are refused, and the message says why.
TEST(Exercise8_2, BadHeadCountsNameDAndHeads) {
  struct Case {
    arma::uword d, heads;
  };
  for (const Case c : {Case{10, 3}, Case{10, 4}, Case{7, 0}}) {
    const arma::mat X(2, c.d, arma::fill::ones);
    const std::string call =
        "split_into_heads(X (2 × " + std::to_string(c.d) + "), " + std::to_string(c.heads) + ")";
    try {
      split_into_heads(X, c.heads);
      ADD_FAILURE() << call << " must throw std::invalid_argument";
    } catch (const std::invalid_argument& error) {
      const std::string message = error.what();
      for (const arma::uword number : {c.d, c.heads}) {
        EXPECT_NE(message.find(std::to_string(number)), std::string::npos)
            << call << " threw \"" << message << "\", which does not contain " << number
            << "; the message should name both d = " << c.d << " and heads = " << c.heads;
      }
    }
  }
}
