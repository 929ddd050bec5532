// Chapter 11's training recipe against PyTorch itself, in float64
// (tests/data/generate_optimizer_fixtures.py, torch 2.6): torch.optim.AdamW with two parameter
// groups, torch.nn.utils.clip_grad_norm_, and a warm-up and cosine schedule built from
// torch.optim.lr_scheduler's LinearLR, CosineAnnealingLR and SequentialLR. Everything agrees
// within 1e-10; the largest differences are recorded as test properties
// (--gtest_output=xml shows them). Then a step worked by hand, checkpoints, clipping, errors,
// and properties for every input RapidCheck can think of.
#include <attn/math/optimizer.hpp>
#include <attn/math/validate.hpp>
#include "bad_input.hpp"
#include "fixture_blocks.hpp"
#include "normal_inputs.hpp"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace {

constexpr double kTorch = 1e-10;
const std::vector<std::string> kNames = {"embedding", "W1", "b1", "gamma"};

arma::mat at(const std::string& name) {
  return attn_test::fixture_block("torch_optimizer.txt", name);
}

double gap(const arma::mat& ours, const arma::mat& theirs) {
  EXPECT_EQ(ours.n_rows, theirs.n_rows);
  EXPECT_EQ(ours.n_cols, theirs.n_cols);
  return arma::abs(ours - theirs).max();
}

attn::math::WarmupCosine torch_schedule(int s) {
  const arma::mat c = at("schedule " + std::to_string(s) + " config");
  return {.peak = c(0),
          .minimum = c(1),
          .warmup_steps = static_cast<std::int64_t>(c(2)),
          .total_steps = static_cast<std::int64_t>(c(3)),
          .start_factor = c(4)};
}

// A (1 × 1) matrix: arma::mat{{x}} is ambiguous.
arma::mat scalar(double x) {
  return arma::mat(1, 1, arma::fill::value(x));
}

bool identical(const arma::mat& a, const arma::mat& b) {
  return arma::size(a) == arma::size(b) && std::equal(a.begin(), a.end(), b.begin());
}

}  // namespace

TEST(TorchSchedule, EveryStepEqualsSequentialLinearThenCosine) {
  double largest = 0.0;
  for (int s : {0, 1}) {
    const attn::math::WarmupCosine schedule = torch_schedule(s);
    const arma::mat theirs = at("schedule " + std::to_string(s) + " learning rates");
    ASSERT_EQ(theirs.n_elem, static_cast<arma::uword>(schedule.total_steps + 1));
    for (std::int64_t t = 0; t <= schedule.total_steps; ++t) {
      const double difference = std::abs(attn::math::learning_rate(schedule, t) - theirs(t));
      EXPECT_LE(difference, kTorch) << "schedule " << s << ", step " << t;
      EXPECT_LE(difference, 1e-15 * theirs(t)) << "schedule " << s << ", step " << t;
      largest = std::max(largest, difference);
    }
  }
  RecordProperty("largest_difference", fmt::format("{:.2e}", largest));
}

