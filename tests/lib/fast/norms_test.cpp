// attn::fast's layer norm and RMSNorm (float, one column a token) against attn::math's readable
// ones (double, one row a token), forward and backward, on random shapes from each seed.
//
// Tolerance: 1e-5 of the reference's largest entry (relative_gap). Each output is a few sums of
// d terms; float's unit roundoff is 6e-8, so d ≤ 96 gives at most about 6e-6 in the worst case
// and a few times 1e-7 in practice (these seeds show at most 2.3e-7); the backward pass's γ
// gradient sums N ≤ 64 tokens more.
#include <attn/fast/norms.hpp>
#include <attn/math/layers.hpp>

#include <gtest/gtest.h>

#include "float_kernels.hpp"

namespace {

constexpr double kTolerance = 1e-5;

class FastNorms : public attn_test::KernelTest {
 protected:
  // The tokens (d × N), the gradient of the norm's output, what the kernel adds ∂L/∂x to; γ, β.
  const arma::uword d = draws.size(2, 96), tokens = draws.size(1, 64);
  const arma::fmat x = draws.floats(d, tokens, 3.0), dy = draws.floats(d, tokens),
                   dx_before = draws.floats(d, tokens);
  const arma::fvec gamma = draws.column(d) + 1.0f, beta = draws.column(d);

  // The readable forms' inputs: one row a token.
  [[nodiscard]] arma::mat rows(const arma::fmat& m) const { return wide(m).t(); }

  // A forward pass against the readable one's y, x̂ and 1/σ (or 1/rms).
  static void expect_forward(const attn::fast::Normalised& ours, const arma::mat& y,
                             const arma::mat& x_hat, const arma::vec& inv_std) {
    EXPECT_LT(gap(ours.y, y.t()), kTolerance);
    EXPECT_LT(gap(ours.x_hat, x_hat.t()), kTolerance);
    EXPECT_LT(gap(arma::fmat(ours.inv_std), inv_std), kTolerance);
  }

  // A backward pass's ∂L/∂x, added to dx_before, and ∂L/∂γ against the readable one's.
  void expect_backward(const arma::fmat& dx, const arma::fvec& dgamma, const arma::mat& want_dx,
                       const arma::rowvec& want_dgamma) const {
    EXPECT_LT(gap(dx, wide(dx_before) + want_dx.t()), kTolerance);
    EXPECT_LT(gap(arma::fmat(dgamma), want_dgamma.t()), kTolerance);
  }
};

TEST_P(FastNorms, LayerNormForwardIsTheReadableOneWithinFloatRounding) {
  attn::fast::Normalised ours;
  attn::fast::layer_norm_forward(x, gamma, beta, ours);
  const attn::math::LayerNorm want =
      attn::math::layer_norm(rows(x), wide_row(gamma), wide_row(beta));
  expect_forward(ours, want.y, want.x_hat, want.inv_std);
}

TEST_P(FastNorms, LayerNormBackwardAddsTheReadableGradientsWithinFloatRounding) {
  attn::fast::Normalised forward;
  attn::fast::layer_norm_forward(x, gamma, beta, forward);
  arma::fmat dx = dx_before;
  arma::fvec dgamma, dbeta;
  attn::fast::layer_norm_backward(forward, gamma, dy, dx, dgamma, dbeta);
  const attn::math::LayerNormGradients want = attn::math::layer_norm_backward(
      attn::math::layer_norm(rows(x), wide_row(gamma), wide_row(beta)), wide_row(gamma), rows(dy));
  expect_backward(dx, dgamma, want.dx, want.dgamma);
  EXPECT_LT(gap(arma::fmat(dbeta), want.dbeta.t()), kTolerance);
}

TEST_P(FastNorms, RmsNormForwardIsTheReadableOneWithinFloatRounding) {
  attn::fast::Normalised ours;
  attn::fast::rms_norm_forward(x, gamma, ours);
  const attn::math::RmsNorm want = attn::math::rms_norm(rows(x), wide_row(gamma));
  expect_forward(ours, want.y, want.x_hat, want.inv_rms);
}

TEST_P(FastNorms, RmsNormBackwardAddsTheReadableGradientsWithinFloatRounding) {
  attn::fast::Normalised forward;
  attn::fast::rms_norm_forward(x, gamma, forward);
  arma::fmat dx = dx_before;
  arma::fvec dgamma;
  attn::fast::rms_norm_backward(forward, gamma, dy, dx, dgamma);
  const attn::math::RmsNormGradients want = attn::math::rms_norm_backward(
      attn::math::rms_norm(rows(x), wide_row(gamma)), wide_row(gamma), rows(dy));
  expect_backward(dx, dgamma, want.dx, want.dgamma);
}

INSTANTIATE_TEST_SUITE_P(Seeds, FastNorms, ::testing::ValuesIn(attn_test::kKernelSeeds),
                         attn_test::seed_name);

}  // namespace
