// Masks (attn::math::Mask, attn::math::masked_softmax_rows, the masked attn::math::attend): which
// way a mask points, what a blocked weight is (exactly 0), the error for a query that may see
// nothing, and the gradient through a mask.
#include <attn/math/attention.hpp>
#include <attn/math/backward.hpp>
#include <attn/math/gradient_check.hpp>
#include <attn/math/mask.hpp>
#include <attn/math/softmax.hpp>
#include <attn/math/validate.hpp>

#include <gtest/gtest.h>

#include "normal_inputs.hpp"

#include <cmath>
#include <string>

namespace {

TEST(Mask, CausalAllowsItselfAndEarlierTokensOnly) {
  const attn::math::Mask m = attn::math::Mask::causal(4);
  for (arma::uword i = 0; i < 4; ++i)
    for (arma::uword j = 0; j < 4; ++j)
      EXPECT_EQ(m.allows(i, j), j <= i) << i << ", " << j;
  EXPECT_EQ(m.picture(), "1 . . .\n1 1 . .\n1 1 1 .\n1 1 1 1\n");
}

TEST(Mask, TheTwoPyTorchConventionsAreOpposites) {
  // nn.MultiheadAttention's causal attn_mask: True above the diagonal ("may not").
  const arma::umat torch_blocked = arma::trimatu(arma::umat(3, 3, arma::fill::ones), 1);
  // F.scaled_dot_product_attention's causal bool mask: True on and below it ("may").
  const arma::umat sdpa_allowed = arma::trimatl(arma::umat(3, 3, arma::fill::ones));
  EXPECT_TRUE(arma::all(arma::vectorise(attn::math::Mask::from_blocked(torch_blocked).allowed() ==
                                        attn::math::Mask::causal(3).allowed())));
  EXPECT_TRUE(arma::all(arma::vectorise(attn::math::Mask::from_allowed(sdpa_allowed).allowed() ==
                                        attn::math::Mask::causal(3).allowed())));
  // Read the wrong way round, the same grid lets every token see only the future.
  EXPECT_FALSE(attn::math::Mask::from_allowed(torch_blocked).allows(2, 0));
  EXPECT_TRUE(attn::math::Mask::from_allowed(torch_blocked).allows(0, 2));
}

TEST(Mask, PaddingBlocksTheKeysPastTheRealLength) {
  const attn::math::Mask m = attn::math::Mask::padding(2, 5, 3);
  EXPECT_EQ(m.picture(), "1 1 1 . .\n1 1 1 . .\n");
  EXPECT_EQ((m & attn::math::Mask::padding(2, 5, 2)).picture(), "1 1 . . .\n1 1 . . .\n");
  EXPECT_THROW(attn::math::Mask::padding(2, 5, 0), attn::math::InputError);
  EXPECT_THROW(attn::math::Mask::padding(2, 5, 6), attn::math::InputError);
  EXPECT_THROW(m & attn::math::Mask::causal(5), attn::math::ShapeError);
}

TEST(Mask, AdditiveIsZeroOrMinusInfinity) {
  const arma::mat add = attn::math::Mask::causal(2).additive();
  EXPECT_EQ(add(0, 0), 0.0);
  EXPECT_EQ(add(1, 0), 0.0);
  EXPECT_TRUE(std::isinf(add(0, 1)) && add(0, 1) < 0);
}

TEST(MaskedSoftmax, BlockedWeightsAreExactlyZeroAndRowsSumToOne) {
  const attn_test::Normals draw(3);
  const arma::mat S = draw.normal(5, 5) * 10.0;
  const arma::mat W = attn::math::masked_softmax_rows(S, attn::math::Mask::causal(5));
  for (arma::uword i = 0; i < 5; ++i) {
    EXPECT_NEAR(arma::accu(W.row(i)), 1.0, 1e-15);
    for (arma::uword j = i + 1; j < 5; ++j)
      EXPECT_EQ(W(i, j), 0.0) << i << ", " << j;
  }
  EXPECT_EQ(W(0, 0), 1.0);  // the first token may attend to itself only
  // With nothing masked it is softmax_rows itself.
  EXPECT_LE(arma::abs(attn::math::masked_softmax_rows(S, attn::math::Mask::none(5, 5)) -
                      attn::math::softmax_rows(S))
                .max(),
            1e-15);
}

TEST(MaskedSoftmax, AQueryThatMaySeeNothingIsNamed) {
  arma::umat allowed(3, 3, arma::fill::ones);
  allowed.row(1).zeros();
  try {
    attn::math::masked_softmax_rows(arma::mat(3, 3, arma::fill::zeros),
                                    attn::math::Mask::from_allowed(allowed));
    FAIL() << "a fully masked row was accepted";
  } catch (const attn::math::InputError& e) {
    EXPECT_STREQ(e.what(),
                 "query row 1 may attend to no key: every key is masked, so its "
                 "softmax is 0/0 (PyTorch gives NaN or 0 here, by function and "
                 "version)");
  }
  EXPECT_THROW(attn::math::masked_softmax_rows(arma::mat(3, 4, arma::fill::zeros),
                                               attn::math::Mask::causal(3)),
               attn::math::ShapeError);
}

TEST(MaskedAttention, BackwardThroughTheMaskMatchesFiniteDifferences) {
  const attn_test::Normals draw(21);
  const arma::mat Q = draw.normal(5, 4), K = draw.normal(6, 4), V = draw.normal(6, 3);
  const arma::mat R = draw.normal(5, 3);
  const attn::math::Mask mask = attn::math::Mask::padding(5, 6, 4);
  const double c = attn::math::score_scale(4);
  const auto loss = [&](const arma::mat& q, const arma::mat& k, const arma::mat& v) {
    return arma::accu(attn::math::attend(q, k, v, c, mask).output % R);
  };
  const attn::math::Attention a = attn::math::attend(Q, K, V, c, mask);
  const attn::math::AttentionGradients g = attn::math::attend_backward(Q, K, V, a, R, c);
  const auto dQ =
      attn::math::check_gradient([&](const arma::mat& q) { return loss(q, K, V); }, Q, g.dQ);
  const auto dK =
      attn::math::check_gradient([&](const arma::mat& k) { return loss(Q, k, V); }, K, g.dK);
  const auto dV =
      attn::math::check_gradient([&](const arma::mat& v) { return loss(Q, K, v); }, V, g.dV);
  EXPECT_LT(dQ.max_relative_error, 1e-6);
  EXPECT_LT(dK.max_relative_error, 1e-6);
  EXPECT_LT(dV.max_relative_error, 1e-6);
  // Padding keys get no gradient at all: nothing looked at them.
  EXPECT_EQ(arma::abs(g.dK.rows(4, 5)).max(), 0.0);
  EXPECT_EQ(arma::abs(g.dV.rows(4, 5)).max(), 0.0);
}

}  // namespace
