// The backward pass against central finite differences, on several shapes including the
// degenerate ones (one query, d_k = 1). Random inputs come from a seeded generator
// (normal_inputs.hpp), so every run checks the same numbers.
#include <attn/math/backward.hpp>
#include <attn/math/gradient_check.hpp>
#include <attn/math/softmax.hpp>
#include <attn/math/validate.hpp>
#include "normal_inputs.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <tuple>

namespace {

constexpr double kTolerance = 1e-6;

struct Shape {
  arma::uword n, m, d_k, d_v;
};

// The loss L = Σ Z ⊙ R for a fixed random R, so ∂L/∂Z = R.
struct Problem {
  arma::mat Q, K, V, R;
  double scale;
};

Problem random_problem(const Shape& s, std::uint64_t seed) {
  const attn_test::Normals rng(seed);
  Problem p{rng.normal(s.n, s.d_k), rng.normal(s.m, s.d_k), rng.normal(s.m, s.d_v),
            rng.normal(s.n, s.d_v), 1.0 / std::sqrt(static_cast<double>(s.d_k))};
  return p;
}

double loss(const Problem& p, const arma::mat& Q, const arma::mat& K, const arma::mat& V) {
  return arma::accu(attn::math::attend(Q, K, V, p.scale).output % p.R);
}

class AttentionBackward : public ::testing::TestWithParam<Shape> {};

TEST_P(AttentionBackward, MatchesFiniteDifferences) {
  const Problem p = random_problem(GetParam(), 7);
  const attn::math::Attention forward = attn::math::attend(p.Q, p.K, p.V, p.scale);
  const attn::math::AttentionGradients g =
      attn::math::attend_backward(p.Q, p.K, p.V, forward, p.R, p.scale);
  const auto dQ = attn::math::check_gradient(
      [&](const arma::mat& Q) { return loss(p, Q, p.K, p.V); }, p.Q, g.dQ);
  const auto dK = attn::math::check_gradient(
      [&](const arma::mat& K) { return loss(p, p.Q, K, p.V); }, p.K, g.dK);
  const auto dV = attn::math::check_gradient(
      [&](const arma::mat& V) { return loss(p, p.Q, p.K, V); }, p.V, g.dV);
  EXPECT_LT(dQ.max_relative_error, kTolerance) << "dQ entry " << dQ.worst_entry;
  EXPECT_LT(dK.max_relative_error, kTolerance) << "dK entry " << dK.worst_entry;
  EXPECT_LT(dV.max_relative_error, kTolerance) << "dV entry " << dV.worst_entry;
}

INSTANTIATE_TEST_SUITE_P(Shapes, AttentionBackward,
                         ::testing::Values(Shape{5, 5, 4, 4}, Shape{1, 3, 2, 2}, Shape{3, 4, 1, 2},
                                           Shape{1, 1, 1, 1}, Shape{6, 2, 3, 5}));

struct Head {
  arma::mat X, R;
  attn::math::Projections W;
};

Head random_head(arma::uword n, arma::uword d_model, arma::uword d_k, arma::uword d_v) {
  const attn_test::Normals rng(11);
  Head h;
  h.X = rng.normal(n, d_model);
  h.W = {rng.normal(d_model, d_k) * 0.5, rng.normal(d_model, d_k) * 0.5,
         rng.normal(d_model, d_v) * 0.5};
  h.R = rng.normal(n, d_v);
  return h;
}

double head_loss(const arma::mat& X, const attn::math::Projections& W, const arma::mat& R) {
  return arma::accu(attn::math::self_attention(X, W).output % R);
}

class SelfAttentionBackward
    : public ::testing::TestWithParam<std::tuple<arma::uword, arma::uword, arma::uword>> {};

TEST_P(SelfAttentionBackward, ReachesEmbeddingsAndProjections) {
  const auto [n, d_model, d_k] = GetParam();
  const Head h = random_head(n, d_model, d_k, 3);
  const attn::math::SelfAttentionGradients g = attn::math::self_attention_backward(h.X, h.W, h.R);
  auto with = [&](int which, const arma::mat& m) {
    attn::math::Projections W = h.W;
    (which == 0 ? W.W_Q : which == 1 ? W.W_K : W.W_V) = m;
    return head_loss(h.X, W, h.R);
  };
  const auto dX = attn::math::check_gradient(
      [&](const arma::mat& X) { return head_loss(X, h.W, h.R); }, h.X, g.dX);
  const auto dWQ =
      attn::math::check_gradient([&](const arma::mat& m) { return with(0, m); }, h.W.W_Q, g.dW.W_Q);
  const auto dWK =
      attn::math::check_gradient([&](const arma::mat& m) { return with(1, m); }, h.W.W_K, g.dW.W_K);
  const auto dWV =
      attn::math::check_gradient([&](const arma::mat& m) { return with(2, m); }, h.W.W_V, g.dW.W_V);
  EXPECT_LT(dX.max_relative_error, kTolerance);
  EXPECT_LT(dWQ.max_relative_error, kTolerance);
  EXPECT_LT(dWK.max_relative_error, kTolerance);
  EXPECT_LT(dWV.max_relative_error, kTolerance);
}

INSTANTIATE_TEST_SUITE_P(Shapes, SelfAttentionBackward,
                         ::testing::Values(std::make_tuple(5, 8, 4), std::make_tuple(1, 3, 2),
                                           std::make_tuple(4, 2, 1)));

TEST(SoftmaxJacobian, RowsSumToZeroAndItIsSymmetric) {
  const arma::rowvec w = attn::math::softmax(arma::rowvec{0.2, 1.0, 0.7, -2.0});
  const arma::mat J = attn::math::softmax_jacobian(w);
  EXPECT_LT(arma::abs(arma::sum(J, 1)).max(), 1e-16);
  EXPECT_TRUE(J.is_symmetric());
  EXPECT_NEAR(J(1, 1), w(1) * (1.0 - w(1)), 1e-16);
  EXPECT_NEAR(J(0, 2), -w(0) * w(2), 1e-16);
}

TEST(SoftmaxJacobian, MatchesFiniteDifferencesOfSoftmax) {
  const arma::rowvec s = {0.3, -1.2, 2.0};
  const arma::mat J = attn::math::softmax_jacobian(attn::math::softmax(s));
  for (arma::uword j = 0; j < 3; ++j) {
    const auto check = attn::math::check_gradient(
        [&](const arma::mat& x) { return attn::math::softmax(arma::rowvec(x))(j); }, s, J.row(j));
    EXPECT_LT(check.max_relative_error, kTolerance) << "row " << j;
  }
}

TEST(SoftmaxRowsBackward, IsTheJacobianVectorProductOfEveryRow) {
  const attn_test::Normals rng(3);
  const arma::mat W = attn::math::softmax_rows(rng.normal(3, 5));
  const arma::mat upstream = rng.normal(3, 5);
  const arma::mat dS = attn::math::softmax_rows_backward(W, upstream);
  for (arma::uword i = 0; i < 3; ++i) {
    EXPECT_LT(arma::abs(dS.row(i) - upstream.row(i) * attn::math::softmax_jacobian(W.row(i))).max(),
              1e-15);
  }
  EXPECT_THROW(attn::math::softmax_rows_backward(W, upstream.t()), attn::math::ShapeError);
}

TEST(CheckGradient, CatchesAWrongGradient) {
  const arma::mat x = {{1.0, 2.0}};
  const auto square = [](const arma::mat& m) {
    return arma::accu(m % m);
  };
  EXPECT_LT(attn::math::check_gradient(square, x, 2 * x).max_relative_error, 1e-9);
  const auto wrong = attn::math::check_gradient(square, x, arma::mat{{2.0, 3.0}});
  EXPECT_GT(wrong.max_relative_error, 0.1);
  EXPECT_EQ(wrong.worst_entry, 1u);
}

TEST(SoftmaxWhole, SumsToOneOverTheWholeMatrixNotPerRow) {
  const arma::mat S = {{0.0, 1.0}, {2.0, 3.0}};
  const arma::mat W = attn::math::softmax_whole(S);
  EXPECT_NEAR(arma::accu(W), 1.0, 1e-15);
  EXPECT_GT(std::fabs(arma::accu(W.row(0)) - 1.0), 0.5);
  EXPECT_NEAR(W(1, 1) / W(0, 0), std::exp(3.0), 1e-12);
}

}  // namespace
