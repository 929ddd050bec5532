#include "normal_inputs.hpp"

#include <05_scaling/measure.hpp>
#include <attn/math/validate.hpp>

#include <gtest/gtest.h>

#include <cmath>

namespace {

TEST(MeasureSpread, KnownPairs) {
  // Dot products 1·1 + 0·0 = 1 and 2·(-1) + 1·1 = -1: mean 0, variance 1, mean |·| 1.
  const arma::mat q = {{1, 0}, {2, 1}}, k = {{1, 0}, {-1, 1}};
  const attn::ch05::Spread s = attn::ch05::measure_spread(q, k);
  EXPECT_DOUBLE_EQ(s.variance, 1.0);
  EXPECT_DOUBLE_EQ(s.mean_abs, 1.0);
}

TEST(MeasureSpread, VarianceOfNormalDotProductsIsTheWidth) {
  // Var(q·k) = d_k for N(0, 1) entries; with 20,000 pairs the sample is within a few percent.
  const attn_test::Normals rng(51);
  for (arma::uword d_k : {1, 8, 64}) {
    const attn::ch05::Spread s =
        attn::ch05::measure_spread(rng.normal(20000, d_k), rng.normal(20000, d_k));
    EXPECT_NEAR(s.variance / static_cast<double>(d_k), 1.0, 0.05) << "d_k " << d_k;
  }
}

TEST(MeasureSpread, RejectsMismatchedPairs) {
  const arma::mat three_by_two(3, 2, arma::fill::ones);
  EXPECT_THROW(attn::ch05::measure_spread(three_by_two, arma::mat(2, 2, arma::fill::ones)),
               attn::math::ShapeError);
  EXPECT_THROW(attn::ch05::measure_spread(three_by_two, arma::mat(3, 4, arma::fill::ones)),
               attn::math::ShapeError);
  EXPECT_THROW(attn::ch05::measure_spread(arma::mat(), arma::mat()), attn::math::InputError);
}

TEST(Sharpness, UniformRowIsAsUndecidedAsPossible) {
  // Equal scores: every weight 1/m, entropy ln m, J = I/m - 11ᵀ/m², ‖J‖² = (m - 1)/m².
  const double m = 16;
  const attn::ch05::Sharpness s = attn::ch05::sharpness(arma::rowvec(16, arma::fill::value(3.0)));
  EXPECT_NEAR(s.max_weight, 1.0 / m, 1e-15);
  EXPECT_NEAR(s.entropy, std::log(m), 1e-13);
  EXPECT_NEAR(s.jacobian_norm, std::sqrt(m - 1) / m, 1e-15);
}

TEST(Sharpness, OneHotRowPassesNoGradient) {
  // One score 2000 above the rest: the other weights underflow to exactly 0, so max weight 1,
  // entropy 0 (0 · ln 0 counts as 0, no NaN) and a zero Jacobian.
  const attn::ch05::Sharpness s = attn::ch05::sharpness({0.0, 2000.0, 0.0});
  EXPECT_EQ(s.max_weight, 1.0);
  EXPECT_EQ(s.entropy, 0.0);
  EXPECT_EQ(s.jacobian_norm, 0.0);
}

TEST(Sharpness, LargerScoresAreSharper) {
  const arma::rowvec scores = {0.3, -1.2, 0.8, 0.1};
  const attn::ch05::Sharpness mild = attn::ch05::sharpness(scores),
                              sharp = attn::ch05::sharpness(10.0 * scores);
  EXPECT_GT(sharp.max_weight, mild.max_weight);
  EXPECT_LT(sharp.entropy, mild.entropy);
  EXPECT_LT(sharp.jacobian_norm, mild.jacobian_norm);
}

TEST(MeasureSaturation, MeansOverProbesWithAndWithoutTheScale) {
  const attn_test::Normals rng(52);
  const attn::ch05::Probe a{rng.normal(1, 4), rng.normal(5, 4)},
      b{rng.normal(1, 4), rng.normal(5, 4)};
  const attn::ch05::Saturation both = attn::ch05::measure_saturation({a, b});
  const attn::ch05::Sharpness raw_a = attn::ch05::sharpness(a.q * a.K.t());
  const attn::ch05::Sharpness raw_b = attn::ch05::sharpness(b.q * b.K.t());
  const attn::ch05::Sharpness half_b = attn::ch05::sharpness(b.q * b.K.t() / 2.0);  // √d_k = 2
  EXPECT_NEAR(both.unscaled.max_weight, (raw_a.max_weight + raw_b.max_weight) / 2, 1e-15);
  EXPECT_NEAR(both.unscaled.entropy, (raw_a.entropy + raw_b.entropy) / 2, 1e-15);
  EXPECT_NEAR(attn::ch05::measure_saturation({b}).scaled.jacobian_norm, half_b.jacobian_norm,
              1e-15);
}

TEST(MeasureSaturation, ScaledSharpnessDoesNotGrowWithWidth) {
  // What the scale is for: unscaled rows saturate as d_k grows, scaled rows stay as they were.
  const attn_test::Normals rng(53);
  const auto probes = [&](arma::uword d_k) {
    std::vector<attn::ch05::Probe> p;
    for (int t = 0; t < 300; ++t)
      p.push_back({rng.normal(1, d_k), rng.normal(16, d_k)});
    return attn::ch05::measure_saturation(p);
  };
  const attn::ch05::Saturation narrow = probes(2), wide = probes(1024);
  EXPECT_GT(wide.unscaled.max_weight, 0.9);
  EXPECT_LT(wide.unscaled.jacobian_norm, 0.2 * wide.scaled.jacobian_norm);
  EXPECT_NEAR(wide.scaled.max_weight, narrow.scaled.max_weight, 0.05);
  EXPECT_NEAR(wide.scaled.jacobian_norm, narrow.scaled.jacobian_norm, 0.05);
}

TEST(MeasureSaturation, RejectsNoProbesAndMismatchedWidths) {
  EXPECT_THROW(attn::ch05::measure_saturation({}), attn::math::InputError);
  const attn::ch05::Probe mismatched{arma::rowvec(3, arma::fill::ones),
                                     arma::mat(4, 2, arma::fill::ones)};
  EXPECT_THROW(attn::ch05::measure_saturation({mismatched}), attn::math::ShapeError);
}

}  // namespace
