// attn::fast's linear layer (float, one column a token, sgemm on shared columns) against
// attn::math::affine() (double, one row a token), forward into a new output and added to a
// residual stream, with and without a bias; and its backward pass against the products it
// stands for, dW = x dyᵀ, db = Σ dy, dx = W dy, evaluated in double. Random shapes from each seed.
//
// Tolerance: 1e-5 of the reference's largest entry (relative_gap). Each entry is a dot product
// of up to 160 terms (d_in, or N in the weight's gradient) of unit normals: float's rounding
// (6e-8 each) grows like √160 in practice, 160 at worst, against entries of about √160. These
// seeds show at most 3.7e-7.
#include <attn/fast/linear.hpp>
#include <attn/math/multi_head.hpp>

#include <gtest/gtest.h>

#include "float_kernels.hpp"

namespace {

constexpr double kTolerance = 1e-5;

class FastLinear : public attn_test::KernelTest {
 protected:
  const arma::uword d_in = draws.size(1, 160), d_out = draws.size(1, 160),
                    tokens = draws.size(1, 160);
  const arma::fmat W = draws.floats(d_in, d_out);
  const arma::fvec b = draws.column(d_out);
  const arma::fmat x = draws.floats(d_in, tokens);
  const arma::fmat stream = draws.floats(d_out, tokens);  // what the output is added to
  const arma::fmat dy = draws.floats(d_out, tokens);

  // linear_forward() into a new matrix and added to the stream, against `want` = Wᵀ x (+ b).
  void expect_forward(const arma::fvec& bias, const arma::mat& want) const {
    arma::fmat y;
    attn::fast::linear_forward(W, bias, x, y);
    EXPECT_LT(gap(y, want), kTolerance);
    arma::fmat residual = stream;
    attn::fast::linear_forward(W, bias, x, residual, attn::fast::Output::add);
    EXPECT_LT(gap(residual, wide(stream) + want), kTolerance);
  }
};

TEST_P(FastLinear, ForwardIsTheReadableAffineMapWithinFloatRounding) {
  expect_forward(b, attn::math::affine(wide(x).t(), wide(W), wide_row(b)).t());
}

TEST_P(FastLinear, ForwardWithoutABiasIsTheProductAlone) {
  expect_forward(arma::fvec(), wide(W).t() * wide(x));
}

TEST_P(FastLinear, BackwardIsTheProductsOfTheChainRuleWithinFloatRounding) {
  arma::fmat dW, dx;
  arma::fvec db;
  attn::fast::linear_backward(W, x, dy, dW, &db, dx);
  EXPECT_LT(gap(dW, wide(x) * wide(dy).t()), kTolerance);
  EXPECT_LT(gap(arma::fmat(db), arma::sum(wide(dy), 1)), kTolerance);
  EXPECT_LT(gap(dx, wide(W) * wide(dy)), kTolerance);
  arma::fmat dW_alone, dx_alone;
  attn::fast::linear_backward(W, x, dy, dW_alone, nullptr, dx_alone);  // no bias: the same
  EXPECT_TRUE(arma::approx_equal(dW_alone, dW, "absdiff", 0.0f));
  EXPECT_TRUE(arma::approx_equal(dx_alone, dx, "absdiff", 0.0f));
}

INSTANTIATE_TEST_SUITE_P(Seeds, FastLinear, ::testing::ValuesIn(attn_test::kKernelSeeds),
                         attn_test::seed_name);

}  // namespace
