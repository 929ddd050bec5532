// Chapter 12's attention: grouped-query and multi-query attention, a sliding window and rotary
// positions inside multi-head attention, each against PyTorch (tests/data/torch_modern.txt,
// from tests/data/generate_modern_fixtures.py: F.scaled_dot_product_attention with
// enable_gqa=True) and against finite differences; and the KV cache that keeps a window.
#include <attn/math/gradient_check.hpp>
#include <attn/math/kv_cache.hpp>
#include <attn/math/mask.hpp>
#include <attn/math/multi_head.hpp>
#include <attn/math/validate.hpp>

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "fixture_blocks.hpp"
#include "normal_inputs.hpp"

namespace {

constexpr arma::uword kHeads = 4;  // the fixture's query heads (d_model 16, d_k 4)
constexpr double kTorchTolerance = 1e-10;

arma::mat at(const std::string& name) {
  return attn_test::fixture_block("torch_modern.txt", name);
}

// One case of the fixture: (name, key/value heads, window or 0, rotary).
struct Case {
  std::string name;
  arma::uword kv_heads;
  arma::uword window;
  bool rotary;
};

const Case kCases[] = {{"mha", 4, 0, false},    {"gqa", 2, 0, false}, {"mqa", 1, 0, false},
                       {"window", 2, 3, false}, {"rope", 2, 0, true}, {"today", 2, 3, true}};

attn::math::MultiHeadWeights weights_of(const Case& c) {
  const std::string p = c.name + " ";
  return {.heads = kHeads,
          .kv_heads = c.kv_heads,
          .W_Q = at(p + "W_Q"),
          .W_K = at(p + "W_K"),
          .W_V = at(p + "W_V"),
          .W_O = at(p + "W_O"),
          .b_Q = at(p + "b_Q"),
          .b_K = at(p + "b_K"),
          .b_V = at(p + "b_V"),
          .b_O = at(p + "b_O")};
}

attn::math::Mask mask_of(const Case& c, arma::uword n) {
  return c.window == 0 ? attn::math::Mask::causal(n) : attn::math::Mask::causal_window(n, c.window);
}

// Positions 0 ... n − 1 for queries and keys alike, as in self-attention.
attn::math::RotaryPositions positions(arma::uword n) {
  const arma::vec p = arma::regspace(0, static_cast<double>(n) - 1);
  return {.queries = p, .keys = p};
}

attn::math::MultiHead forward(const Case& c, const arma::mat& q, const arma::mat& k,
                              const arma::mat& v, const attn::math::MultiHeadWeights& W) {
  const attn::math::Mask mask = mask_of(c, q.n_rows);
  return c.rotary ? attn::math::multi_head_attention(q, k, v, W, mask, positions(q.n_rows))
                  : attn::math::multi_head_attention(q, k, v, W, mask);
}

double gap(const arma::mat& ours, const arma::mat& theirs) {
  EXPECT_EQ(ours.n_rows, theirs.n_rows);
  EXPECT_EQ(ours.n_cols, theirs.n_cols);
  return arma::abs(ours - theirs).max();
}

class ModernAttention : public ::testing::TestWithParam<Case> {};

TEST_P(ModernAttention, EqualsPyTorchForwardAndBackward) {
  const Case& c = GetParam();
  const std::string p = c.name + " ";
  const arma::mat q = at(p + "input query"), k = at(p + "input key"), v = at(p + "input value");
  const attn::math::MultiHeadWeights W = weights_of(c);
  EXPECT_TRUE(arma::approx_equal(arma::conv_to<arma::mat>::from(mask_of(c, q.n_rows).allowed()),
                                 at(p + "allowed"), "absdiff", 0.0))
      << "the mask torch was given";
  const attn::math::MultiHead f = forward(c, q, k, v, W);
  EXPECT_LE(gap(f.output, at(p + "output")), kTorchTolerance);
  const attn::math::MultiHeadGradients g =
      attn::math::multi_head_backward(q, k, v, W, f, at(p + "R"));
  EXPECT_LE(gap(g.d_query, at(p + "d_query")), kTorchTolerance);
  EXPECT_LE(gap(g.d_key, at(p + "d_key")), kTorchTolerance);
  EXPECT_LE(gap(g.d_value, at(p + "d_value")), kTorchTolerance);
  EXPECT_LE(gap(g.dW.W_Q, at(p + "dW_Q")), kTorchTolerance);
  EXPECT_LE(gap(g.dW.W_K, at(p + "dW_K")), kTorchTolerance);
  EXPECT_LE(gap(g.dW.W_V, at(p + "dW_V")), kTorchTolerance);
  EXPECT_LE(gap(g.dW.W_O, at(p + "dW_O")), kTorchTolerance);
  EXPECT_LE(gap(g.dW.b_Q, at(p + "db_Q")), kTorchTolerance);
  EXPECT_LE(gap(g.dW.b_K, at(p + "db_K")), kTorchTolerance);
  EXPECT_LE(gap(g.dW.b_V, at(p + "db_V")), kTorchTolerance);
  EXPECT_LE(gap(g.dW.b_O, at(p + "db_O")), kTorchTolerance);
}

TEST_P(ModernAttention, GradientsMatchFiniteDifferences) {
  const Case& c = GetParam();
  const attn_test::Normals draw(71);
  const arma::uword n = 5, d = 8, h = 4, d_k = 2;
  const arma::uword d_kv = c.kv_heads * d_k;
  const arma::mat Xq = draw.normal(n, d), Xk = draw.normal(n, d), Xv = draw.normal(n, d);
  const arma::mat R = draw.normal(n, d);
  const attn::math::MultiHeadWeights W{.heads = h,
                                       .kv_heads = c.kv_heads,
                                       .W_Q = draw.normal(d, d),
                                       .W_K = draw.normal(d, d_kv),
                                       .W_V = draw.normal(d, d_kv),
                                       .W_O = draw.normal(d, d),
                                       .b_Q = draw.normal(1, d),
                                       .b_K = draw.normal(1, d_kv),
                                       .b_V = draw.normal(1, d_kv),
                                       .b_O = draw.normal(1, d)};
  const auto loss = [&](const arma::mat& q, const arma::mat& k, const arma::mat& v,
                        const attn::math::MultiHeadWeights& w) {
    return arma::accu(forward(c, q, k, v, w).output % R);
  };
  const attn::math::MultiHeadGradients g =
      attn::math::multi_head_backward(Xq, Xk, Xv, W, forward(c, Xq, Xk, Xv, W), R);
  const auto check = [&](const char* what, const arma::mat& point, const arma::mat& analytic,
                         const std::function<double(const arma::mat&)>& f) {
    const auto result = attn::math::check_gradient(f, point, analytic);
    EXPECT_LT(result.max_relative_error, 1e-5) << what << " entry " << result.worst_entry;
  };
  check("query", Xq, g.d_query, [&](const arma::mat& x) { return loss(x, Xk, Xv, W); });
  check("key", Xk, g.d_key, [&](const arma::mat& x) { return loss(Xq, x, Xv, W); });
  check("value", Xv, g.d_value, [&](const arma::mat& x) { return loss(Xq, Xk, x, W); });
  const auto with = [&](arma::mat attn::math::MultiHeadWeights::*member) {
    return [&, member](const arma::mat& x) {
      attn::math::MultiHeadWeights w = W;
      w.*member = x;
      return loss(Xq, Xk, Xv, w);
    };
  };
  check("W_Q", W.W_Q, g.dW.W_Q, with(&attn::math::MultiHeadWeights::W_Q));
  check("W_K", W.W_K, g.dW.W_K, with(&attn::math::MultiHeadWeights::W_K));
  check("W_V", W.W_V, g.dW.W_V, with(&attn::math::MultiHeadWeights::W_V));
  check("W_O", W.W_O, g.dW.W_O, with(&attn::math::MultiHeadWeights::W_O));
  const auto with_bias = [&](arma::rowvec attn::math::MultiHeadWeights::*member) {
    return [&, member](const arma::mat& x) {
      attn::math::MultiHeadWeights w = W;
      w.*member = arma::rowvec(x);
      return loss(Xq, Xk, Xv, w);
    };
  };
  check("b_Q", W.b_Q, g.dW.b_Q, with_bias(&attn::math::MultiHeadWeights::b_Q));
  check("b_V", W.b_V, g.dW.b_V, with_bias(&attn::math::MultiHeadWeights::b_V));
  check("b_O", W.b_O, g.dW.b_O, with_bias(&attn::math::MultiHeadWeights::b_O));
  if (!c.rotary) {
    // Without RoPE the key bias adds q·b_K to every score of a row, which softmax ignores.
    EXPECT_LE(arma::abs(g.dW.b_K).max(), 1e-12);
  } else {
    // With RoPE it does not: b_K is turned by a different angle at every key position.
    check("b_K", W.b_K, g.dW.b_K, with_bias(&attn::math::MultiHeadWeights::b_K));
  }
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return info.param.name;
}

INSTANTIATE_TEST_SUITE_P(FromGpt2ToToday, ModernAttention, ::testing::ValuesIn(kCases), case_name);

TEST(GroupedQueryAttention, SharedHeadsEqualMultiHeadWithRepeatedWeights) {
  // GQA is MHA whose key/value projections repeat: query head k reads key/value head
  // k / (h / g). Repeating W_K's and W_V's head columns that way gives the same output.
  const attn_test::Normals draw(72);
  const arma::uword n = 4, d = 8, h = 4, g = 2, d_k = 2;
  const arma::mat X = draw.normal(n, d);
  attn::math::MultiHeadWeights grouped{.heads = h,
                                       .kv_heads = g,
                                       .W_Q = draw.normal(d, d),
                                       .W_K = draw.normal(d, g * d_k),
                                       .W_V = draw.normal(d, g * d_k),
                                       .W_O = draw.normal(d, d)};
  attn::math::MultiHeadWeights repeated = grouped;
  repeated.kv_heads = 0;
  repeated.W_K = arma::join_rows(grouped.W_K.cols(0, 1), grouped.W_K.cols(0, 1),
                                 grouped.W_K.cols(2, 3), grouped.W_K.cols(2, 3));
  repeated.W_V = arma::join_rows(grouped.W_V.cols(0, 1), grouped.W_V.cols(0, 1),
                                 grouped.W_V.cols(2, 3), grouped.W_V.cols(2, 3));
  const attn::math::Mask causal = attn::math::Mask::causal(n);
  EXPECT_LE(gap(attn::math::multi_head_attention(X, X, X, grouped, causal).output,
                attn::math::multi_head_attention(X, X, X, repeated, causal).output),
            1e-14);
}

TEST(GroupedQueryAttention, CountsItsParameters) {
  // d = 768, 12 heads: MHA 4d² + 4d; 4 key/value heads of 64 shrink W_K, W_V to (768 × 256).
  EXPECT_EQ(attn::math::multi_head_parameters(768, 12, true), 2362368u);
  EXPECT_EQ(attn::math::multi_head_parameters(768, 12, true, 12), 2362368u);
  EXPECT_EQ(attn::math::multi_head_parameters(768, 12, true, 4),
            2u * 768 * 768 + 2u * 768 * 256 + 2u * 768 + 2u * 256);
  EXPECT_EQ(attn::math::multi_head_parameters(768, 12, false, 1), 2u * 768 * 768 + 2u * 768 * 64);
  EXPECT_THROW(attn::math::multi_head_parameters(768, 12, true, 5), attn::math::InputError);
}

TEST(GroupedQueryAttention, RefusesGroupsThatDoNotDivideTheHeads) {
  const attn_test::Normals draw(73);
  const arma::mat X = draw.normal(3, 8);
  attn::math::MultiHeadWeights W{.heads = 4,
                                 .kv_heads = 3,
                                 .W_Q = draw.normal(8, 8),
                                 .W_K = draw.normal(8, 6),
                                 .W_V = draw.normal(8, 6),
                                 .W_O = draw.normal(8, 8)};
  try {
    attn::math::multi_head_attention(X, X, X, W);
    FAIL() << "3 key/value heads for 4 query heads were accepted";
  } catch (const attn::math::InputError& e) {
    EXPECT_STREQ(e.what(), "3 key/value heads cannot be shared by 4 query heads equally");
  }
  W.kv_heads = 2;  // W_K is still (8 × 6), but 2 heads of 2 are 4 columns
  try {
    attn::math::multi_head_attention(X, X, X, W);
    FAIL() << "a (8 × 6) W_K for 2 key/value heads of 2 was accepted";
  } catch (const attn::math::ShapeError& e) {
    EXPECT_STREQ(e.what(), "multi-head attention: W_K is (8 × 6), not (8 × 4)");
  }
}

TEST(RotaryAttention, RefusesPositionsThatDoNotFitTheRows) {
  const attn_test::Normals draw(74);
  const arma::mat X = draw.normal(3, 8);
  const attn::math::MultiHeadWeights W{.heads = 2,
                                       .W_Q = draw.normal(8, 8),
                                       .W_K = draw.normal(8, 8),
                                       .W_V = draw.normal(8, 8),
                                       .W_O = draw.normal(8, 8)};
  const attn::math::RotaryPositions two{.queries = {0, 1}, .keys = {0, 1, 2}};
  try {
    attn::math::multi_head_attention(X, X, X, W, attn::math::Mask::causal(3), two);
    FAIL() << "two positions for three queries were accepted";
  } catch (const attn::math::ShapeError& e) {
    EXPECT_STREQ(e.what(),
                 "multi-head attention: 2 query positions and 3 key positions for 3 queries and 3 "
                 "keys");
  }
}

TEST(SlidingWindow, MaskIsABandOfTheCausalMask) {
  EXPECT_EQ(attn::math::Mask::causal_window(5, 2).picture(),
            "1 . . . .\n"
            "1 1 . . .\n"
            ". 1 1 . .\n"
            ". . 1 1 .\n"
            ". . . 1 1\n");
  EXPECT_EQ(attn::math::Mask::causal_window(4, 4).picture(), attn::math::Mask::causal(4).picture());
  EXPECT_EQ(attn::math::Mask::causal_window(3, 9).picture(), attn::math::Mask::causal(3).picture());
  EXPECT_THROW(attn::math::Mask::causal_window(3, 0), attn::math::InputError);
  EXPECT_THROW(attn::math::Mask::causal_window(0, 2), attn::math::InputError);
}

TEST(SlidingWindow, CacheHoldsTheLastWindowAndEqualsTheBandedMask) {
  // Decoding token by token through a cache of window w gives row t of attention under
  // causal_window(n, w), and the cache stops growing at w tokens.
  const attn_test::Normals draw(75);
  const arma::uword n = 11, d = 3, w = 4;
  const arma::mat Q = draw.normal(n, d), K = draw.normal(n, d), V = draw.normal(n, d);
  const double scale = attn::math::score_scale(d);
  const arma::mat whole =
      attn::math::attend(Q, K, V, scale, attn::math::Mask::causal_window(n, w)).output;
  attn::math::KVCache windowed(d, d, w);
  attn::math::KVCache full(d, d);
  for (arma::uword t = 0; t < n; ++t) {
    windowed.append(K.row(t), V.row(t));
    full.append(K.row(t), V.row(t));
    EXPECT_LE(arma::abs(windowed.attend(Q.row(t), scale) - whole.row(t)).max(), 1e-14)
        << "row " << t;
    EXPECT_EQ(windowed.size(), t + 1);
    EXPECT_EQ(windowed.held(), std::min(t + 1, w));
    EXPECT_EQ(windowed.bytes(), std::min(t + 1, w) * 2 * d * sizeof(double));
    EXPECT_EQ(full.bytes(), (t + 1) * 2 * d * sizeof(double));
  }
}

}  // namespace
