// Multi-head attention (attn::math::multi_head_attention): equal to h single heads side by side,
// the parameter count PyTorch reports, gradients against finite differences, and inputs whose
// heads all differ, so that swapping heads or splitting the wrong way fails.
#include <attn/math/gradient_check.hpp>
#include <attn/math/multi_head.hpp>
#include <attn/math/validate.hpp>

#include <gtest/gtest.h>

#include "normal_inputs.hpp"

namespace {

attn::math::MultiHeadWeights random_weights(const attn_test::Normals& draw, arma::uword d,
                                            arma::uword h, bool biases) {
  attn::math::MultiHeadWeights W{
      h,  0, draw.normal(d, d), draw.normal(d, d), draw.normal(d, d), draw.normal(d, d), {}, {},
      {}, {}};
  if (biases) {
    W.b_Q = draw.normal(1, d);
    W.b_K = draw.normal(1, d);
    W.b_V = draw.normal(1, d);
    W.b_O = draw.normal(1, d);
  }
  return W;
}

TEST(MultiHead, EqualsSeparateHeadsConcatenatedAndProjected) {
  const attn_test::Normals draw(31);
  const arma::uword n = 5, m = 6, d = 8, h = 4, d_k = 2;
  const arma::mat Xq = draw.normal(n, d), Xk = draw.normal(m, d), Xv = draw.normal(m, d);
  const attn::math::MultiHeadWeights W = random_weights(draw, d, h, true);
  const attn::math::MultiHead mh = attn::math::multi_head_attention(Xq, Xk, Xv, W);
  arma::mat concat(n, 0);
  for (arma::uword k = 0; k < h; ++k) {
    const arma::span cols(k * d_k, (k + 1) * d_k - 1);
    arma::mat Q = Xq * W.W_Q.cols(cols), K = Xk * W.W_K.cols(cols), V = Xv * W.W_V.cols(cols);
    Q.each_row() += W.b_Q.cols(cols);
    K.each_row() += W.b_K.cols(cols);
    V.each_row() += W.b_V.cols(cols);
    const attn::math::Attention one = attn::math::scaled_dot_product_attention(Q, K, V);
    EXPECT_LE(arma::abs(one.weights - mh.heads[k].weights).max(), 1e-15) << "head " << k;
    concat = arma::join_rows(concat, one.output);
  }
  arma::mat expected = concat * W.W_O;
  expected.each_row() += W.b_O;
  EXPECT_LE(arma::abs(mh.output - expected).max(), 1e-13);
  // The heads really differ, so a head put in the wrong place could not go unnoticed.
  for (arma::uword k = 1; k < h; ++k)
    EXPECT_GT(arma::abs(mh.heads[k].weights - mh.heads[0].weights).max(), 1e-2) << "head " << k;
}

TEST(MultiHead, CountsParametersAsPyTorchDoes) {
  EXPECT_EQ(attn::math::multi_head_parameters(768, 12, true), 2362368u);
  EXPECT_EQ(attn::math::multi_head_parameters(768, 12, false), 2359296u);
  EXPECT_THROW(attn::math::multi_head_parameters(768, 5, true), attn::math::InputError);
}

TEST(MultiHead, SplitAndConcatAreInverses) {
  const attn_test::Normals draw(32);
  const arma::mat X = draw.normal(3, 12);
  const std::vector<arma::mat> heads = attn::math::split_heads(X, 4);
  ASSERT_EQ(heads.size(), 4u);
  EXPECT_EQ(heads[1].n_cols, 3u);
  EXPECT_TRUE(arma::approx_equal(heads[2], X.cols(6, 8), "absdiff", 0.0));
  EXPECT_TRUE(arma::approx_equal(attn::math::concat_heads(heads), X, "absdiff", 0.0));
  EXPECT_THROW(attn::math::split_heads(X, 5), attn::math::InputError);
}

TEST(MultiHead, MaskedHeadsGiveZeroWeightToTheFuture) {
  const attn_test::Normals draw(33);
  const arma::mat X = draw.normal(4, 6);
  const attn::math::MultiHead mh = attn::math::multi_head_attention(
      X, X, X, random_weights(draw, 6, 3, false), attn::math::Mask::causal(4));
  for (const attn::math::Attention& head : mh.heads)
    EXPECT_EQ(arma::accu(arma::trimatu(head.weights, 1)), 0.0);
  EXPECT_EQ(attn::math::average_weights(mh)(0, 0), 1.0);
}

class MultiHeadGradient : public ::testing::TestWithParam<bool> {};

TEST_P(MultiHeadGradient, MatchesFiniteDifferences) {
  const bool masked = GetParam();
  const attn_test::Normals draw(masked ? 41 : 42);
  const arma::uword n = 4, d = 6, h = 3;
  const arma::mat Xq = draw.normal(n, d), Xk = draw.normal(n, d), Xv = draw.normal(n, d);
  const arma::mat R = draw.normal(n, d);
  const attn::math::MultiHeadWeights W = random_weights(draw, d, h, true);
  const attn::math::Mask mask = masked ? attn::math::Mask::causal(n) : attn::math::Mask::none(n, n);
  const auto loss = [&](const arma::mat& q, const arma::mat& k, const arma::mat& v,
                        const attn::math::MultiHeadWeights& w) {
    return arma::accu(attn::math::multi_head_attention(q, k, v, w, mask).output % R);
  };
  const attn::math::MultiHead forward = attn::math::multi_head_attention(Xq, Xk, Xv, W, mask);
  const attn::math::MultiHeadGradients g =
      attn::math::multi_head_backward(Xq, Xk, Xv, W, forward, R);
  const auto check = [&](const char* what, const arma::mat& at, const arma::mat& analytic,
                         const std::function<double(const arma::mat&)>& f) {
    const auto c = attn::math::check_gradient(f, at, analytic);
    EXPECT_LT(c.max_relative_error, 1e-5) << what << " entry " << c.worst_entry;
  };
  check("query", Xq, g.d_query, [&](const arma::mat& x) { return loss(x, Xk, Xv, W); });
  check("key", Xk, g.d_key, [&](const arma::mat& x) { return loss(Xq, x, Xv, W); });
  check("value", Xv, g.d_value, [&](const arma::mat& x) { return loss(Xq, Xk, x, W); });
  const auto with = [&](auto member, const arma::mat& x) {
    attn::math::MultiHeadWeights w = W;
    w.*member = x;
    return loss(Xq, Xk, Xv, w);
  };
  check("W_Q", W.W_Q, g.dW.W_Q,
        [&](const arma::mat& x) { return with(&attn::math::MultiHeadWeights::W_Q, x); });
  check("W_K", W.W_K, g.dW.W_K,
        [&](const arma::mat& x) { return with(&attn::math::MultiHeadWeights::W_K, x); });
  check("W_V", W.W_V, g.dW.W_V,
        [&](const arma::mat& x) { return with(&attn::math::MultiHeadWeights::W_V, x); });
  check("W_O", W.W_O, g.dW.W_O,
        [&](const arma::mat& x) { return with(&attn::math::MultiHeadWeights::W_O, x); });
  const auto with_bias = [&](auto member, const arma::mat& x) {
    attn::math::MultiHeadWeights w = W;
    w.*member = arma::rowvec(x);
    return loss(Xq, Xk, Xv, w);
  };
  check("b_Q", W.b_Q, g.dW.b_Q,
        [&](const arma::mat& x) { return with_bias(&attn::math::MultiHeadWeights::b_Q, x); });
  // The key bias adds q·b_K to every score of a row, which softmax ignores: its gradient is 0,
  // and finite differences of it are rounding noise.
  EXPECT_LE(arma::abs(g.dW.b_K).max(), 1e-12);
  check("b_V", W.b_V, g.dW.b_V,
        [&](const arma::mat& x) { return with_bias(&attn::math::MultiHeadWeights::b_V, x); });
  check("b_O", W.b_O, g.dW.b_O,
        [&](const arma::mat& x) { return with_bias(&attn::math::MultiHeadWeights::b_O, x); });
}

INSTANTIATE_TEST_SUITE_P(MaskedOrNot, MultiHeadGradient, ::testing::Values(false, true));

TEST(MultiHead, RefusesWeightsThatDoNotFit) {
  const attn_test::Normals draw(34);
  const arma::mat X = draw.normal(3, 6);
  attn::math::MultiHeadWeights W = random_weights(draw, 6, 4, false);  // 4 does not divide 6
  EXPECT_THROW(attn::math::multi_head_attention(X, X, X, W), attn::math::InputError);
  W.heads = 3;
  W.b_Q = draw.normal(1, 6);  // one bias of four
  EXPECT_THROW(attn::math::multi_head_attention(X, X, X, W), attn::math::InputError);
  W.b_Q.reset();
  W.W_O = draw.normal(6, 5);
  try {
    attn::math::multi_head_attention(X, X, X, W);
    FAIL() << "a (6 × 5) W_O was accepted";
  } catch (const attn::math::ShapeError& e) {
    EXPECT_STREQ(e.what(), "multi-head attention: W_O is (6 × 5), not (6 × 6)");
  }
}

}  // namespace