TEST(TorchAdamW, SixStepsOfClipThenStepEqualTorchs) {
  const arma::mat config = at("adamw config");
  const double beta1 = config(0), beta2 = config(1), epsilon = config(2), decay = config(3),
               max_norm = config(4);
  const auto steps = static_cast<int>(config(5));
  std::vector<bool> decays;
  const arma::mat decays_flags = at("adamw decays");
  for (double flag : decays_flags)
    decays.push_back(flag != 0.0);
  std::vector<arma::mat> parameters;
  for (const std::string& name : kNames)
    parameters.push_back(at("adamw initial " + name));
  std::vector<arma::mat*> pointers;
  for (arma::mat& p : parameters)
    pointers.push_back(&p);
  attn::math::AdamW optimizer(decays, decay, beta1, beta2, epsilon);
  const attn::math::WarmupCosine schedule = torch_schedule(1);
  double norm_gap = 0.0, gradient_gap = 0.0, rate_gap = 0.0, parameter_gap = 0.0, moment_gap = 0.0;
  int clipped = 0;
  for (int t = 0; t < steps; ++t) {
    SCOPED_TRACE("step " + std::to_string(t));
    const std::string step = "adamw step " + std::to_string(t) + " ";
    std::vector<arma::mat> gradients;
    for (const std::string& name : kNames)
      gradients.push_back(at(step + "gradient " + name));
    const double norm = attn::math::clip_grad_norm(gradients, max_norm);
    norm_gap = std::max(norm_gap, std::abs(norm - at(step + "norm")(0)));
    clipped += norm > max_norm;
    const double rate = attn::math::learning_rate(schedule, t);
    rate_gap = std::max(rate_gap, std::abs(rate - at(step + "learning rate")(0)));
    for (std::size_t i = 0; i < kNames.size(); ++i)
      gradient_gap = std::max(gradient_gap, gap(gradients[i], at(step + "clipped " + kNames[i])));
    optimizer.step(pointers, gradients, rate);
    EXPECT_EQ(optimizer.state().steps, t + 1);
    for (std::size_t i = 0; i < kNames.size(); ++i) {
      parameter_gap =
          std::max(parameter_gap, gap(parameters[i], at(step + "parameter " + kNames[i])));
      moment_gap = std::max(
          {moment_gap, gap(optimizer.state().first[i], at(step + "first moment " + kNames[i])),
           gap(optimizer.state().second[i], at(step + "second moment " + kNames[i]))});
    }
  }
  EXPECT_EQ(clipped, 3);  // the fixture clips on half of its steps
  EXPECT_LE(norm_gap, kTorch);
  EXPECT_LE(gradient_gap, kTorch);
  EXPECT_LE(rate_gap, kTorch);
  EXPECT_LE(parameter_gap, kTorch);
  EXPECT_LE(moment_gap, kTorch);
  RecordProperty("norm_gap", fmt::format("{:.2e}", norm_gap));
  RecordProperty("clipped_gradient_gap", fmt::format("{:.2e}", gradient_gap));
  RecordProperty("learning_rate_gap", fmt::format("{:.2e}", rate_gap));
  RecordProperty("parameter_gap", fmt::format("{:.2e}", parameter_gap));
  RecordProperty("moment_gap", fmt::format("{:.2e}", moment_gap));
}

TEST(AdamW, OneStepWorkedByHand) {
  // Two scalar parameters θ = 1, the first decaying, each with gradient g = 0.5, at η = 0.1,
  // λ = 0.1 and the default β1 = 0.9, β2 = 0.999, ε = 1e-8. At t = 1:
  //   decay       θ ← (1 − ηλ) θ = 0.99 (the first only)
  //   moments     m = 0.1 · 0.5 = 0.05,   v = 0.001 · 0.25 = 0.00025
  //   corrected   m / (1 − β1) = 0.5,     √v / √(1 − β2) = 0.0158114 / 0.0316228 = 0.5
  //   update      η · 0.5 / (0.5 + ε) = 0.1 (1 − 2e-8) = 0.099999998
  //   θ           0.99 − 0.099999998 = 0.890000002,   1 − 0.099999998 = 0.900000002
  // On the first step bias correction makes the update ±η whatever |g| is (for |g| ≫ ε).
  arma::mat decayed = scalar(1.0), kept = scalar(1.0);
  attn::math::AdamW optimizer({true, false}, 0.1);
  optimizer.step({&decayed, &kept}, {scalar(0.5), scalar(0.5)}, 0.1);
  EXPECT_NEAR(decayed(0), 0.890000002, 1e-15);
  EXPECT_NEAR(kept(0), 0.900000002, 1e-15);
  // 1 − 0.9 is not 0.1 in binary, nor 1 − 0.999 0.001: the moments are off in the last bits.
  EXPECT_NEAR(optimizer.state().first[0](0), 0.05, 1e-16);
  EXPECT_NEAR(optimizer.state().second[0](0), 0.00025, 1e-18);
}

