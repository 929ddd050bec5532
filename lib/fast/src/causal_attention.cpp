#include "attn/fast/causal_attention.hpp"

#include "attn/fast/linear.hpp"
#include "attn/fast/streaming.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace attn::fast {

using arma::fmat;
using arma::uword;

namespace {

// Queries per block of causal attention. At 128 tokens the blocks compute 1 + 2 + 3 + 4 = 10 of
// the 16 (32 × 32) tiles of the full products, forwards and backwards.
constexpr uword kQueryBlock = 32;

// Where one (sentence, query head) pair's attention lives in the batch: the sentence's first
// column and length, the head's first row, the first row of its key/value head's K (V's lies
// g d_k rows below), where its (n × n) weights begin, its Q, K and V, and the keys its queries
// see: query i sees first_key(i) ... i.
struct HeadSlice {
  uword first = 0;
  uword n = 0;
  uword row = 0;
  uword kv_row = 0;
  uword weights = 0;
  const float* Q = nullptr;
  const float* K = nullptr;
  const float* V = nullptr;
  uword window = 0;  // w, or n without one (or with a wider one: the sentence is no longer)

  // The first key query i sees: i − w + 1, or 0 (always 0 without a window).
  [[nodiscard]] uword first_key(uword i) const { return i + 1 > window ? i + 1 - window : 0; }
};

HeadSlice slice(const fmat& qkv, std::span<const Sentence> sentences, const Heads& h,
                uword sentence, uword head) {
  const Sentence& s = sentences[sentence];
  const uword group = h.heads / h.kv_heads;
  const uword row = head * h.d_head;
  const uword kv_row = h.heads * h.d_head + (head / group) * h.d_head;
  const float* column = qkv.colptr(s.first);
  return {.first = s.first,
          .n = s.length,
          .row = row,
          .kv_row = kv_row,
          .weights = s.weights + head * s.length * s.length,
          .Q = column + row,
          .K = column + kv_row,
          .V = column + kv_row + h.kv_heads * h.d_head,
          .window = h.window == 0 ? s.length : std::min(h.window, s.length)};
}

float score_scale(const Heads& h) {
  return 1.0f / std::sqrt(static_cast<float>(h.d_head));
}

}  // namespace

uword place_weights(std::span<Sentence> sentences, uword heads) {
  uword offset = 0;
  for (Sentence& s : sentences) {
    s.weights = offset;
    offset += heads * s.length * s.length;
  }
  return offset;
}

//! [float32-attention]
void attention_forward(const fmat& qkv, std::span<const Sentence> sentences, const Heads& heads,
                       std::vector<float>& weights, fmat& out) {
  const uword ld = qkv.n_rows;
  const uword d = heads.heads * heads.d_head;
  const uword d_head = heads.d_head;
  const float scale = score_scale(heads);
  out.set_size(d, qkv.n_cols);
  const auto pairs = static_cast<std::ptrdiff_t>(sentences.size() * heads.heads);
#pragma omp parallel for schedule(dynamic)
  for (std::ptrdiff_t pair = 0; pair < pairs; ++pair) {
    const HeadSlice s = slice(qkv, sentences, heads, static_cast<uword>(pair) / heads.heads,
                              static_cast<uword>(pair) % heads.heads);
    const uword n = s.n;
    float* P = weights.data() + s.weights;
    float* O = out.colptr(s.first) + s.row;
    for (uword q0 = 0; q0 < n; q0 += kQueryBlock) {
      const uword width = std::min(kQueryBlock, n - q0);
      const uword k0 = s.first_key(q0);  // queries q0 ... k1 − 1 see keys k0 ... k1 − 1 at most
      const uword k1 = q0 + width;
      multiply({.transpose_a = true}, k1 - k0, width, d_head, s.K + k0 * ld, ld, s.Q + q0 * ld, ld,
               P + q0 * n + k0, n);  // Sᵀ = Kₕᵀ Qₕ
      for (uword i = q0; i < k1; ++i) {
        float* column = P + i * n;
        const uword j0 = s.first_key(i);
        for (uword j = j0; j <= i; ++j)
          column[j] *= scale;
        const float largest = *std::max_element(column + j0, column + i + 1);
        const float sum = exp_shifted(column + j0, i + 1 - j0, largest);
        for (uword j = j0; j <= i; ++j)
          column[j] /= sum;
        std::fill(column, column + j0, 0.0f);
        std::fill(column + i + 1, column + n, 0.0f);
      }
      multiply({}, d_head, width, k1 - k0, s.V + k0 * ld, ld, P + q0 * n + k0, n, O + q0 * d,
               d);  // Oₕ = Vₕ Pᵀ
    }
  }
}

