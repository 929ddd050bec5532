// Masks and multi-head attention against PyTorch itself, in float64
// (tests/data/generate_torch_fixtures.py): nn.MultiheadAttention with its "True = may not"
// masks, and F.scaled_dot_product_attention with its "True = may" mask. Forward passes agree
// within 1e-12, gradients within 1e-10.
#include <attn/math/attention.hpp>
#include <attn/math/mask.hpp>
#include <attn/math/multi_head.hpp>

#include <gtest/gtest.h>

#include "fixture_blocks.hpp"

#include <string>

namespace {

constexpr double kForward = 1e-12;
constexpr double kGradient = 1e-10;

arma::mat at(const std::string& name) {
  return attn_test::fixture_block("torch_multihead.txt", name);
}

// The numbered case "`name` `number`", as "padded input 1". Appending, rather than writing
// "padded input " + std::to_string(s), also keeps GCC 14 from a false -Warray-bounds report.
arma::mat at(std::string name, arma::uword number) {
  name += ' ';
  name += std::to_string(number);
  return at(name);
}

attn::math::MultiHeadWeights torch_weights() {
  return {.heads = 3,
          .W_Q = at("W_Q"),
          .W_K = at("W_K"),
          .W_V = at("W_V"),
          .W_O = at("W_O"),
          .b_Q = at("b_Q"),
          .b_K = at("b_K"),
          .b_V = at("b_V"),
          .b_O = at("b_O")};
}

double gap(const arma::mat& ours, const arma::mat& theirs) {
  EXPECT_EQ(ours.n_rows, theirs.n_rows);
  EXPECT_EQ(ours.n_cols, theirs.n_cols);
  return arma::abs(ours - theirs).max();
}

TEST(TorchMultiheadAttention, PlainOutputAndWeights) {
  const attn::math::MultiHead ours = attn::math::multi_head_attention(
      at("input q"), at("input k"), at("input v"), torch_weights());
  EXPECT_LE(gap(ours.output, at("plain output")), kForward);
  EXPECT_LE(gap(attn::math::average_weights(ours), at("plain weights averaged")), kForward);
  for (arma::uword h = 0; h < 3; ++h)
    EXPECT_LE(gap(ours.heads[h].weights, at("plain weights head", h)), kForward) << "head " << h;
}

TEST(TorchMultiheadAttention, ItsBooleanAttnMaskMeansMayNot) {
  const arma::umat blocked =
      arma::conv_to<arma::umat>::from(at("attn_mask causal (True = may not attend)"));
  const attn::math::Mask mask = attn::math::Mask::from_blocked(blocked);
  EXPECT_EQ(mask.picture(), attn::math::Mask::causal(5).picture());
  const attn::math::MultiHead ours = attn::math::multi_head_attention(
      at("input q"), at("input k"), at("input v"), torch_weights(), mask);
  EXPECT_LE(gap(ours.output, at("causal output")), kForward);
  EXPECT_LE(gap(attn::math::average_weights(ours), at("causal weights averaged")), kForward);
  for (arma::uword h = 0; h < 3; ++h)
    EXPECT_LE(gap(ours.heads[h].weights, at("causal weights head", h)), kForward);
}

TEST(TorchMultiheadAttention, KeyPaddingMaskForABatchOfTwoLengths) {
  const arma::uword lengths[] = {5, 3};
  for (arma::uword s = 0; s < 2; ++s) {
    const arma::mat x = at("padded input", s);  // a copy: GCC 14 warns of a
                                                // dangling reference otherwise
    const attn::math::MultiHead ours = attn::math::multi_head_attention(
        x, x, x, torch_weights(), attn::math::Mask::padding(5, 5, lengths[s]));
    EXPECT_LE(gap(ours.output, at("padded output", s)), kForward) << s;
    EXPECT_LE(gap(attn::math::average_weights(ours), at("padded weights averaged", s)), kForward)
        << s;
  }
}

TEST(TorchMultiheadAttention, EveryGradientEqualsAutograds) {
  const attn::math::MultiHeadWeights W = torch_weights();
  const attn::math::Mask mask = attn::math::Mask::causal(5);
  const arma::mat q = at("input q"), k = at("input k"), v = at("input v");
  const attn::math::MultiHead forward = attn::math::multi_head_attention(q, k, v, W, mask);
  const attn::math::MultiHeadGradients g =
      attn::math::multi_head_backward(q, k, v, W, forward, at("gradient R"));
  EXPECT_LE(gap(g.d_query, at("gradient d_q")), kGradient);
  EXPECT_LE(gap(g.d_key, at("gradient d_k")), kGradient);
  EXPECT_LE(gap(g.d_value, at("gradient d_v")), kGradient);
  EXPECT_LE(gap(g.dW.W_Q, at("gradient W_Q")), kGradient);
  EXPECT_LE(gap(g.dW.W_K, at("gradient W_K")), kGradient);
  EXPECT_LE(gap(g.dW.W_V, at("gradient W_V")), kGradient);
  EXPECT_LE(gap(g.dW.W_O, at("gradient W_O")), kGradient);
  EXPECT_LE(gap(g.dW.b_Q, at("gradient b_Q")), kGradient);
  EXPECT_LE(gap(g.dW.b_K, at("gradient b_K")), kGradient);
  EXPECT_LE(gap(g.dW.b_V, at("gradient b_V")), kGradient);
  EXPECT_LE(gap(g.dW.b_O, at("gradient b_O")), kGradient);
}

TEST(TorchMultiheadAttention, ParameterCountIsTorchs) {
  // sum(p.numel() for p in nn.MultiheadAttention(768, 12).parameters())
  EXPECT_EQ(attn::math::multi_head_parameters(768, 12, true), 2362368u);
}

// F.scaled_dot_product_attention (torch 2.x): its boolean mask reads True as "may attend".
class TorchScaledDotProduct : public ::testing::Test {
 protected:
  const std::map<std::string, arma::mat> sdpa = attn_test::fixture_blocks("torch_sdpa.txt");
  const arma::mat q = sdpa.at("input q");
  const arma::mat k = sdpa.at("input k");
  const arma::mat v = sdpa.at("input v");
  const double scale = attn::math::score_scale(q.n_cols);
};

TEST_F(TorchScaledDotProduct, IsCausalIsOurCausalMask) {
  EXPECT_LE(gap(attn::math::attend(q, k, v, scale, attn::math::Mask::causal(q.n_rows)).output,
                sdpa.at("is_causal output")),
            kForward);
}

TEST_F(TorchScaledDotProduct, ItsBooleanMaskMeansMay) {
  const attn::math::Mask mask = attn::math::Mask::from_allowed(
      arma::conv_to<arma::umat>::from(sdpa.at("bool mask (True = may attend)")));
  EXPECT_EQ(mask.picture(), attn::math::Mask::causal(q.n_rows).picture());
  EXPECT_LE(gap(attn::math::attend(q, k, v, scale, mask).output, sdpa.at("bool mask output")),
            kForward);
}

TEST_F(TorchScaledDotProduct, AnAdditiveMaskOfZeroAndMinusInfinityIsTheSame) {
  const attn::math::Mask causal = attn::math::Mask::causal(q.n_rows);
  EXPECT_LE(gap(attn::math::attend(q, k, v, scale, causal).output, sdpa.at("additive mask output")),
            kForward);
  // The additive form of our mask is the float mask that was given to PyTorch.
  const arma::mat add = causal.additive();
  EXPECT_TRUE(
      arma::all(arma::vectorise((add == 0) == (sdpa.at("bool mask (True = may attend)") == 1))));
}

}  // namespace