TEST(AdamW, AZeroGradientLeavesOnlyTheDecay) {
  // m = v = 0, so the Adam update is 0 / ε = 0: what is left is θ ← (1 − ηλ) θ, exactly.
  arma::mat decayed = {{2.0, -3.0}}, kept = {{2.0, -3.0}};
  const arma::mat zero(1, 2, arma::fill::zeros);
  attn::math::AdamW optimizer({true, false}, 0.5);
  optimizer.step({&decayed, &kept}, {zero, zero}, 0.25);
  EXPECT_TRUE(identical(decayed, arma::mat{{2.0, -3.0}} * 0.875));
  EXPECT_TRUE(identical(kept, arma::mat{{2.0, -3.0}}));
}

TEST(AdamW, RestoringAStateThenSteppingIsBitForBitNeverHavingStopped) {
  const attn_test::Normals rng(41);
  const arma::mat W0 = rng.normal(3, 4), b0 = rng.normal(1, 4);
  std::vector<std::vector<arma::mat>> gradients;
  for (int t = 0; t < 6; ++t)
    gradients.push_back({rng.normal(3, 4), rng.normal(1, 4)});
  const attn::math::WarmupCosine schedule{
      .peak = 0.01, .minimum = 0.001, .warmup_steps = 2, .total_steps = 6, .start_factor = 0.5};

  arma::mat W = W0, b = b0;  // six steps without stopping
  attn::math::AdamW straight({true, false}, 0.1, 0.9, 0.95);
  for (int t = 0; t < 6; ++t)
    straight.step({&W, &b}, gradients[t], attn::math::learning_rate(schedule, t));

  arma::mat W_saved = W0, b_saved = b0;  // three steps, a checkpoint, a new optimiser
  attn::math::AdamWState saved;
  {
    attn::math::AdamW first_run({true, false}, 0.1, 0.9, 0.95);
    for (int t = 0; t < 3; ++t)
      first_run.step({&W_saved, &b_saved}, gradients[t], attn::math::learning_rate(schedule, t));
    saved = first_run.state();
  }
  attn::math::AdamW resumed({true, false}, 0.1, 0.9, 0.95);
  resumed.restore(saved);
  for (int t = 3; t < 6; ++t)
    resumed.step({&W_saved, &b_saved}, gradients[t], attn::math::learning_rate(schedule, t));

  EXPECT_TRUE(identical(W_saved, W));
  EXPECT_TRUE(identical(b_saved, b));
  EXPECT_EQ(resumed.state().steps, 6);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_TRUE(identical(resumed.state().first[i], straight.state().first[i])) << i;
    EXPECT_TRUE(identical(resumed.state().second[i], straight.state().second[i])) << i;
  }
}

TEST(AdamW, RestoringAFreshStateStartsOver) {
  arma::mat x = scalar(1.0), y = scalar(1.0);
  attn::math::AdamW used({false}), fresh({false});
  used.step({&x}, {scalar(3.0)}, 0.1);
  used.restore({});
  used.step({&x}, {scalar(-1.0)}, 0.1);
  fresh.step({&y}, {scalar(-1.0)}, 0.1);
  EXPECT_EQ(used.state().steps, 1);
  EXPECT_TRUE(identical(used.state().first[0], fresh.state().first[0]));
}

TEST(AdamW, RejectsBadHyperParameters) {
  using attn_bad_input::kInf;
  using attn_bad_input::kNaN;
  for (double decay : {-0.1, kNaN, kInf})
    EXPECT_THROW(attn::math::AdamW({true}, decay), attn::math::InputError) << decay;
  for (double beta : {-0.1, 1.0, 1.5, kNaN}) {
    EXPECT_THROW(attn::math::AdamW({true}, 0.1, beta), attn::math::InputError) << beta;
    EXPECT_THROW(attn::math::AdamW({true}, 0.1, 0.9, beta), attn::math::InputError) << beta;
  }
  for (double epsilon : {0.0, -1e-8, kNaN, kInf})
    EXPECT_THROW(attn::math::AdamW({true}, 0.1, 0.9, 0.999, epsilon), attn::math::InputError)
        << epsilon;
  EXPECT_NO_THROW(attn::math::AdamW({true}, 0.0, 0.0, 0.0));  // no decay, no memory: allowed
  arma::mat x = scalar(1.0);
  attn::math::AdamW optimizer({true});
  for (double rate : {-1e-3, kNaN, kInf})
    EXPECT_THROW(optimizer.step({&x}, {scalar(1.0)}, rate), attn::math::InputError) << rate;
  EXPECT_EQ(optimizer.state().steps, 0);
  EXPECT_EQ(x(0), 1.0);
}

