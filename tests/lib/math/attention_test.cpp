#include <attn/math/attention.hpp>
#include <attn/math/softmax.hpp>
#include <attn/math/validate.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace {

// Generic embeddings: the article's own (money bank river) are tested with the book's examples.
const arma::mat kEmbeddings = arma::mat{{0.3, -1.2}, {0.8, 0.1}, {-0.4, 0.9}};  // (3 × 2)

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no exception)";
}

TEST(Attention, ShapesFollowTheEquation) {
  const arma::mat Q(4, 3, arma::fill::randn), K(6, 3, arma::fill::randn),
      V(6, 5, arma::fill::randn);
  const attn::math::Attention a = attn::math::scaled_dot_product_attention(Q, K, V);
  EXPECT_EQ(attn::math::shape_of(a.scores), "(4 × 6)");
  EXPECT_EQ(attn::math::shape_of(a.weights), "(4 × 6)");
  EXPECT_EQ(attn::math::shape_of(a.output), "(4 × 5)");
  for (arma::uword i = 0; i < 4; ++i)
    EXPECT_NEAR(arma::accu(a.weights.row(i)), 1.0, 1e-14);
}

TEST(Attention, ScaledDividesScoresBySqrtDk) {
  const arma::mat Q(2, 4, arma::fill::randn), K(3, 4, arma::fill::randn),
      V(3, 2, arma::fill::randn);
  const attn::math::Attention a = attn::math::scaled_dot_product_attention(Q, K, V);
  EXPECT_TRUE(arma::approx_equal(a.scores, Q * K.t() / 2.0, "absdiff", 1e-14));
  EXPECT_TRUE(arma::approx_equal(a.output, attn::math::softmax_rows(Q * K.t() / 2.0) * V, "absdiff",
                                 1e-14));
}

TEST(Attention, ScoreScaleIsOneOverRootDk) {
  EXPECT_DOUBLE_EQ(attn::math::score_scale(1), 1.0);
  EXPECT_DOUBLE_EQ(attn::math::score_scale(4), 0.5);
  EXPECT_DOUBLE_EQ(attn::math::score_scale(64), 0.125);
  EXPECT_THROW(attn::math::score_scale(0), attn::math::InputError);
}

TEST(RawAttention, ScoreGridIsSymmetricAndRowsMatchSingleQueries) {
  const attn::math::Attention all = attn::math::raw_self_attention(kEmbeddings);
  EXPECT_TRUE(arma::approx_equal(all.scores, all.scores.t(), "absdiff", 0.0));
  for (arma::uword q = 0; q < 3; ++q)
    EXPECT_TRUE(arma::approx_equal(
        all.output.row(q), attn::math::raw_attention_for(kEmbeddings, q).output, "absdiff", 1e-15));
}

TEST(RawAttention, QueryOutOfRangeIsNamed) {
  EXPECT_EQ(message_of([] { attn::math::raw_attention_for(kEmbeddings, 3); }),
            "query index 3 is not a row of E (3 × 2)");
}

TEST(Attention, MismatchedQueryAndKeyNameBothShapes) {
  const arma::mat Q(3, 2, arma::fill::ones), K(3, 4, arma::fill::ones), V(3, 4, arma::fill::ones);
  EXPECT_EQ(
      message_of([&] { attn::math::scaled_dot_product_attention(Q, K, V); }),
      "scores = Q K^T: Q is (3 × 2) and K is (3 × 4); Q and K need the same number of columns");
  EXPECT_THROW(attn::math::scaled_dot_product_attention(Q, K, V), attn::math::ShapeError);
}

TEST(Attention, MismatchedKeysAndValuesNameBothShapes) {
  const arma::mat Q(2, 2, arma::fill::ones), K(3, 2, arma::fill::ones), V(4, 2, arma::fill::ones);
  EXPECT_EQ(message_of([&] { attn::math::attend(Q, K, V, 1.0); }),
            "output = W V: K is (3 × 2) and V is (4 × 2); K and V need the same number of rows");
}

TEST(Attention, NaNAndEmptyInputAreRejected) {
  arma::mat E = kEmbeddings;
  E(2, 0) = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(attn::math::raw_self_attention(E), attn::math::InputError);
  EXPECT_THROW(attn::math::raw_self_attention(arma::mat()), attn::math::InputError);
}

TEST(Projections, QKVAreXTimesEachMatrix) {
  const arma::mat X(5, 8, arma::fill::randn);
  const attn::math::Projections W{arma::mat(8, 4, arma::fill::randn),
                                  arma::mat(8, 4, arma::fill::randn),
                                  arma::mat(8, 3, arma::fill::randn)};
  const attn::math::QKV qkv = attn::math::project(X, W);
  EXPECT_TRUE(arma::approx_equal(qkv.Q, X * W.W_Q, "absdiff", 0.0));
  EXPECT_EQ(attn::math::shape_of(qkv.V), "(5 × 3)");
  const attn::math::Attention a = attn::math::self_attention(X, W);
  EXPECT_EQ(attn::math::shape_of(a.output), "(5 × 3)");
  EXPECT_TRUE(arma::approx_equal(
      a.weights, attn::math::scaled_dot_product_attention(qkv.Q, qkv.K, qkv.V).weights, "absdiff",
      0.0));
}

TEST(Projections, WrongModelWidthNamesBothShapes) {
  const arma::mat X(5, 8, arma::fill::ones);
  const attn::math::Projections W{arma::mat(7, 4, arma::fill::ones),
                                  arma::mat(8, 4, arma::fill::ones),
                                  arma::mat(8, 4, arma::fill::ones)};
  EXPECT_EQ(
      message_of([&] { attn::math::project(X, W); }),
      "Q = X W_Q: X is (5 × 8) and W_Q is (7 × 4); the columns of X must match the rows of W_Q");
}

TEST(StrongestOther, LeavesTheQueryItselfOut) {
  const arma::mat w = {{0.7, 0.2, 0.1}, {0.3, 0.3, 0.4}, {0.5, 0.1, 0.4}};
  EXPECT_EQ(attn::math::strongest_other(w, 0), 1u);
  EXPECT_EQ(attn::math::strongest_other(w, 1), 2u);
  EXPECT_EQ(attn::math::strongest_other(w, 2), 0u);
}

TEST(StrongestOther, RejectsNonSquareGridsAndBadRows) {
  EXPECT_THROW(attn::math::strongest_other(arma::mat(2, 3, arma::fill::ones), 0),
               attn::math::ShapeError);
  EXPECT_THROW(attn::math::strongest_other(arma::mat(1, 1, arma::fill::ones), 0),
               attn::math::ShapeError);
  EXPECT_THROW(attn::math::strongest_other(arma::mat(2, 2, arma::fill::ones), 2),
               std::out_of_range);
}

}  // namespace
