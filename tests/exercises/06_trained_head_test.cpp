// Chapter 06's exercises: Adam's step against the library's attn::math::AdamW with no parameter
// decayed (Adam), and the loss behind the chapter's "it -> cat after training: 0.61".
#include "06_trained_head.hpp"

#include "exercise_checks.hpp"

#include <attn/math/optimizer.hpp>
#include <attn/math/softmax.hpp>
#include <attn/math/training.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

using attn_exercise::near;
using namespace attn::exercises;

namespace {

// A parameter matrix, and the gradients of four steps: mixed signs and sizes (one tiny, one
// large), and entries whose sign flips between steps.
const arma::mat kStart{{0.5, -1.0, 2.0}, {0.0, 3.0, -0.25}};
std::vector<arma::mat> four_gradients() {
  return {arma::mat{{0.3, -2.0, 1e-3}, {-50.0, 4e-6, -0.7}},
          arma::mat{{-0.1, -1.5, 2e-3}, {20.0, -3e-6, 0.0}},
          arma::mat{{0.2, 0.5, -1e-3}, {-10.0, 1e-5, 0.4}},
          arma::mat{{0.0, -0.8, 5e-4}, {5.0, 2e-6, -0.9}}};
}

// Steps our adam_update and the library's Adam (attn::math::AdamW, nothing decayed) side by side on
// the same gradients and expects them to agree after every step.
void expect_same_path_as_library(double lr, double beta1, double beta2, double epsilon,
                                 bool with_defaults) {
  std::ostringstream settings;
  settings << "learning rate " << lr << ", ";
  if (with_defaults) {
    settings << "the default β1, β2, ε";
  } else {
    settings << "β1 = " << beta1 << ", β2 = " << beta2 << ", ε = " << epsilon;
  }
  arma::mat ours = kStart, library = kStart;
  AdamMoments moments;
  attn::math::AdamW adam({false}, 0.0, beta1, beta2, epsilon);  // Adam: nothing decays
  const std::vector<arma::mat> gradients = four_gradients();
  for (std::size_t step = 0; step < gradients.size(); ++step) {
    if (with_defaults) {
      adam_update(ours, gradients[step], moments, lr);
    } else {
      adam_update(ours, gradients[step], moments, lr, beta1, beta2, epsilon);
    }
    adam.step({&library}, {gradients[step]}, lr);
    const ::testing::AssertionResult same =
        near("θ after step " + std::to_string(step + 1) + " (" + settings.str() +
                 "), against attn::math::AdamW's",
             ours, library, 1e-14);
    EXPECT_TRUE(same);
    EXPECT_EQ(moments.t, static_cast<int>(step + 1))
        << "moments.t counts the steps: after step " << step + 1 << " it should be " << step + 1;
    if (!same)
      return;  // the first step where the two part is the one to look at
  }
}

}  // namespace

TEST(Exercise6_1, FirstStepMovesEachEntryByAboutTheLearningRate) {
  // From fresh moments the bias-corrected step is η g / (|g| + ε): only the gradient's sign
  // matters, not its size.
  const double lr = 0.05;
  const arma::mat gradient = four_gradients().front();
  arma::mat theta = kStart;
  AdamMoments moments;
  adam_update(theta, gradient, moments, lr);
  EXPECT_TRUE(near("the first step, θ after minus θ before (about -η sign(g))", theta - kStart,
                   -lr * arma::sign(gradient), 1e-3));
  EXPECT_TRUE(near("θ after the first step (θ - η g / (|g| + ε))", theta,
                   kStart - lr * gradient / (arma::abs(gradient) + 1e-8), 1e-14));
}

TEST(Exercise6_1, MomentsAreKeptForTheNextStep) {
  // After one step from zeros: m = (1 - β1) g and v = (1 - β2) g², stored without the bias
  // correction, which is applied afresh at every step.
  const arma::mat gradient = four_gradients().front();
  arma::mat theta = kStart;
  AdamMoments moments;
  adam_update(theta, gradient, moments, 0.05);
  EXPECT_EQ(moments.t, 1) << "moments.t should count one step after the first call";
  EXPECT_TRUE(
      near("moments.m after one step ((1 - β1) g)", moments.m, (1.0 - 0.9) * gradient, 1e-15));
  EXPECT_TRUE(near("moments.v after one step ((1 - β2) g²)", moments.v,
                   (1.0 - 0.999) * arma::square(gradient), 1e-15));
}

TEST(Exercise6_1, SeveralStepsMatchTheLibrarysAdam) {
  // Chapter 06's optimiser, with its learning rate and default betas, and with other settings.
  expect_same_path_as_library(0.05, 0.9, 0.999, 1e-8, true);
  expect_same_path_as_library(0.01, 0.5, 0.8, 1e-3, false);
}