TEST(AdamW, ShapeErrorsNameTheIndexAndBothShapes) {
  using attn_bad_input::ThrowsNaming;
  arma::mat W(2, 3, arma::fill::ones), b(1, 3, arma::fill::ones);
  attn::math::AdamW optimizer({true, false});
  const arma::mat gW(2, 3, arma::fill::ones), gb(1, 3, arma::fill::ones);
  EXPECT_TRUE(ThrowsNaming<attn::math::ShapeError>([&] { optimizer.step({&W}, {gW}, 0.1); },
                                                   "1 parameters, but 2 given at construction"));
  EXPECT_TRUE(ThrowsNaming<attn::math::ShapeError>(
      [&] {
        optimizer.step({&W, &b}, {gW}, 0.1);
      },
      "2 parameters but 1 gradients"));
  EXPECT_TRUE(ThrowsNaming<attn::math::ShapeError>(
      [&] {
        optimizer.step({&W, &b}, {gW, arma::mat(3, 1, arma::fill::ones)}, 0.1);
      },
      "gradient 1 is (3 × 1) but parameter 1 is (1 × 3)"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] {
        optimizer.step({&W, nullptr}, {gW, gb}, 0.1);
      },
      "parameter 1 is a null pointer"));
  optimizer.step({&W, &b}, {gW, gb}, 0.1);
  arma::mat wider(2, 4, arma::fill::ones);
  EXPECT_TRUE(ThrowsNaming<attn::math::ShapeError>(
      [&] {
        optimizer.step({&wider, &b}, {arma::mat(2, 4, arma::fill::ones), gb}, 0.1);
      },
      "parameter 0 is (2 × 4) but the shape of its moments from earlier steps is (2 × 3)"));
}

TEST(AdamW, NothingMovesWhenALaterGradientIsBad) {
  const attn_test::Normals rng(42);
  arma::mat W = rng.normal(2, 3), b = rng.normal(1, 3);
  attn::math::AdamW optimizer({true, false});
  optimizer.step({&W, &b}, {rng.normal(2, 3), rng.normal(1, 3)}, 0.1);
  const arma::mat W_before = W, b_before = b;
  const attn::math::AdamWState state_before = optimizer.state();
  arma::mat bad = rng.normal(1, 3);
  bad(0, 2) = attn_bad_input::kNaN;
  EXPECT_TRUE(attn_bad_input::ThrowsNaming<attn::math::InputError>(
      [&] {
        optimizer.step({&W, &b}, {rng.normal(2, 3), bad}, 0.1);
      },
      "gradient 1"));
  EXPECT_TRUE(identical(W, W_before));
  EXPECT_TRUE(identical(b, b_before));
  EXPECT_EQ(optimizer.state().steps, 1);
  EXPECT_TRUE(identical(optimizer.state().first[0], state_before.first[0]));
  EXPECT_TRUE(identical(optimizer.state().second[0], state_before.second[0]));
}

