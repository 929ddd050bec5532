// attn::fast's causal attention over a packed batch (float, on the columns of Q, K and V in
// place, every head and sentence at once) against attn::math::attend() and attend_backward()
// (double, one head of one sentence, one row a token, with a causal or sliding-window Mask),
// forward and backward, on random batches: heads grouped or not (g of h key/value heads), with
// and without a window, sentences shorter and longer than the kernel's blocks of 32 queries.
// The seeds draw multi-query attention (one key/value head for 4 query heads, then 3) with windows
// of 3 and 33 keys, grouped-query attention (2 groups of 2) and plain multi-head attention (3
// heads) without, over sentences of 14 to 78 tokens.
//
// Tolerance: 1e-5 of the reference's largest entry (relative_gap). The scores are dot products
// of d_k ≤ 32 terms, the weights exponentials within a relative 2ε (ε = 1.2e-7) normalised by
// sums of up to 80 of them, and each output a sum of up to 80 products: float's rounding
// (6e-8) grows like the square root of those counts in practice. The backward pass's gradients
// of a shared key/value head sum up to 4 query heads' more. These seeds show at most 2.8e-7.
#include <attn/fast/causal_attention.hpp>
#include <attn/math/attention.hpp>
#include <attn/math/backward.hpp>
#include <attn/math/mask.hpp>

#include <gtest/gtest.h>

#include <vector>

#include "float_kernels.hpp"

namespace {

constexpr double kTolerance = 1e-5;

// Up to 4 sentences of 1 to 80 tokens, one after another, their weights placed.
std::vector<attn::fast::Sentence> draw_sentences(const attn_test::FloatDraws& draws,
                                                 arma::uword heads) {
  std::vector<attn::fast::Sentence> sentences;
  arma::uword columns = 0;
  for (arma::uword s = draws.size(1, 4); s > 0; --s) {
    sentences.push_back({.first = columns, .length = draws.size(1, 80)});
    columns += sentences.back().length;
  }
  attn::fast::place_weights(sentences, heads);
  return sentences;
}

// The readable attention of one sentence and one query head, and the rows it reads and writes.
struct Head {
  arma::span q_rows, k_rows, v_rows, tokens;
  arma::mat Q{}, K{}, V{};  // (n × d_k), one row a token
  attn::math::Attention forward{};
};

class FastCausalAttention : public attn_test::KernelTest {
 protected:
  // g key/value heads, each shared by `group` query heads (1: none shared); a window or none.
  const arma::uword kv_heads = draws.size(1, 3), group = draws.size(1, 4),
                    d_head = draws.size(1, 32);
  const bool windowed = draws.size(0, 1) == 1;
  const attn::fast::Heads heads{.heads = kv_heads * group,
                                .kv_heads = kv_heads,
                                .d_head = d_head,
                                .window = windowed ? draws.size(1, 40) : 0};
  const std::vector<attn::fast::Sentence> sentences = draw_sentences(draws, heads.heads);
  const arma::uword tokens = sentences.back().first + sentences.back().length;
  const arma::fmat qkv = draws.floats((heads.heads + 2 * kv_heads) * heads.d_head, tokens);
  const arma::fmat d_out = draws.floats(heads.heads * heads.d_head, tokens);

  // The kernel's forward pass: the weights it keeps (Σ h n², sentence after sentence) and O.
  std::vector<float> weights = std::vector<float>(
      sentences.back().weights + heads.heads * sentences.back().length * sentences.back().length);
  arma::fmat out;

  void SetUp() override { attn::fast::attention_forward(qkv, sentences, heads, weights, out); }

  [[nodiscard]] Head readable(const attn::fast::Sentence& s, arma::uword head) const {
    const arma::uword d_k = heads.d_head;
    const arma::uword k_row = (heads.heads + head / group) * d_k, v_row = k_row + kv_heads * d_k;
    Head r{.q_rows = arma::span(head * d_k, (head + 1) * d_k - 1),
           .k_rows = arma::span(k_row, k_row + d_k - 1),
           .v_rows = arma::span(v_row, v_row + d_k - 1),
           .tokens = arma::span(s.first, s.first + s.length - 1)};
    const arma::mat columns = wide(qkv);
    r.Q = columns(r.q_rows, r.tokens).t();
    r.K = columns(r.k_rows, r.tokens).t();
    r.V = columns(r.v_rows, r.tokens).t();
    const attn::math::Mask mask = heads.window == 0
                                      ? attn::math::Mask::causal(s.length)
                                      : attn::math::Mask::causal_window(s.length, heads.window);
    r.forward = attn::math::attend(r.Q, r.K, r.V, attn::math::score_scale(d_k), mask);
    return r;
  }
};

TEST_P(FastCausalAttention, ForwardIsTheReadableOnesOfEverySentenceAndHead) {
  arma::mat want(arma::size(out), arma::fill::zeros);
  for (const attn::fast::Sentence& s : sentences) {
    for (arma::uword head = 0; head < heads.heads; ++head) {
      const Head r = readable(s, head);
      want(r.q_rows, r.tokens) = r.forward.output.t();
      // Column i of the kept block holds query i's weights: the readable grid transposed.
      const arma::fmat kept(weights.data() + s.weights + head * s.length * s.length, s.length,
                            s.length);
      EXPECT_LT(gap(kept, r.forward.weights.t()), kTolerance);
    }
  }
  EXPECT_LT(gap(out, want), kTolerance);
}

TEST_P(FastCausalAttention, BackwardIsTheReadableOnesSummedOverEachGroup) {
  arma::fmat d_qkv;
  std::vector<std::vector<float>> scratch;
  attn::fast::attention_backward(qkv, sentences, heads, weights, d_out, d_qkv, scratch);
  arma::mat want(arma::size(d_qkv), arma::fill::zeros);
  for (const attn::fast::Sentence& s : sentences) {
    for (arma::uword head = 0; head < heads.heads; ++head) {
      const Head r = readable(s, head);
      const arma::mat dZ = wide(d_out)(r.q_rows, r.tokens).t();
      const attn::math::AttentionGradients g = attn::math::attend_backward(
          r.Q, r.K, r.V, r.forward, dZ, attn::math::score_scale(heads.d_head));
      want(r.q_rows, r.tokens) = g.dQ.t();
      want(r.k_rows, r.tokens) += g.dK.t();  // a shared head sums its group's
      want(r.v_rows, r.tokens) += g.dV.t();
    }
  }
  EXPECT_LT(gap(d_qkv, want), kTolerance);
}

INSTANTIATE_TEST_SUITE_P(Seeds, FastCausalAttention, ::testing::ValuesIn(attn_test::kKernelSeeds),
                         attn_test::seed_name);

}  // namespace
