// RMSNorm, SiLU and the SwiGLU MLP (attn/math/layers.hpp), the layers Llama and Mistral put
// where GPT-2 has layer norm and the GELU MLP: against PyTorch itself in float64
// (tests/data/torch_modern.txt, written by tests/data/generate_modern_fixtures.py:
// nn.RMSNorm(16, eps=1e-5), and three bias-free nn.Linear around F.silu, each with the
// gradients of L = sum(y ⊙ R)), each backward pass against central finite differences,
// SiLU at its edges, and bad input.
#include <attn/math/gradient_check.hpp>
#include <attn/math/layers.hpp>
#include <attn/math/validate.hpp>

#include <gtest/gtest.h>

#include "bad_input.hpp"
#include "fixture_blocks.hpp"
#include "normal_inputs.hpp"

#include <cmath>
#include <map>
#include <stdexcept>
#include <string>

namespace {

using attn_bad_input::kInf;
using attn_bad_input::kNaN;
using attn_bad_input::ones;
using attn_bad_input::ThrowsNaming;
using attn_bad_input::tokens;
using attn_bad_input::with;

constexpr double kTorch = 1e-10;  // forward passes and gradients against PyTorch, in float64
constexpr double kEps = 1e-5;     // the fixture's RMSNorm epsilon, and Llama's

arma::mat at(const std::string& name) {
  return attn_test::fixture_block("torch_modern.txt", name);
}

// The largest absolute difference, once the shapes agree.
double gap(const arma::mat& ours, const arma::mat& theirs) {
  EXPECT_EQ(ours.n_rows, theirs.n_rows);
  EXPECT_EQ(ours.n_cols, theirs.n_cols);
  if (ours.n_rows != theirs.n_rows || ours.n_cols != theirs.n_cols)
    return arma::datum::inf;
  return arma::abs(ours - theirs).max();
}

attn::math::SwiGluWeights torch_swiglu_weights() {
  return {at("swiglu W_gate"), at("swiglu W_up"), at("swiglu W_down")};
}

// ----------------------------------------------------------------------------------- RMSNorm

TEST(RmsNorm, MatchesTorchForward) {
  const arma::rowvec gamma = at("rms_norm gamma");
  const attn::math::RmsNorm ours = attn::math::rms_norm(at("rms_norm x"), gamma, kEps);
  EXPECT_LE(gap(ours.y, at("rms_norm y")), kTorch);
}

TEST(RmsNorm, MatchesTorchGradients) {
  const arma::rowvec gamma = at("rms_norm gamma");
  const attn::math::RmsNormGradients g = attn::math::rms_norm_backward(
      attn::math::rms_norm(at("rms_norm x"), gamma, kEps), gamma, at("rms_norm R"));
  EXPECT_LE(gap(g.dx, at("rms_norm dx")), kTorch);
  EXPECT_LE(gap(g.dgamma, at("rms_norm dgamma")), kTorch);
}

TEST(RmsNorm, KnownRowsAndNoCentring) {
  // x = [3, 4]: mean square 12.5, so x_hat = [3, 4] / sqrt(12.5 + eps).
  const attn::math::RmsNorm out =
      attn::math::rms_norm(arma::mat{{3.0, 4.0}, {-2.0, -2.0}}, arma::rowvec{1.0, 2.0}, kEps);
  const double r = std::sqrt(12.5 + kEps);
  EXPECT_NEAR(out.inv_rms(0), 1.0 / r, 1e-15);
  EXPECT_NEAR(out.y(0, 0), 3.0 / r, 1e-15);
  EXPECT_NEAR(out.y(0, 1), 8.0 / r, 1e-15);
  // A constant row keeps its sign: RMSNorm does not centre (layer norm would give 0 here).
  const double c = 2.0 / std::sqrt(4.0 + kEps);
  EXPECT_NEAR(out.y(1, 0), -c, 1e-15);
  EXPECT_NEAR(out.y(1, 1), -2.0 * c, 1e-15);
}

TEST(RmsNorm, EachRowOfXHatHasRootMeanSquareOne) {
  const attn_test::Normals draw(201);
  const arma::mat x = draw.normal(5, 7) * 3.0 + 2.0;
  const attn::math::RmsNorm out = attn::math::rms_norm(x, arma::rowvec(7, arma::fill::ones), 1e-12);
  for (arma::uword i = 0; i < 5; ++i)
    EXPECT_NEAR(arma::mean(arma::square(out.x_hat.row(i))), 1.0, 1e-9);
  EXPECT_LE(arma::abs(out.y - out.x_hat).max(), 0.0);  // gamma = 1
}

TEST(RmsNorm, BackwardMatchesFiniteDifferences) {
  const attn_test::Normals draw(202);
  const arma::mat x = draw.normal(4, 6), w = draw.normal(4, 6);  // L = sum(w ∘ y)
  const arma::rowvec gamma = draw.normal(1, 6);
  const attn::math::RmsNormGradients g =
      attn::math::rms_norm_backward(attn::math::rms_norm(x, gamma), gamma, w);
  const auto loss_x = [&](const arma::mat& v) {
    return arma::accu(w % attn::math::rms_norm(v, gamma).y);
  };
  EXPECT_LE(attn::math::check_gradient(loss_x, x, g.dx).max_relative_error, 1e-7);
  const auto loss_gamma = [&](const arma::mat& v) {
    return arma::accu(w % attn::math::rms_norm(x, v).y);
  };
  EXPECT_LE(attn::math::check_gradient(loss_gamma, gamma, g.dgamma).max_relative_error, 1e-7);
}

// ------------------------------------------------------------------------------------ SiLU

TEST(Silu, KnownValuesAndSiluOfAMinusSiluOfMinusAIsA) {
  const arma::mat a = {{-30.0, -3.0, -1.0, -0.25, 0.0, 0.5, 2.0, 7.0, 30.0}};
  const arma::mat s = attn::math::silu(a);
  for (arma::uword j = 0; j < a.n_elem; ++j)
    EXPECT_NEAR(s(j), a(j) / (1.0 + std::exp(-a(j))), 1e-15 * (1.0 + std::abs(a(j)))) << a(j);
  EXPECT_EQ(s(4), 0.0);
  EXPECT_LE(arma::abs(s - attn::math::silu(-a) - a).max(), 1e-14);  // a σ(a) + a σ(−a) = a
}

TEST(Silu, HasDocumentedValuesAtNaNAndInfinity) {
  const arma::mat a{{kNaN, kInf, -kInf, 0.0}};
  const arma::mat s = attn::math::silu(a);
  EXPECT_TRUE(std::isnan(s(0, 0)));
  EXPECT_EQ(s(0, 1), kInf);
  EXPECT_EQ(s(0, 2), 0.0);  // the limit, not −∞ · σ(−∞) = −∞ · 0 = NaN
  EXPECT_EQ(s(0, 3), 0.0);
  EXPECT_TRUE(attn::math::silu(arma::mat(0, 3)).is_empty());
}

TEST(Silu, LargeInputsNeitherOverflowNorLosePrecision) {
  // e^(−a) overflows for a < −709.78; the logistic is taken from e^(−|a|), which cannot.
  const arma::mat a{{-1000.0, -745.0, -700.0, -40.0, 40.0, 700.0, 1000.0, 1e308}};
  const arma::mat s = attn::math::silu(a);
  ASSERT_TRUE(s.is_finite());
  EXPECT_EQ(s(0), 0.0);  // −1000 e^(−1000) is below the smallest double
  EXPECT_LE(s(1), 0.0);
  EXPECT_GT(s(1), -1e-300);
  // a σ(a) = a e^a / (1 + e^a) for a < 0: relative precision, where a naive 1/(1 + e^(−a))
  // would keep it only until e^(−a) overflows.
  EXPECT_NEAR(s(2) / (-700.0 * std::exp(-700.0)), 1.0, 1e-13);
  EXPECT_NEAR(s(3) / (-40.0 * std::exp(-40.0) / (1.0 + std::exp(-40.0))), 1.0, 1e-14);
  EXPECT_DOUBLE_EQ(s(4), 40.0 / (1.0 + std::exp(-40.0)));
  EXPECT_EQ(s(5), 700.0);
  EXPECT_EQ(s(6), 1000.0);
  EXPECT_EQ(s(7), 1e308);
}

// ---------------------------------------------------------------------------------- SwiGLU

TEST(SwiGlu, MatchesTorchForward) {
  const attn::math::SwiGlu ours = attn::math::swiglu(at("swiglu x"), torch_swiglu_weights());
  EXPECT_LE(gap(ours.y, at("swiglu y")), kTorch);
}

TEST(SwiGlu, MatchesTorchGradients) {
  const arma::mat x = at("swiglu x");
  const attn::math::SwiGluWeights W = torch_swiglu_weights();
  const attn::math::SwiGluGradients g =
      attn::math::swiglu_backward(x, W, attn::math::swiglu(x, W), at("swiglu R"));
  EXPECT_LE(gap(g.dx, at("swiglu dx")), kTorch);
  EXPECT_LE(gap(g.dW.W_gate, at("swiglu dW_gate")), kTorch);
  EXPECT_LE(gap(g.dW.W_up, at("swiglu dW_up")), kTorch);
  EXPECT_LE(gap(g.dW.W_down, at("swiglu dW_down")), kTorch);
}

TEST(SwiGlu, IntermediateValuesAreWhatTheyAreNamed) {
  const attn_test::Normals draw(203);
  const arma::mat x = draw.normal(3, 4);
  const attn::math::SwiGluWeights W{draw.normal(4, 6), draw.normal(4, 6), draw.normal(6, 4)};
  const attn::math::SwiGlu out = attn::math::swiglu(x, W);
  EXPECT_LE(arma::abs(out.gate - x * W.W_gate).max(), 1e-14);
  EXPECT_LE(arma::abs(out.up - x * W.W_up).max(), 1e-14);
  EXPECT_LE(arma::abs(out.sigmoid - 1.0 / (1.0 + arma::exp(-out.gate))).max(), 1e-15);
  EXPECT_LE(arma::abs(out.hidden - attn::math::silu(out.gate) % out.up).max(), 1e-14);
  EXPECT_LE(arma::abs(out.y - out.hidden * W.W_down).max(), 1e-14);
}

TEST(SwiGlu, BackwardMatchesFiniteDifferences) {
  const attn_test::Normals draw(204);
  const arma::mat x = draw.normal(5, 4), w = draw.normal(5, 4);  // L = sum(w ∘ y)
  const attn::math::SwiGluWeights W{draw.normal(4, 8), draw.normal(4, 8), draw.normal(8, 4)};
  const attn::math::SwiGluGradients g =
      attn::math::swiglu_backward(x, W, attn::math::swiglu(x, W), w);
  const auto through = [&](const attn::math::SwiGluWeights& V, const arma::mat& v) {
    return arma::accu(w % attn::math::swiglu(v, V).y);
  };
  EXPECT_LE(attn::math::check_gradient([&](const arma::mat& v) { return through(W, v); }, x, g.dx)
                .max_relative_error,
            1e-7);
  // One weight of the MLP, perturbed through the loss.
  const auto check = [&](arma::mat attn::math::SwiGluWeights::*member, const arma::mat& analytic) {
    return attn::math::check_gradient(
               [&](const arma::mat& v) {
                 attn::math::SwiGluWeights V = W;
                 V.*member = v;
                 return through(V, x);
               },
               W.*member, analytic)
        .max_relative_error;
  };
  EXPECT_LE(check(&attn::math::SwiGluWeights::W_gate, g.dW.W_gate), 1e-7);
  EXPECT_LE(check(&attn::math::SwiGluWeights::W_up, g.dW.W_up), 1e-7);
  EXPECT_LE(check(&attn::math::SwiGluWeights::W_down, g.dW.W_down), 1e-7);
}

// ------------------------------------------------------------------------------- bad input

TEST(BadInput, RmsNormNamesShapesNonFiniteInputAndEps) {
  const arma::mat x = tokens(2, 3);
  const arma::rowvec gamma(3, arma::fill::ones);
  EXPECT_TRUE(ThrowsNaming<attn::math::ShapeError>(
      [&] { attn::math::rms_norm(x, arma::rowvec(2, arma::fill::ones)); },
      "x (2 × 3) needs gamma (1 × 3), not (1 × 2)"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { attn::math::rms_norm(with(x, 1, 2, kNaN), gamma); }, "x has a non-finite entry"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] {
        attn::math::rms_norm(x, arma::rowvec{1.0, kInf, 1.0});
      },
      "gamma"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { attn::math::rms_norm(arma::mat(0, 3), gamma); }, "x is empty"));
  for (const double eps : {0.0, -1e-5, kNaN, kInf})
    EXPECT_TRUE(
        ThrowsNaming<attn::math::InputError>([&] { attn::math::rms_norm(x, gamma, eps); }, "eps"))
        << eps;
  const attn::math::RmsNorm forward = attn::math::rms_norm(x, gamma);
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { attn::math::rms_norm_backward(forward, gamma, with(ones(2, 3), 0, 1, kNaN)); }, "dy"));
  EXPECT_TRUE(ThrowsNaming<attn::math::ShapeError>(
      [&] { attn::math::rms_norm_backward(forward, gamma, ones(3, 3)); }, "dy (3 × 3)"));
  EXPECT_TRUE(ThrowsNaming<attn::math::ShapeError>(
      [&] { attn::math::rms_norm_backward(forward, arma::rowvec(4), ones(2, 3)); },
      "gamma (1 × 4)"));
}