TEST(AdamW, RestoreRejectsStatesThatCannotBe) {
  attn::math::AdamW optimizer({true, false});
  const arma::mat a(2, 2, arma::fill::ones), row(1, 2, arma::fill::ones);
  arma::mat negative = a;
  negative(1, 0) = -1e-3;
  arma::mat infinite = a;
  infinite(0, 1) = attn_bad_input::kInf;
  EXPECT_THROW(optimizer.restore({-1, {}, {}}), attn::math::InputError);
  EXPECT_THROW(optimizer.restore({3, {}, {}}), attn::math::ShapeError);  // steps, no moments
  EXPECT_THROW(optimizer.restore({0, {a, row}, {a, row}}), attn::math::ShapeError);  // no steps
  EXPECT_THROW(optimizer.restore({1, {a}, {a}}), attn::math::ShapeError);       // one pair of two
  EXPECT_THROW(optimizer.restore({1, {a, row}, {a}}), attn::math::ShapeError);  // a missing second
  EXPECT_THROW(optimizer.restore({1, {a, row}, {row, row}}), attn::math::ShapeError);
  EXPECT_THROW(optimizer.restore({1, {a, row}, {negative, row}}), attn::math::InputError);
  EXPECT_THROW(optimizer.restore({1, {infinite, row}, {a, row}}), attn::math::InputError);
  EXPECT_EQ(optimizer.state().steps, 0);
  EXPECT_TRUE(optimizer.state().first.empty());
  EXPECT_NO_THROW(optimizer.restore({7, {a, row}, {a, row}}));
  EXPECT_EQ(optimizer.state().steps, 7);
}

TEST(WarmupCosineSchedule, ReachesThePeakAfterWarmUpAndTheMinimumAtTheEnd) {
  const attn::math::WarmupCosine schedule{
      .peak = 1.0, .minimum = 0.1, .warmup_steps = 4, .total_steps = 12, .start_factor = 0.0};
  EXPECT_EQ(attn::math::learning_rate(schedule, 0), 0.0);
  EXPECT_EQ(attn::math::learning_rate(schedule, 2), 0.5);
  EXPECT_EQ(attn::math::learning_rate(schedule, 4), 1.0);
  EXPECT_NEAR(attn::math::learning_rate(schedule, 8), 0.55, 1e-15);  // halfway down the cosine
  EXPECT_EQ(attn::math::learning_rate(schedule, 12), 0.1);
  EXPECT_EQ(attn::math::learning_rate(schedule, 1000), 0.1);  // stays there, unlike torch's cosine
  const attn::math::WarmupCosine no_warmup{.peak = 1.0, .warmup_steps = 0, .total_steps = 2};
  EXPECT_EQ(attn::math::learning_rate(no_warmup, 0), 1.0);
  EXPECT_NEAR(attn::math::learning_rate(no_warmup, 1), 0.5, 1e-15);
}

TEST(WarmupCosineSchedule, RejectsSchedulesThatCannotBe) {
  using attn_bad_input::kNaN;
  const attn::math::WarmupCosine good{
      .peak = 1.0, .minimum = 0.1, .warmup_steps = 2, .total_steps = 5, .start_factor = 0.5};
  EXPECT_NO_THROW(attn::math::learning_rate(good, 0));
  EXPECT_THROW(attn::math::learning_rate(good, -1), attn::math::InputError);
  std::vector<attn::math::WarmupCosine> bad(9, good);
  bad[0].peak = kNaN;
  bad[1].peak = attn_bad_input::kInf;
  bad[2].minimum = -0.1;
  bad[3].minimum = 2.0;  // above the peak
  bad[4].minimum = kNaN;
  bad[5].warmup_steps = -1;
  bad[6].warmup_steps = 5;  // no steps left for the cosine
  bad[7].start_factor = 1.5;
  bad[8].start_factor = kNaN;
  for (std::size_t i = 0; i < bad.size(); ++i)
    EXPECT_THROW(attn::math::learning_rate(bad[i], 0), attn::math::InputError) << "case " << i;
}

