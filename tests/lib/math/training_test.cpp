#include <attn/math/gradient_check.hpp>
#include <attn/math/training.hpp>
#include <attn/math/validate.hpp>
#include "normal_inputs.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace {

std::vector<attn::math::AttentionExample> random_examples() {
  const attn_test::Normals rng(21);
  return {{{}, rng.normal(5, 6), 2, 4}, {{}, rng.normal(3, 6), 0, 1}, {{}, rng.normal(1, 6), 0, 0}};
}

TEST(AttentionTargetLoss, GradientMatchesFiniteDifferences) {
  const attn_test::Normals rng(22);
  const arma::mat W_Q = rng.normal(6, 3), W_K = rng.normal(6, 3);
  const auto data = random_examples();
  for (double decay : {0.0, 0.3}) {
    const attn::math::LossGradient g = attn::math::attention_target_loss(data, W_Q, W_K, decay);
    const auto dQ = attn::math::check_gradient(
        [&](const arma::mat& m) {
          return attn::math::attention_target_loss(data, m, W_K, decay).loss;
        },
        W_Q, g.dW_Q);
    const auto dK = attn::math::check_gradient(
        [&](const arma::mat& m) {
          return attn::math::attention_target_loss(data, W_Q, m, decay).loss;
        },
        W_K, g.dW_K);
    EXPECT_LT(dQ.max_relative_error, 1e-6) << "decay " << decay;
    EXPECT_LT(dK.max_relative_error, 1e-6) << "decay " << decay;
  }
}

TEST(AttentionTargetLoss, UniformAttentionCostsLogN) {
  // With zero matrices every weight is 1/n, so the loss is the mean of log n.
  const auto data = random_examples();
  const arma::mat zero(6, 3, arma::fill::zeros);
  const double expected = (std::log(5.0) + std::log(3.0) + std::log(1.0)) / 3.0;
  EXPECT_NEAR(attn::math::attention_target_loss(data, zero, zero, 0.7).loss, expected, 1e-12);
}

TEST(AttentionTargetLoss, RejectsBadExamples) {
  const arma::mat W(6, 3, arma::fill::ones);
  EXPECT_THROW(attn::math::attention_target_loss({}, W, W, 0.0), attn::math::InputError);
  EXPECT_THROW(
      attn::math::attention_target_loss({{{}, arma::mat(2, 6, arma::fill::ones), 0, 2}}, W, W, 0.0),
      attn::math::InputError);
  EXPECT_THROW(
      attn::math::attention_target_loss({{{}, arma::mat(2, 5, arma::fill::ones), 0, 1}}, W, W, 0.0),
      attn::math::ShapeError);
}

}  // namespace
