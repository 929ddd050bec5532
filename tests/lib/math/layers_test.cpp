// Layer norm and cross-entropy (attn/math/layers.hpp): known values, and each backward pass against
// central finite differences. (Their agreement with PyTorch comes with chapter 10's fixture.)
#include <attn/math/gradient_check.hpp>
#include <attn/math/layers.hpp>
#include <attn/math/validate.hpp>

#include <gtest/gtest.h>

#include "normal_inputs.hpp"

#include <cmath>

namespace {

TEST(LayerNorm, EachRowHasMeanZeroAndVarianceOne) {
  const attn_test::Normals draw(101);
  const arma::mat x = draw.normal(5, 7) * 3.0 + 2.0;
  const attn::math::LayerNorm out = attn::math::layer_norm(
      x, arma::rowvec(7, arma::fill::ones), arma::rowvec(7, arma::fill::zeros), 0.0 + 1e-12);
  for (arma::uword i = 0; i < 5; ++i) {
    EXPECT_NEAR(arma::mean(out.y.row(i)), 0.0, 1e-12);
    EXPECT_NEAR(arma::mean(arma::square(out.y.row(i))), 1.0, 1e-9);  // biased variance
  }
}

TEST(LayerNorm, KnownRow) {
  // x = [1, 2, 3]: mean 2, biased variance 2/3, so x_hat = [-1, 0, 1] * sqrt(3/2) (eps aside)
  const attn::math::LayerNorm out = attn::math::layer_norm(
      arma::mat{{1.0, 2.0, 3.0}}, arma::rowvec{2, 2, 2}, arma::rowvec{1, 1, 1}, 1e-5);
  const double s = 1.0 / std::sqrt(2.0 / 3.0 + 1e-5);
  EXPECT_NEAR(out.y(0, 0), 1.0 - 2.0 * s, 1e-14);
  EXPECT_NEAR(out.y(0, 1), 1.0, 1e-14);
  EXPECT_NEAR(out.y(0, 2), 1.0 + 2.0 * s, 1e-14);
}

TEST(LayerNorm, BackwardMatchesFiniteDifferences) {
  const attn_test::Normals draw(102);
  const arma::mat x = draw.normal(4, 6), w = draw.normal(4, 6);  // L = sum(w ∘ y)
  const arma::rowvec gamma = draw.normal(1, 6), beta = draw.normal(1, 6);
  const auto loss_x = [&](const arma::mat& v) {
    return arma::accu(w % attn::math::layer_norm(v, gamma, beta).y);
  };
  const attn::math::LayerNormGradients g =
      attn::math::layer_norm_backward(attn::math::layer_norm(x, gamma, beta), gamma, w);
  EXPECT_LE(attn::math::check_gradient(loss_x, x, g.dx).max_relative_error, 1e-7);
  const auto loss_gamma = [&](const arma::mat& v) {
    return arma::accu(w % attn::math::layer_norm(x, v, beta).y);
  };
  EXPECT_LE(attn::math::check_gradient(loss_gamma, gamma, g.dgamma).max_relative_error, 1e-7);
  const auto loss_beta = [&](const arma::mat& v) {
    return arma::accu(w % attn::math::layer_norm(x, gamma, v).y);
  };
  EXPECT_LE(attn::math::check_gradient(loss_beta, beta, g.dbeta).max_relative_error, 1e-7);
}

TEST(LayerNorm, RefusesWhatDoesNotFit) {
  const arma::mat x(2, 3, arma::fill::ones);
  EXPECT_THROW(attn::math::layer_norm(x, arma::rowvec(2, arma::fill::ones), arma::rowvec(3)),
               attn::math::ShapeError);
  EXPECT_THROW(attn::math::layer_norm(x, arma::rowvec(3), arma::rowvec(3), 0.0),
               attn::math::InputError);
  arma::mat bad = x;
  bad(1, 1) = arma::datum::inf;
  EXPECT_THROW(attn::math::layer_norm(bad, arma::rowvec(3), arma::rowvec(3)),
               attn::math::InputError);
}

TEST(CrossEntropy, UniformLogitsGiveLogOfTheVocabulary) {
  const attn::math::CrossEntropy ce =
      attn::math::cross_entropy(arma::mat(3, 37, arma::fill::zeros), {0, 5, 36});
  EXPECT_NEAR(ce.loss, std::log(37.0), 1e-14);
}

TEST(CrossEntropy, GradientMatchesFiniteDifferencesEvenForLargeLogits) {
  const attn_test::Normals draw(103);
  const arma::mat logits = draw.normal(4, 9) * 300.0;  // softmax near one-hot: log of tiny p
  const arma::uvec targets = {0, 3, 8, 3};
  const attn::math::CrossEntropy ce = attn::math::cross_entropy(logits, targets);
  EXPECT_TRUE(std::isfinite(ce.loss));
  const auto loss = [&](const arma::mat& z) {
    return attn::math::cross_entropy(z, targets).loss;
  };
  EXPECT_LE(attn::math::check_gradient(loss, logits, ce.dlogits, 1e-4).max_relative_error, 1e-6);
}

TEST(CrossEntropy, RefusesATargetOutsideTheVocabulary) {
  try {
    attn::math::cross_entropy(arma::mat(2, 4, arma::fill::zeros), {1, 4});
    FAIL() << "no error";
  } catch (const attn::math::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("target 4 of row 1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(attn::math::cross_entropy(arma::mat(2, 4), {1}), attn::math::ShapeError);
}

TEST(Gelu, ZeroAtZeroAndGeluOfXMinusGeluOfMinusXIsX) {
  const arma::mat x = {{-3.0, -1.0, -0.25, 0.0, 0.5, 2.0, 7.0}};
  const arma::mat g = attn::math::gelu(x), h = attn::math::gelu(-x);
  EXPECT_EQ(attn::math::gelu(arma::mat(1, 1, arma::fill::zeros))(0, 0), 0.0);
  EXPECT_LE(arma::abs(g - h - x).max(), 1e-15);  // x Φ(x) + x Φ(−x) = x
}

TEST(FeedForward, BackwardMatchesFiniteDifferences) {
  const attn_test::Normals draw(104);
  const arma::mat x = draw.normal(5, 4), w = draw.normal(5, 4);  // L = sum(w ∘ y)
  attn::math::FeedForwardWeights W{draw.normal(4, 8), draw.normal(1, 8), draw.normal(8, 4),
                                   draw.normal(1, 4)};
  const attn::math::FeedForwardGradients g =
      attn::math::feed_forward_backward(x, W, attn::math::feed_forward(x, W), w);
  const auto through = [&](attn::math::FeedForwardWeights V, const arma::mat& v) {
    return arma::accu(w % attn::math::feed_forward(v, V).y);
  };
  EXPECT_LE(attn::math::check_gradient([&](const arma::mat& v) { return through(W, v); }, x, g.dx)
                .max_relative_error,
            1e-7);
  // One weight of the MLP (a matrix or a bias row), perturbed through the loss.
  const auto check = [&](auto attn::math::FeedForwardWeights::*member, const auto& analytic) {
    return attn::math::check_gradient(
               [&](const arma::mat& v) {
                 attn::math::FeedForwardWeights V = W;
                 V.*member = v;
                 return through(V, x);
               },
               W.*member, analytic)
        .max_relative_error;
  };
  EXPECT_LE(check(&attn::math::FeedForwardWeights::W1, g.dW.W1), 1e-7);
  EXPECT_LE(check(&attn::math::FeedForwardWeights::W2, g.dW.W2), 1e-7);
  EXPECT_LE(check(&attn::math::FeedForwardWeights::b1, g.dW.b1), 1e-7);
  EXPECT_LE(check(&attn::math::FeedForwardWeights::b2, g.dW.b2), 1e-7);
}

TEST(FeedForward, RefusesWeightsThatDoNotFit) {
  const arma::mat x(3, 4, arma::fill::ones);
  const attn::math::FeedForwardWeights W{arma::mat(5, 8), arma::rowvec(8), arma::mat(8, 4),
                                         arma::rowvec(4)};
  EXPECT_THROW(attn::math::feed_forward(x, W), attn::math::ShapeError);
}

}  // namespace
