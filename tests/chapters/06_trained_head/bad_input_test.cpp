// fit_head() and gradient_norm() refuse a NaN, and name it.
#include <06_trained_head/fit.hpp>
#include <attn/math/validate.hpp>

#include "bad_input.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace {

using attn_bad_input::kNaN;
using attn_bad_input::ones;
using attn_bad_input::ThrowsNaming;
using attn_bad_input::with;

// One sentence of three distinct tokens, its query the first and its target the last.
std::vector<attn::math::AttentionExample> one_example() {
  arma::mat X(3, 2);
  for (arma::uword i = 0; i < 3; ++i)
    for (arma::uword j = 0; j < 2; ++j)
      X(i, j) = std::sin(1.0 + 0.7 * i + 1.3 * j);
  return {{{"a", "b", "c"}, X, 0, 2}};
}

TEST(BadInput, FitHeadAndGradientNormRejectNaN) {
  const arma::mat W = arma::eye(2, 2);
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] {
        attn::ch06::fit_head(one_example(), W, W, {0.0, 0.05, kNaN, 10});
      },
      "stop_gradient = nan"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] {
        attn::ch06::fit_head(one_example(), W, W, {0.0, kNaN, 1e-6, 10});
      },
      "learning rate"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] {
        attn::ch06::gradient_norm({0.0, with(ones(2, 2), 0, 0, kNaN), ones(2, 2)});
      },
      "dW_Q"));
}

}  // namespace