TEST(Exercise6_1, AZeroGradientDoesNotMoveOnTheFirstStep) {
  // m and v stay 0, so the step is 0 / (0 + ε) = 0; without ε it would be 0 / 0 = NaN.
  arma::mat theta = kStart;
  AdamMoments moments;
  adam_update(theta, arma::mat(2, 3, arma::fill::zeros), moments, 0.05);
  EXPECT_TRUE(near("θ after a step with a zero gradient (it must not move)", theta, kStart, 0.0));
}

TEST(Exercise6_1, AGradientOfTheWrongShapeIsRefused) {
  arma::mat theta = kStart;
  AdamMoments moments;
  EXPECT_THROW(adam_update(theta, arma::mat(3, 2, arma::fill::ones), moments, 0.05),
               std::invalid_argument)
      << "θ is (2 × 3) and the gradient (3 × 2): adam_update must throw std::invalid_argument";
  EXPECT_THROW(adam_update(theta, arma::mat(2, 2, arma::fill::ones), moments, 0.05),
               std::invalid_argument)
      << "θ is (2 × 3) and the gradient (2 × 2): adam_update must throw std::invalid_argument";
}

TEST(Exercise6_2, AWeightOf061OnTheTargetIsTheChaptersLoss) {
  // Scores that are the logarithms of weights summing to 1 have exactly those weights: 0.61 on
  // the target ("cat", entry 1), the other 0.39 shared evenly.
  arma::rowvec weights(9);
  weights.fill(0.39 / 8.0);
  weights(1) = 0.61;
  const TargetLoss result = target_loss(arma::log(weights), 1);
  EXPECT_TRUE(near("the loss of a weight of 0.61 on the target (-ln 0.61)", result.loss,
                   -std::log(0.61), 1e-12));
  arma::rowvec one_hot(9, arma::fill::zeros);
  one_hot(1) = 1.0;
  EXPECT_TRUE(near("dscores (the weights minus one at the target)", result.dscores,
                   weights - one_hot, 1e-12));
}

TEST(Exercise6_2, ThePrintedItRowGivesTheChaptersWeight) {
  // Chapter 06 prints the "it" row's scores after training to two digits; their loss L implies
  // the weight e^-L on "cat", which the chapter prints as 0.61.
  const arma::rowvec scores{-0.72, 1.96, -0.45, -0.72, 0.07, -1.15, -0.70, -0.52, -0.87};
  const TargetLoss result = target_loss(scores, 1);
  EXPECT_TRUE(near("the weight e^-L on \"cat\" from the printed scores", std::exp(-result.loss),
                   0.61, 0.005));
}

TEST(Exercise6_2, GradientMatchesFiniteDifferences) {
  // Each entry of dscores is the slope of the loss in that score: (L(s + h) - L(s - h)) / 2h.
  const arma::rowvec scores{0.3, -1.2, 2.0, 0.7, -0.4};
  const arma::uword target = 3;
  const TargetLoss result = target_loss(scores, target);
  const arma::rowvec numeric = attn_exercise::central_differences(
      [&](const arma::rowvec& s) { return target_loss(s, target).loss; }, scores, 1e-5);
  EXPECT_TRUE(
      near("dscores, against central differences of the loss", result.dscores, numeric, 1e-7));
  EXPECT_TRUE(near("the sum of dscores (weights and one-hot row both sum to 1)",
                   arma::accu(result.dscores), 0.0, 1e-12));
}

TEST(Exercise6_2, ScoresOfPlusOrMinus1000StayFinite) {
  // The target's weight e^-2000 underflows to 0, so -log(weight) would be infinite; the loss
  // itself is 2000 + ln(1 + e^-1), and exp(1000) must never be formed either.
  const arma::rowvec scores{1000.0, -1000.0, 999.0};
  const TargetLoss far = target_loss(scores, 1);
  EXPECT_TRUE(near("the loss of [1000 -1000 999] with target 1", far.loss,
                   2000.0 + std::log1p(std::exp(-1.0)), 1e-10));
  EXPECT_TRUE(far.dscores.is_finite())
      << "dscores of [1000 -1000 999] with target 1 is not finite: " << far.dscores;
  const TargetLoss close = target_loss(scores, 0);
  EXPECT_TRUE(near("the loss of [1000 -1000 999] with target 0 (the same as of [1 -1999 0])",
                   close.loss, std::log1p(std::exp(-1.0)), 1e-12));
  EXPECT_TRUE(near("dscores of [1000 -1000 999] with target 0", close.dscores,
                   attn::math::softmax(scores) - arma::rowvec{1.0, 0.0, 0.0}, 1e-15));
}

TEST(Exercise6_2, ATargetOutsideTheRowIsRefused) {
  EXPECT_THROW(target_loss(arma::rowvec{0.1, 0.2, 0.3}, 3), std::out_of_range)
      << "the row has 3 scores (0, 1, 2), so target 3 must throw std::out_of_range";
}
