// attn::fast's GELU and SwiGLU (float, one column a token) against attn::math's readable MLPs
// (double, one row a token), forward and backward, on random shapes from each seed.
//
// The readable forms are whole MLPs, feed_forward() and swiglu(), with their weights' gradients.
// Given the identity as input, x = I, an MLP's first product is its weight itself (x W₁ = W₁)
// and that weight's gradient is the activation's input gradient (∂L/∂W₁ = xᵀ ∂L/∂pre =
// ∂L/∂pre); with dy = I and W₂ = Dᵀ, the gradient that reaches the activation's output is
// dy W₂ᵀ = D. So the MLPs at x = I compute exactly the activations, forward and backward.
//
// Tolerance: 2e-6 of the reference's largest entry (relative_gap). Each entry is a handful of
// float operations (unit roundoff 6e-8) on one input; GELU's erf is Abramowitz and Stegun's,
// within 1.5e-7 of the true one, and the exponentials within a relative 2ε (ε = 1.2e-7): a few
// times 1e-7 together, the most these seeds show being 2.2e-7.
#include <attn/fast/activations.hpp>
#include <attn/math/layers.hpp>

#include <gtest/gtest.h>

#include "float_kernels.hpp"

namespace {

constexpr double kTolerance = 2e-6;

class FastActivations : public attn_test::KernelTest {
 protected:
  const arma::uword d_ff = draws.size(1, 96), tokens = draws.size(1, 48);
  const arma::fmat h = draws.floats(d_ff, tokens, 2.0);            // GELU's input
  const arma::fmat gate_up = draws.floats(2 * d_ff, tokens, 2.0);  // SwiGLU's: gate above up
  const arma::fmat dy = draws.floats(d_ff, tokens);                // the output's gradient

  const arma::mat I = arma::eye(tokens, tokens);  // the MLPs' input, and their dy

  // The kernels' forward passes: their outputs and what they keep.
  attn::fast::GeluCache gelu_cache;
  arma::fmat gelu_y;
  attn::fast::SwiGluCache swiglu_cache;
  arma::fmat swiglu_y;

  void SetUp() override {
    attn::fast::gelu_forward(h, gelu_cache, gelu_y);
    attn::fast::swiglu_forward(gate_up, swiglu_cache, swiglu_y);
  }

  // feed_forward() at x = I: W₁ = hᵀ (N × d_ff), no biases, W₂ = dy (d_ff × N).
  [[nodiscard]] attn::math::FeedForwardWeights gelu_mlp() const {
    return {.W1 = wide(h).t(),
            .b1 = arma::zeros<arma::rowvec>(d_ff),
            .W2 = wide(dy),
            .b2 = arma::zeros<arma::rowvec>(tokens)};
  }

  // swiglu() at x = I: W_gate = gateᵀ, W_up = upᵀ (N × d_ff), W_down = dy (d_ff × N).
  [[nodiscard]] attn::math::SwiGluWeights swiglu_mlp() const {
    const arma::mat pre = wide(gate_up);
    return {.W_gate = pre.rows(0, d_ff - 1).t(),
            .W_up = pre.rows(d_ff, 2 * d_ff - 1).t(),
            .W_down = wide(dy)};
  }
};

TEST_P(FastActivations, GeluForwardIsTheReadableOneWithinFloatRounding) {
  const attn::math::FeedForward want = attn::math::feed_forward(I, gelu_mlp());
  EXPECT_LT(gap(gelu_y, want.hidden.t()), kTolerance);
  EXPECT_LT(gap(gelu_y, attn::math::gelu(wide(h))), kTolerance);
  EXPECT_LT(gap(gelu_cache.cdf, want.cdf.t()), kTolerance);
}

TEST_P(FastActivations, GeluBackwardIsTheReadableOneWithinFloatRounding) {
  arma::fmat d = dy;
  attn::fast::gelu_backward(h, gelu_cache, d);
  const attn::math::FeedForwardWeights W = gelu_mlp();
  const attn::math::FeedForward forward = attn::math::feed_forward(I, W);
  EXPECT_LT(gap(d, attn::math::feed_forward_backward(I, W, forward, I).dW.W1.t()), kTolerance);
}

TEST_P(FastActivations, SwiGluForwardIsTheReadableOneWithinFloatRounding) {
  const attn::math::SwiGlu want = attn::math::swiglu(I, swiglu_mlp());
  EXPECT_LT(gap(swiglu_y, want.hidden.t()), kTolerance);
  EXPECT_LT(gap(swiglu_cache.sigmoid, want.sigmoid.t()), kTolerance);
}

TEST_P(FastActivations, SwiGluBackwardIsTheReadableOneWithinFloatRounding) {
  arma::fmat d_gate_up;
  attn::fast::swiglu_backward(gate_up, swiglu_cache, dy, d_gate_up);
  const attn::math::SwiGluWeights W = swiglu_mlp();
  const attn::math::SwiGluWeights dW =
      attn::math::swiglu_backward(I, W, attn::math::swiglu(I, W), I).dW;
  EXPECT_LT(gap(d_gate_up, arma::join_cols(dW.W_gate.t(), dW.W_up.t())), kTolerance);
}

INSTANTIATE_TEST_SUITE_P(Seeds, FastActivations, ::testing::ValuesIn(attn_test::kKernelSeeds),
                         attn_test::seed_name);

}  // namespace