TEST(ClipGradNorm, ScalesEveryGradientByOneFactorAndReturnsTheNormBefore) {
  // The norm of (3, 4) and (12) is 13; clipped to 6.5, every entry is halved (up to 1e-6).
  std::vector<arma::mat> gradients = {arma::mat{{3.0, 4.0}}, scalar(12.0)};
  EXPECT_EQ(attn::math::clip_grad_norm(gradients, 6.5), 13.0);
  const double factor = 6.5 / (13.0 + 1e-6);
  EXPECT_TRUE(identical(gradients[0], arma::mat{{3.0, 4.0}} * factor));
  EXPECT_TRUE(identical(gradients[1], scalar(12.0) * factor));
}

TEST(ClipGradNorm, BelowTheMaximumTheGradientsAreUnchanged) {
  const attn_test::Normals rng(43);
  const std::vector<arma::mat> original = {rng.normal(3, 5), rng.normal(1, 5)};
  std::vector<arma::mat> gradients = original;
  const double norm = attn::math::clip_grad_norm(gradients, 1e3);
  EXPECT_NEAR(
      norm,
      std::sqrt(arma::accu(arma::square(original[0])) + arma::accu(arma::square(original[1]))),
      1e-12);
  EXPECT_TRUE(identical(gradients[0], original[0]));
  EXPECT_TRUE(identical(gradients[1], original[1]));
  std::vector<arma::mat> measured = original;  // an infinite maximum only measures
  EXPECT_EQ(attn::math::clip_grad_norm(measured, std::numeric_limits<double>::infinity()), norm);
  EXPECT_TRUE(identical(measured[0], original[0]));
}

TEST(ClipGradNorm, JustBelowTheMaximumTorchsTermStillShrinksThem) {
  // The norm is 1 − 1e-7 < 1, but 1 / (norm + 1e-6) < 1 too: torch scales, and so does this.
  std::vector<arma::mat> gradients = {scalar(1.0 - 1e-7)};
  attn::math::clip_grad_norm(gradients, 1.0);
  EXPECT_LT(gradients[0](0), 1.0 - 1e-7);
  EXPECT_DOUBLE_EQ(gradients[0](0), (1.0 - 1e-7) / (1.0 + 9e-7));
}

TEST(ClipGradNorm, ANonFiniteNormThrowsAndChangesNothing) {
  using attn_bad_input::ThrowsNaming;
  std::vector<arma::mat> gradients = {arma::mat{{1.0, 2.0}}, scalar(3.0)};
  const std::vector<arma::mat> original = gradients;
  for (double bad : {attn_bad_input::kNaN, attn_bad_input::kInf, 1e200}) {  // 1e200² overflows
    gradients[1](0) = bad;
    EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
        [&] { attn::math::clip_grad_norm(gradients, 1.0); }, "cannot be clipped"))
        << bad;
    EXPECT_TRUE(identical(gradients[0], original[0]));
  }
  gradients = original;
  for (double max_norm : {0.0, -1.0, attn_bad_input::kNaN})
    EXPECT_THROW(attn::math::clip_grad_norm(gradients, max_norm), attn::math::InputError)
        << max_norm;
  EXPECT_TRUE(identical(gradients[1], original[1]));
  std::vector<arma::mat> none;
  EXPECT_EQ(attn::math::clip_grad_norm(none, 1.0), 0.0);  // as torch: no gradients, norm 0
}

RC_GTEST_PROP(ClipGradNormProperties, ClippedNormIsAtMostTheMaximumAndTheDirectionStays, ()) {
  const auto count = *rc::gen::inRange(1, 4);
  std::vector<arma::mat> gradients;
  for (int i = 0; i < count; ++i) {
    const auto rows = *rc::gen::inRange<arma::uword>(1, 4),
               cols = *rc::gen::inRange<arma::uword>(1, 4);
    const auto values = *rc::gen::container<std::vector<double>>(
        rows * cols,
        rc::gen::map(rc::gen::inRange(-100000, 100001), [](int k) { return k / 100.0; }));
    gradients.emplace_back(values.data(), rows, cols);
  }
  const double max_norm =
      *rc::gen::map(rc::gen::inRange(1, 100001), [](int k) { return k / 100.0; });
  const std::vector<arma::mat> original = gradients;
  const double norm = attn::math::clip_grad_norm(gradients, max_norm);
  double squares = 0.0;
  for (const arma::mat& g : gradients)
    squares += arma::accu(arma::square(g));
  RC_ASSERT(std::sqrt(squares) <= max_norm * (1 + 1e-12));
  const double factor = std::min(1.0, max_norm / (norm + 1e-6));  // one factor for all
  for (std::size_t i = 0; i < gradients.size(); ++i)
    RC_ASSERT(identical(gradients[i], original[i] * factor));
  if (norm + 1e-6 <= max_norm)
    for (std::size_t i = 0; i < gradients.size(); ++i)
      RC_ASSERT(identical(gradients[i], original[i]));
}

