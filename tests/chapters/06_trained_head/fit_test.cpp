#include "normal_inputs.hpp"

#include <06_trained_head/fit.hpp>

#include <gtest/gtest.h>

#include <cmath>

namespace {

std::vector<attn::math::AttentionExample> examples() {
  const attn_test::Normals rng(61);
  return {{{}, rng.normal(5, 6), 2, 4}, {{}, rng.normal(4, 6), 1, 0}, {{}, rng.normal(6, 6), 5, 3}};
}

TEST(GradientNorm, BothMatricesTogether) {
  const attn::math::LossGradient g{0.0, arma::mat(2, 2, arma::fill::value(1.0)),
                                   arma::mat(2, 2, arma::fill::value(2.0))};
  EXPECT_DOUBLE_EQ(attn::ch06::gradient_norm(g), std::sqrt(4.0 + 16.0));
}

TEST(FitHead, LossFallsUntilTheGradientRuleStopsIt) {
  const attn_test::Normals rng(62);
  const arma::mat W_Q = 0.1 * rng.normal(6, 3), W_K = 0.1 * rng.normal(6, 3);
  const attn::ch06::HeadFit fit =
      attn::ch06::fit_head(examples(), W_Q, W_K, {0.25, 0.05, 1e-6, 5000});
  EXPECT_TRUE(fit.converged);
  EXPECT_LT(fit.final_gradient, 1e-6);
  EXPECT_LT(fit.losses.back(), fit.losses.front());
  EXPECT_LT(fit.losses.size(), 5001u);
  // Where it stopped, the loss and the gradient are those of the returned matrices.
  const attn::math::LossGradient at_end =
      attn::math::attention_target_loss(examples(), fit.W_Q, fit.W_K, 0.25);
  EXPECT_EQ(at_end.loss, fit.losses.back());
  EXPECT_EQ(attn::ch06::gradient_norm(at_end), fit.final_gradient);
}

TEST(FitHead, StepLimitIsAGuardNotTheRule) {
  const attn_test::Normals rng(63);
  const arma::mat W_Q = 0.1 * rng.normal(6, 3), W_K = 0.1 * rng.normal(6, 3);
  const attn::ch06::HeadFit fit = attn::ch06::fit_head(examples(), W_Q, W_K, {0.25, 0.05, 1e-6, 3});
  EXPECT_FALSE(fit.converged);
  EXPECT_EQ(fit.losses.size(), 4u);  // before each of 3 updates, and after the last
  EXPECT_GT(fit.final_gradient, 1e-6);
}

TEST(FitHead, ZeroStepsReturnsTheStart) {
  const attn_test::Normals rng(64);
  const arma::mat W_Q = rng.normal(6, 3), W_K = rng.normal(6, 3);
  const attn::ch06::HeadFit fit = attn::ch06::fit_head(examples(), W_Q, W_K, {0.1, 0.05, 0.0, 0});
  EXPECT_TRUE(arma::approx_equal(fit.W_Q, W_Q, "absdiff", 0.0));
  EXPECT_TRUE(arma::approx_equal(fit.W_K, W_K, "absdiff", 0.0));
  EXPECT_EQ(fit.losses.size(), 1u);
}

}  // namespace