void attention_backward(const fmat& qkv, std::span<const Sentence> sentences, const Heads& heads,
                        const std::vector<float>& weights, const fmat& d_out, fmat& d_qkv,
                        std::vector<std::vector<float>>& scratch) {
  const uword ld = qkv.n_rows;
  const uword d = heads.heads * heads.d_head;
  const uword d_head = heads.d_head;
  const uword d_kv = heads.kv_heads * heads.d_head;
  const uword group = heads.heads / heads.kv_heads;
  const float scale = score_scale(heads);
  d_qkv.set_size(arma::size(qkv));
  uword longest = 0;
  for (const Sentence& s : sentences)
    longest = std::max(longest, s.length);
  scratch.resize(static_cast<uword>(omp_get_max_threads()));
  for (std::vector<float>& block : scratch)
    block.resize(longest * longest);
  const auto pairs = static_cast<std::ptrdiff_t>(sentences.size() * heads.kv_heads);
#pragma omp parallel for schedule(dynamic)
  for (std::ptrdiff_t kv_pair = 0; kv_pair < pairs; ++kv_pair) {
    float* dS = scratch[static_cast<uword>(omp_get_thread_num())].data();
    const auto sentence = static_cast<uword>(kv_pair) / heads.kv_heads;
    const auto kv_head = static_cast<uword>(kv_pair) % heads.kv_heads;
    for (uword member = 0; member < group; ++member) {  // its query heads, one after the other
      const HeadSlice s = slice(qkv, sentences, heads, sentence, kv_head * group + member);
      const uword n = s.n;
      const float* P = weights.data() + s.weights;
      const float* dO = d_out.colptr(s.first) + s.row;
      float* dQ = d_qkv.colptr(s.first) + s.row;
      float* dK = d_qkv.colptr(s.first) + s.kv_row;
      float* dV = dK + d_kv;
      for (uword q0 = 0; q0 < n; q0 += kQueryBlock) {
        const uword width = std::min(kQueryBlock, n - q0);
        const uword k0 = s.first_key(q0);
        const uword k1 = q0 + width;
        multiply({.transpose_a = true}, k1 - k0, width, d_head, s.V + k0 * ld, ld, dO + q0 * d, d,
                 dS + q0 * n + k0, n);  // dPᵀ = Vₕᵀ dOₕ
        for (uword i = q0; i < k1; ++i) {
          const float* p = P + i * n;
          float* column = dS + i * n;
          const uword j0 = s.first_key(i);
          float weighted = 0.0f;
          for (uword j = j0; j <= i; ++j)
            weighted += p[j] * column[j];
          for (uword j = j0; j <= i; ++j)
            column[j] = p[j] * (column[j] - weighted) * scale;
          std::fill(column, column + j0, 0.0f);
          std::fill(column + i + 1, column + n, 0.0f);
        }
        multiply({}, d_head, width, k1 - k0, s.K + k0 * ld, ld, dS + q0 * n + k0, n, dQ + q0 * ld,
                 ld);  // dQₕ = Kₕ dSᵀ / √d_k
      }
      // Keys k0 ... k0 + width − 1 are seen by queries k0 ... k0 + width + w − 2 (n − 1 at most).
      const Product into_shared{.transpose_b = true, .accumulate = member > 0};
      for (uword k0 = 0; k0 < n; k0 += kQueryBlock) {
        const uword width = std::min(kQueryBlock, n - k0);
        const uword queries = std::min(n, k0 + width - 1 + s.window) - k0;
        multiply(into_shared, d_head, width, queries, dO + k0 * d, d, P + k0 * n + k0, n,
                 dV + k0 * ld, ld);  // dVₕ = dOₕ P
        multiply(into_shared, d_head, width, queries, s.Q + k0 * ld, ld, dS + k0 * n + k0, n,
                 dK + k0 * ld, ld);  // dKₕ = Qₕ dS / √d_k
      }
    }
  }
}
//! [float32-attention]

}  // namespace attn::fast