RC_GTEST_PROP(WarmupCosineProperties, RisesThenFallsBetweenTheBounds, ()) {
  const double peak = *rc::gen::map(rc::gen::inRange(1, 10001), [](int k) { return k * 1e-5; });
  const double minimum =
      peak * *rc::gen::map(rc::gen::inRange(0, 101), [](int k) { return k / 100.0; });
  const auto warmup = *rc::gen::inRange<std::int64_t>(0, 50);
  const auto total = warmup + *rc::gen::inRange<std::int64_t>(1, 200);
  const double start = *rc::gen::map(rc::gen::inRange(0, 101), [](int k) { return k / 100.0; });
  const attn::math::WarmupCosine schedule{.peak = peak,
                                          .minimum = minimum,
                                          .warmup_steps = warmup,
                                          .total_steps = total,
                                          .start_factor = start};
  // η_min + (η_max − η_min) need not round to η_max: the peak may be off by an ulp or two.
  const double ulps = 4e-16 * peak;
  double previous = attn::math::learning_rate(schedule, 0);
  for (std::int64_t t = 1; t <= total + 2; ++t) {
    const double rate = attn::math::learning_rate(schedule, t);
    RC_ASSERT(rate >= 0.0);
    RC_ASSERT(rate <= peak + ulps);
    if (t <= warmup)
      RC_ASSERT(rate >= previous - ulps);
    else
      RC_ASSERT(rate <= previous);
    if (t >= warmup)
      RC_ASSERT(rate >= minimum);
    previous = rate;
  }
  RC_ASSERT(std::abs(attn::math::learning_rate(schedule, warmup) - peak) <= ulps);
  RC_ASSERT(attn::math::learning_rate(schedule, total) == minimum);
}

// Adam is AdamW with no parameter decayed (chapter 06 trains its head so).
TEST(AdamWithoutDecay, FindsTheMinimumOfAQuadratic) {
  arma::mat x = {{3.0, -2.0}};
  const arma::mat target = {{0.5, 1.5}};
  attn::math::AdamW adam({false});
  for (int step = 0; step < 500; ++step)
    adam.step({&x}, {2.0 * (x - target)}, 0.1);
  EXPECT_LT(arma::abs(x - target).max(), 1e-3);
}

TEST(AdamWithoutDecay, FirstStepMovesEachEntryByTheLearningRate) {
  // Bias correction makes the first update exactly -lr * sign(g) (up to epsilon).
  arma::mat x = {{1.0, 1.0}};
  attn::math::AdamW adam({false}, 0.5);  // a decay rate, but no parameter that decays
  adam.step({&x}, {arma::mat{{5.0, -0.001}}}, 0.01);
  EXPECT_NEAR(x(0), 0.99, 1e-9);
  EXPECT_NEAR(x(1), 1.01, 1e-5);
}

TEST(AdamWithoutDecay, ShapesMustAgreeWithEarlierSteps) {
  arma::mat y(2, 2, arma::fill::ones);
  attn::math::AdamW adam({false});
  adam.step({&y}, {arma::mat(2, 2, arma::fill::ones)}, 0.1);
  arma::mat bigger(3, 3, arma::fill::ones);
  EXPECT_THROW(adam.step({&bigger}, {arma::mat(3, 3, arma::fill::ones)}, 0.1),
               attn::math::ShapeError);
}