TEST(BadInput, SwiGluNamesShapesAndNonFiniteInput) {
  const arma::mat x = tokens(2, 3);
  const attn::math::SwiGluWeights W{ones(3, 5), ones(3, 5), ones(5, 3)};
  EXPECT_TRUE(ThrowsNaming<attn::math::ShapeError>(
      [&] {
        attn::math::swiglu(x, {ones(3, 5), ones(3, 4), ones(5, 3)});
      },
      "W_gate is (3 × 5) and W_up is (3 × 4)"));
  EXPECT_TRUE(ThrowsNaming<attn::math::ShapeError>(
      [&] {
        attn::math::swiglu(x, {ones(3, 5), ones(3, 5), ones(3, 5)});
      },
      "W_gate is (3 × 5) and W_down is (3 × 5)"));
  EXPECT_TRUE(ThrowsNaming<attn::math::ShapeError>([&] { attn::math::swiglu(tokens(2, 4), W); },
                                                   "x is (2 × 4) and W_gate is (3 × 5)"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { attn::math::swiglu(with(x, 0, 2, kNaN), W); }, "x has a non-finite entry"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] {
        attn::math::swiglu(x, {ones(3, 5), ones(3, 5), with(ones(5, 3), 4, 0, -kInf)});
      },
      "W_down"));
  const attn::math::SwiGlu forward = attn::math::swiglu(x, W);
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { attn::math::swiglu_backward(x, W, forward, with(ones(2, 3), 1, 1, kInf)); }, "dy"));
  EXPECT_TRUE(ThrowsNaming<attn::math::ShapeError>(
      [&] { attn::math::swiglu_backward(tokens(4, 3), W, forward, ones(4, 3)); },
      "forward.gate is (2 × 5) for x (4 × 3)"));
  EXPECT_TRUE(ThrowsNaming<attn::math::ShapeError>(
      [&] { attn::math::swiglu_backward(x, W, forward, ones(2, 4)); }, "dy (2 × 4)"));
}

}  // namespace
