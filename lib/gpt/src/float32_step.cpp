#include "attn/gpt/float32_step.hpp"

#include <attn/fast/streaming.hpp>
#include <attn/fast/threads.hpp>
#include <attn/math/positions.hpp>
#include <attn/math/validate.hpp>

#include <cblas.h>
#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <vector>

namespace attn::gpt {
namespace {

using arma::fmat;
using arma::fvec;
using arma::uword;

constexpr float kLayerNormEpsilon = 1e-5f;  // PyTorch's default, as math::layer_norm's
// Queries per block of causal attention. At 128 tokens the blocks compute 1 + 2 + 3 + 4 = 10 of
// the 16 (32 × 32) tiles of the full products, forwards and backwards.
constexpr arma::uword kQueryBlock = 32;

// ---------------------------------------------------------------------------------------------
// Products. Every matrix here is column-major (Armadillo's and BLAS's order); "op" is a
// transpose or not.

// C (m × n) = op(A) op(B), or C += op(A) op(B) when accumulating: one sgemm on this thread.
struct Product {
  bool transpose_a = false;
  bool transpose_b = false;
  bool accumulate = false;
};

void multiply(Product how, uword m, uword n, uword k, const float* A, uword lda, const float* B,
              uword ldb, float* C, uword ldc) {
  cblas_sgemm(CblasColMajor, how.transpose_a ? CblasTrans : CblasNoTrans,
              how.transpose_b ? CblasTrans : CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(k), 1.0f, A, static_cast<int>(lda), B, static_cast<int>(ldb),
              how.accumulate ? 1.0f : 0.0f, C, static_cast<int>(ldc));
}

// The same product with C's columns shared among the OpenMP threads, each running its own
// sgemm on its share (in whole groups of 16 columns, the width of the widest register tiles).
void multiply_shared(Product how, uword m, uword n, uword k, const float* A, uword lda,
                     const float* B, uword ldb, float* C, uword ldc) {
#pragma omp parallel
  {
    const auto threads = static_cast<uword>(omp_get_num_threads());
    const auto thread = static_cast<uword>(omp_get_thread_num());
    const uword share = (n + threads - 1) / threads;
    const uword width = (share + 15) / 16 * 16;
    const uword first = std::min(n, thread * width);
    const uword last = std::min(n, first + width);
    if (first < last) {
      const float* B_part = how.transpose_b ? B + first : B + first * ldb;
      multiply(how, m, last - first, k, A, lda, B_part, ldb, C + first * ldc, ldc);
    }
  }
}

// Y = op(A) B over whole matrices (the usual case): C's shape is taken from them.
void multiply_shared(Product how, const fmat& A, const fmat& B, fmat& C) {
  const uword m = how.transpose_a ? A.n_cols : A.n_rows;
  const uword k = how.transpose_a ? A.n_rows : A.n_cols;
  const uword n = how.transpose_b ? B.n_rows : B.n_cols;
  multiply_shared(how, m, n, k, A.memptr(), A.n_rows, B.memptr(), B.n_rows, C.memptr(), C.n_rows);
}

// Every column of M set to v (before a product accumulates into it: M = v + W^T x).
void fill_columns(fmat& M, const fvec& v) {
#pragma omp parallel for
  for (uword j = 0; j < M.n_cols; ++j)
    std::copy(v.begin(), v.end(), M.colptr(j));
}

// M += v in every column (a bias added to the residual stream).
void add_to_columns(fmat& M, const fvec& v) {
#pragma omp parallel for
  for (uword j = 0; j < M.n_cols; ++j) {
    float* column = M.colptr(j);
    for (uword i = 0; i < M.n_rows; ++i)
      column[i] += v[i];
  }
}

// ---------------------------------------------------------------------------------------------
// The weights in float: a block's, with W_Q, W_K, W_V side by side.

struct BlockF {
  fmat W_QKV;  // (d × 3d): [W_Q W_K W_V]
  fmat W_O;    // (d × d)
  fmat W1;     // (d × d_ff)
  fmat W2;     // (d_ff × d)
  fvec ln1_gamma, ln1_beta, b_QKV, b_O, ln2_gamma, ln2_beta, b1, b2;
};

// The weights are rounded into the same float matrices at every step: no memory is allocated
// once the first step has sized them.
void round_into(float* to, const arma::mat& from) {
  std::transform(from.begin(), from.end(), to, [](double x) { return static_cast<float>(x); });
}
void round_into(fmat& to, const arma::mat& from) {
  to.set_size(from.n_rows, from.n_cols);
  round_into(to.memptr(), from);
}
void round_into(fvec& to, const arma::rowvec& from) {
  to.set_size(from.n_elem);
  round_into(to.memptr(), from);
}

void round_into(BlockF& to, const BlockWeights& b) {
  const math::MultiHeadWeights& W = b.attention;
  const uword d = W.W_Q.n_rows;
  to.W_QKV.set_size(d, 3 * d);
  to.b_QKV.set_size(3 * d);
  const std::array<const arma::mat*, 3> matrices = {&W.W_Q, &W.W_K, &W.W_V};
  const std::array<const arma::rowvec*, 3> biases = {&W.b_Q, &W.b_K, &W.b_V};
  for (uword k = 0; k < 3; ++k) {  // side by side: [W_Q W_K W_V], [b_Q b_K b_V]
    round_into(to.W_QKV.colptr(k * d), *matrices[k]);
    round_into(to.b_QKV.memptr() + k * d, *biases[k]);
  }
  round_into(to.W_O, W.W_O);
  round_into(to.W1, b.mlp.W1);
  round_into(to.W2, b.mlp.W2);
  round_into(to.ln1_gamma, b.ln1_gamma);
  round_into(to.ln1_beta, b.ln1_beta);
  round_into(to.b_O, W.b_O);
  round_into(to.ln2_gamma, b.ln2_gamma);
  round_into(to.ln2_beta, b.ln2_beta);
  round_into(to.b1, b.mlp.b1);
  round_into(to.b2, b.mlp.b2);
}

// And the gradients widened back into double, into the same matrices at every step.
void widen_into(arma::mat& to, const float* from, uword rows, uword cols) {
  to.set_size(rows, cols);
  std::copy(from, from + rows * cols, to.begin());
}
void widen_into(arma::mat& to, const fmat& from) {
  widen_into(to, from.memptr(), from.n_rows, from.n_cols);
}
void widen_into(arma::rowvec& to, const float* from, uword count) {
  to.set_size(count);
  std::copy(from, from + count, to.begin());
}
void widen_into(arma::rowvec& to, const fvec& from) {
  widen_into(to, from.memptr(), from.n_elem);
}

void widen_into(BlockWeights& to, const BlockF& g, uword heads) {
  const uword d = g.W_O.n_rows;
  math::MultiHeadWeights& W = to.attention;
  W.heads = heads;
  const std::array<arma::mat*, 3> matrices = {&W.W_Q, &W.W_K, &W.W_V};
  const std::array<arma::rowvec*, 3> biases = {&W.b_Q, &W.b_K, &W.b_V};
  for (uword k = 0; k < 3; ++k) {
    widen_into(*matrices[k], g.W_QKV.colptr(k * d), d, d);
    widen_into(*biases[k], g.b_QKV.memptr() + k * d, d);
  }
  widen_into(W.W_O, g.W_O);
  widen_into(W.b_O, g.b_O);
  widen_into(to.ln1_gamma, g.ln1_gamma);
  widen_into(to.ln1_beta, g.ln1_beta);
  widen_into(to.ln2_gamma, g.ln2_gamma);
  widen_into(to.ln2_beta, g.ln2_beta);
  widen_into(to.mlp.W1, g.W1);
  widen_into(to.mlp.b1, g.b1);
  widen_into(to.mlp.W2, g.W2);
  widen_into(to.mlp.b2, g.b2);
}

// ---------------------------------------------------------------------------------------------
// Layer norm, one column (token) at a time: y = γ ⊙ x̂ + β with x̂ = (x − μ)/sqrt(σ² + ε).

struct LayerNormF {
  fmat normalised;  // (d × N): x̂
  fmat y;           // (d × N)
  fvec inv_std;     // (N): 1/sqrt(σ² + ε)
};

void layer_norm(const fmat& x, const fvec& gamma, const fvec& beta, LayerNormF& ln) {
  const uword d = x.n_rows;
  ln.normalised.set_size(arma::size(x));
  ln.y.set_size(arma::size(x));
  ln.inv_std.set_size(x.n_cols);
#pragma omp parallel for
  for (uword j = 0; j < x.n_cols; ++j) {
    const float* in = x.colptr(j);
    float sum = 0.0f;
    for (uword i = 0; i < d; ++i)
      sum += in[i];
    const float mean = sum / static_cast<float>(d);
    float squares = 0.0f;
    for (uword i = 0; i < d; ++i)
      squares += (in[i] - mean) * (in[i] - mean);
    const float inv_std = 1.0f / std::sqrt(squares / static_cast<float>(d) + kLayerNormEpsilon);
    float* normalised = ln.normalised.colptr(j);
    float* y = ln.y.colptr(j);
    for (uword i = 0; i < d; ++i) {
      normalised[i] = (in[i] - mean) * inv_std;
      y[i] = gamma[i] * normalised[i] + beta[i];
    }
    ln.inv_std[j] = inv_std;
  }
}

// dx += ∂L/∂x given dy = ∂L/∂y: with g = γ ⊙ dy, dx = (g − mean(g) − x̂ mean(g ⊙ x̂)) / σ;
// and the parameters' gradients, summed over the tokens: dγ = Σ dy ⊙ x̂, dβ = Σ dy.
void layer_norm_backward(const LayerNormF& ln, const fvec& gamma, const fmat& dy, fmat& dx,
                         fvec& dgamma, fvec& dbeta) {
  const uword d = dy.n_rows;
#pragma omp parallel for
  for (uword j = 0; j < dy.n_cols; ++j) {
    const float* g_in = dy.colptr(j);
    const float* normalised = ln.normalised.colptr(j);
    float mean_g = 0.0f;
    float mean_gx = 0.0f;
    for (uword i = 0; i < d; ++i) {
      mean_g += gamma[i] * g_in[i];
      mean_gx += gamma[i] * g_in[i] * normalised[i];
    }
    mean_g /= static_cast<float>(d);
    mean_gx /= static_cast<float>(d);
    float* out = dx.colptr(j);
    for (uword i = 0; i < d; ++i)
      out[i] += (gamma[i] * g_in[i] - mean_g - normalised[i] * mean_gx) * ln.inv_std[j];
  }
  dgamma.zeros(d);
  dbeta.zeros(d);
  for (uword j = 0; j < dy.n_cols; ++j) {
    const float* g_in = dy.colptr(j);
    const float* normalised = ln.normalised.colptr(j);
    for (uword i = 0; i < d; ++i) {
      dgamma[i] += g_in[i] * normalised[i];
      dbeta[i] += g_in[i];
    }
  }
}

// ---------------------------------------------------------------------------------------------
// GELU, gelu(h) = h Φ(h), with Φ(h) = (1 + erf(h/√2))/2 and erf from Abramowitz and Stegun
// 7.1.26: erf(x) = 1 − (a1 t + a2 t² + a3 t³ + a4 t⁴ + a5 t⁵) e^(−x²), t = 1/(1 + p x), x ≥ 0,
// error below 1.5e-7. With x = |h|/√2, e^(−x²) = e^(−h²/2) is also the Gaussian's density
// φ(h) up to 1/√(2π), which the backward pass needs: one exponential serves both.

struct GeluF {
  fmat cdf;    // (d_ff × N): Φ(h)
  fmat gauss;  // (d_ff × N): e^(−h²/2)
  fmat y;      // (d_ff × N): h Φ(h)
};

void gelu(const fmat& h, GeluF& g) {
  constexpr float p = 0.3275911f;
  constexpr float a1 = 0.254829592f, a2 = -0.284496736f, a3 = 1.421413741f, a4 = -1.453152027f,
                  a5 = 1.061405429f;
  constexpr auto inv_sqrt2 = static_cast<float>(std::numbers::sqrt2 / 2);
  g.cdf.set_size(arma::size(h));
  g.gauss.set_size(arma::size(h));
  g.y.set_size(arma::size(h));
#pragma omp parallel for
  for (uword j = 0; j < h.n_cols; ++j) {
    const float* in = h.colptr(j);
    float* gauss = g.gauss.colptr(j);
    for (uword i = 0; i < h.n_rows; ++i)
      gauss[i] = -0.5f * in[i] * in[i];
    fast::exp_shifted(gauss, h.n_rows, 0.0f);
    float* cdf = g.cdf.colptr(j);
    float* y = g.y.colptr(j);
    for (uword i = 0; i < h.n_rows; ++i) {
      const float t = 1.0f / (1.0f + p * std::abs(in[i]) * inv_sqrt2);
      const float tail = t * (a1 + t * (a2 + t * (a3 + t * (a4 + t * a5)))) * gauss[i];
      const float erf_abs = 1.0f - tail;  // erf(|h|/√2)
      cdf[i] = 0.5f * (1.0f + (in[i] < 0.0f ? -erf_abs : erf_abs));
      y[i] = in[i] * cdf[i];
    }
  }
}

// dh = dy ⊙ gelu'(h), gelu'(h) = Φ(h) + h φ(h), in place.
void gelu_backward(const fmat& h, const GeluF& g, fmat& d) {
  const auto inv_sqrt_2pi = static_cast<float>(std::numbers::inv_sqrtpi / std::numbers::sqrt2);
#pragma omp parallel for
  for (uword j = 0; j < h.n_cols; ++j) {
    const float* in = h.colptr(j);
    const float* cdf = g.cdf.colptr(j);
    const float* gauss = g.gauss.colptr(j);
    float* out = d.colptr(j);
    for (uword i = 0; i < h.n_rows; ++i)
      out[i] *= cdf[i] + in[i] * gauss[i] * inv_sqrt_2pi;
  }
}

// ---------------------------------------------------------------------------------------------
// What one block keeps from its forward pass for its backward pass.

struct BlockActivations {
  LayerNormF ln1;
  fmat qkv;                  // (3d × N): Q, K and V, one column per token
  std::vector<float> probs;  // per sentence and head, its (n × n) weights, one column per query
  fmat attended;             // (d × N): the heads' outputs side by side
  LayerNormF ln2;
  fmat pre;  // (d_ff × N): W1ᵀ LN2(u) + b1
  GeluF hidden;
};

}  // namespace

struct Float32Step::Work {
  TransformerConfig config;
  uword d = 0, heads = 0, d_head = 0, d_ff = 0, vocabulary = 0, max_length = 0;
  float score_scale = 0.0f;

  // The model, rounded to float.
  fmat embedding;          // (V × d): E, the output layer
  fmat embedding_columns;  // (d × V): Eᵀ, for the embedding's look-ups
  fmat position_rows;      // (max_length × d): P, when learned
  fmat position_columns;   // (d × max_length): Pᵀ, learned or sinusoidal; empty without
  std::vector<BlockF> blocks;
  fvec lnf_gamma, lnf_beta;

  // Their gradients.
  fmat d_embedding, d_embedding_columns, d_position_columns;
  std::vector<BlockF> d_blocks;
  fvec d_lnf_gamma, d_lnf_beta;

  // The batch and what its forward pass keeps.
  uword rows = 0;
  arma::uvec positions;
  std::vector<SequenceRows> sequences;
  std::vector<uword> probs_offset;  // where sentence s's weights begin, per head n²
  fmat stream;                      // (d × N): the residual stream, updated in place
  std::vector<BlockActivations> activations;
  LayerNormF lnf;
  fmat logits;           // (V × N); after the loss, ∂L/∂z
  arma::vec row_losses;  // (N): −ln p(target) per row

  // The backward pass's working matrices.
  fmat d_stream, d_branch, d_attended, d_qkv, d_hidden, d_final;
  std::vector<std::vector<float>> d_scores;  // per thread, one (n × n) block

  TransformerStep step;  // what run() returns: its loss and its gradients in double

  explicit Work(const TransformerConfig& c)
      : config(c),
        d(c.d_model),
        heads(c.heads),
        d_head(c.d_model / c.heads),
        d_ff(c.d_ff),
        vocabulary(c.vocabulary),
        max_length(c.max_length),
        score_scale(1.0f / std::sqrt(static_cast<float>(c.d_model / c.heads))),
        activations(c.layers) {}

  void load(const TransformerWeights& w);
  void prepare(const PackedBatch& batch);
  void forward(const PackedBatch& batch);
  double loss_and_dlogits(const PackedBatch& batch);
  void backward(const PackedBatch& batch);
  struct HeadSlice;
  [[nodiscard]] HeadSlice slice(const BlockActivations& a, std::ptrdiff_t pair) const;
  void attend(BlockActivations& a);
  void attend_backward(const BlockActivations& a);
  void widen_gradients(TransformerWeights& g) const;
};

void Float32Step::Work::load(const TransformerWeights& w) {
  check_weights(w);
  const TransformerConfig& c = w.config;
  if (c.vocabulary != config.vocabulary || c.d_model != config.d_model || c.heads != config.heads ||
      c.layers != config.layers || c.d_ff != config.d_ff || c.max_length != config.max_length ||
      c.positions != config.positions || c.tied_embeddings != config.tied_embeddings)
    throw math::ShapeError(fmt::format(
        "Float32Step: the weights are of a model with V = {}, d = {}, {} heads, {} layers, "
        "d_ff = {}, max_length = {}; this step was made for V = {}, d = {}, {} heads, {} "
        "layers, d_ff = {}, max_length = {}",
        c.vocabulary, c.d_model, c.heads, c.layers, c.d_ff, c.max_length, config.vocabulary,
        config.d_model, config.heads, config.layers, config.d_ff, config.max_length));
  round_into(embedding, w.embedding);
  embedding_columns = embedding.t();
  if (c.positions == Positions::learned) {
    round_into(position_rows, w.position_embedding);
    position_columns = position_rows.t();
  }
  blocks.resize(w.blocks.size());
  for (uword l = 0; l < blocks.size(); ++l)
    round_into(blocks[l], w.blocks[l]);
  round_into(lnf_gamma, w.lnf_gamma);
  round_into(lnf_beta, w.lnf_beta);
}

void Float32Step::Work::prepare(const PackedBatch& batch) {
  rows = batch.tokens.n_elem;
  if (rows == 0)
    throw math::InputError("Float32Step: the batch has no tokens");
  if (batch.targets.n_elem != rows)
    throw math::ShapeError(
        fmt::format("Float32Step: {} tokens but {} targets", rows, batch.targets.n_elem));
  positions = positions_in_sentences(rows, batch.starts);
  sequences = sequence_rows(rows, batch.starts);
  for (uword i = 0; i < rows; ++i) {
    if (batch.tokens(i) >= vocabulary || batch.targets(i) >= vocabulary)
      throw math::InputError(
          fmt::format("Float32Step: row {} holds token {} and target {}; the vocabulary has {}", i,
                      batch.tokens(i), batch.targets(i), vocabulary));
    if (positions(i) >= max_length)
      throw math::InputError(
          fmt::format("Float32Step: the sentence starting at row {} is longer than max_length {}",
                      i - positions(i), max_length));
  }
  probs_offset.clear();
  uword offset = 0;
  for (const SequenceRows& s : sequences) {
    probs_offset.push_back(offset);
    offset += heads * s.count() * s.count();
  }
  for (BlockActivations& a : activations)
    a.probs.resize(offset);
}

// Where one (sentence, head) pair's attention lives in the batch: the sentence's first column
// and length, the head's first row, its Q, K and V in the block's qkv (K and V lie d and 2d
// rows below Q), and where its (n × n) weights begin in BlockActivations::probs.
struct Float32Step::Work::HeadSlice {
  uword first = 0;
  uword n = 0;
  uword row = 0;
  uword probs = 0;
  const float* Q = nullptr;
  const float* K = nullptr;
  const float* V = nullptr;
};

Float32Step::Work::HeadSlice Float32Step::Work::slice(const BlockActivations& a,
                                                      std::ptrdiff_t pair) const {
  const auto sentence = static_cast<uword>(pair) / heads;
  const auto head = static_cast<uword>(pair) % heads;
  const SequenceRows& s = sequences[sentence];
  const float* Q = a.qkv.colptr(s.first) + head * d_head;
  return {.first = s.first,
          .n = s.count(),
          .row = head * d_head,
          .probs = probs_offset[sentence] + head * s.count() * s.count(),
          .Q = Q,
          .K = Q + d,
          .V = Q + 2 * d};
}

//! [float32-attention]
// Causal attention for every sentence and head, on the columns of Q, K and V in place:
// Sᵀ = Kₕᵀ Qₕ / √d_k holds one column per query i; its softmax runs over the keys 0 ... i and
// the later keys get weight 0; Oₕ = Vₕ Pᵀ. (Pᵀ is stored: column i holds query i's weights.)
// The products run on blocks of kQueryBlock queries, each against only the keys the block's last
// query sees: the blocks above the diagonal, all masked, are never computed.
void Float32Step::Work::attend(BlockActivations& a) {
  const uword ld = 3 * d;
  const auto pairs = static_cast<std::ptrdiff_t>(sequences.size() * heads);
#pragma omp parallel for schedule(dynamic)
  for (std::ptrdiff_t pair = 0; pair < pairs; ++pair) {
    const auto [first, n, row, probs, Q, K, V] = slice(a, pair);
    float* P = a.probs.data() + probs;
    float* O = a.attended.colptr(first) + row;
    for (uword q0 = 0; q0 < n; q0 += kQueryBlock) {
      const uword width = std::min(kQueryBlock, n - q0);
      const uword keys = q0 + width;  // queries q0 ... keys − 1 see keys 0 ... keys − 1 at most
      multiply({.transpose_a = true}, keys, width, d_head, K, ld, Q + q0 * ld, ld, P + q0 * n, n);
      for (uword i = q0; i < keys; ++i) {
        float* column = P + i * n;
        for (uword j = 0; j <= i; ++j)
          column[j] *= score_scale;
        const float largest = *std::max_element(column, column + i + 1);
        const float sum = fast::exp_shifted(column, i + 1, largest);
        for (uword j = 0; j <= i; ++j)
          column[j] /= sum;
        std::fill(column + i + 1, column + n, 0.0f);
      }
      multiply({}, d_head, width, keys, V, ld, P + q0 * n, n, O + q0 * d, d);
    }
  }
}

// Its backward pass, given ∂L/∂O in d_attended, into d_qkv:
// dVₕ = dOₕ P, dPᵀ = Vₕᵀ dOₕ, dS = P ⊙ (dP − rowsum(P ⊙ dP)), dQₕ = Kₕ dSᵀ / √d_k,
// dKₕ = Qₕ dS / √d_k; by blocks of queries (dP, dQ) and of keys (dV, dK), each against only
// the keys, or the queries, it meets.
void Float32Step::Work::attend_backward(const BlockActivations& a) {
  const uword ld = 3 * d;
  const auto pairs = static_cast<std::ptrdiff_t>(sequences.size() * heads);
#pragma omp parallel for schedule(dynamic)
  for (std::ptrdiff_t pair = 0; pair < pairs; ++pair) {
    const auto [first, n, row, probs, Q, K, V] = slice(a, pair);
    const float* P = a.probs.data() + probs;
    const float* dO = d_attended.colptr(first) + row;
    float* dQ = d_qkv.colptr(first) + row;
    float* dK = dQ + d;
    float* dV = dQ + 2 * d;
    float* dS = d_scores[static_cast<uword>(omp_get_thread_num())].data();
    for (uword q0 = 0; q0 < n; q0 += kQueryBlock) {
      const uword width = std::min(kQueryBlock, n - q0);
      const uword keys = q0 + width;
      multiply({.transpose_a = true}, keys, width, d_head, V, ld, dO + q0 * d, d, dS + q0 * n, n);
      for (uword i = q0; i < keys; ++i) {
        const float* p = P + i * n;
        float* column = dS + i * n;
        float weighted = 0.0f;
        for (uword j = 0; j <= i; ++j)
          weighted += p[j] * column[j];
        for (uword j = 0; j <= i; ++j)
          column[j] = p[j] * (column[j] - weighted) * score_scale;
        std::fill(column + i + 1, column + n, 0.0f);
      }
      multiply({}, d_head, width, keys, K, ld, dS + q0 * n, n, dQ + q0 * ld, ld);
    }
    for (uword k0 = 0; k0 < n; k0 += kQueryBlock) {  // keys k0 ... are seen by queries k0 ... n − 1
      const uword width = std::min(kQueryBlock, n - k0);
      const uword queries = n - k0;
      multiply({.transpose_b = true}, d_head, width, queries, dO + k0 * d, d, P + k0 * n + k0, n,
               dV + k0 * ld, ld);
      multiply({.transpose_b = true}, d_head, width, queries, Q + k0 * ld, ld, dS + k0 * n + k0, n,
               dK + k0 * ld, ld);
    }
  }
}
//! [float32-attention]

void Float32Step::Work::forward(const PackedBatch& batch) {
  stream.set_size(d, rows);
#pragma omp parallel for
  for (uword i = 0; i < rows; ++i) {
    stream.col(i) = embedding_columns.col(batch.tokens(i));
    if (!position_columns.is_empty())
      stream.col(i) += position_columns.col(positions(i));
  }
  //! [float32-block]
  for (uword l = 0; l < blocks.size(); ++l) {
    const BlockF& b = blocks[l];
    BlockActivations& a = activations[l];
    layer_norm(stream, b.ln1_gamma, b.ln1_beta, a.ln1);
    a.qkv.set_size(3 * d, rows);
    fill_columns(a.qkv, b.b_QKV);
    multiply_shared({.transpose_a = true, .accumulate = true}, b.W_QKV, a.ln1.y, a.qkv);
    a.attended.set_size(d, rows);
    attend(a);
    add_to_columns(stream, b.b_O);  // u = x + W_Oᵀ O + b_O
    multiply_shared({.transpose_a = true, .accumulate = true}, b.W_O, a.attended, stream);
    layer_norm(stream, b.ln2_gamma, b.ln2_beta, a.ln2);
    a.pre.set_size(d_ff, rows);
    fill_columns(a.pre, b.b1);
    multiply_shared({.transpose_a = true, .accumulate = true}, b.W1, a.ln2.y, a.pre);
    gelu(a.pre, a.hidden);
    add_to_columns(stream, b.b2);  // x' = u + W2ᵀ gelu(h) + b2
    multiply_shared({.transpose_a = true, .accumulate = true}, b.W2, a.hidden.y, stream);
  }
  layer_norm(stream, lnf_gamma, lnf_beta, lnf);
  logits.set_size(vocabulary, rows);
  multiply_shared({}, embedding, lnf.y, logits);  // z = E LN_f(x): (V × d)(d × N)
  //! [float32-block]
}

// Each row's cross-entropy, −ln softmax(z)_target, into row_losses, and their mean; the
// logits become ∂L/∂z = (softmax(z) − onehot(target))/N in the same pass.
double Float32Step::Work::loss_and_dlogits(const PackedBatch& batch) {
  const float inv_rows = 1.0f / static_cast<float>(rows);
  row_losses.set_size(rows);
#pragma omp parallel for
  for (uword j = 0; j < rows; ++j) {
    float* z = logits.colptr(j);
    const uword target = batch.targets(j);
    const float z_target = z[target];
    const float largest = *std::max_element(z, z + vocabulary);
    const float sum = fast::exp_shifted(z, vocabulary, largest);
    row_losses(j) = static_cast<double>(std::log(sum) + largest - z_target);
    const float scale = inv_rows / sum;
    for (uword k = 0; k < vocabulary; ++k)
      z[k] *= scale;
    z[target] -= inv_rows;
  }
  return arma::mean(row_losses);  // summed in one order, whatever the threads
}

void Float32Step::Work::backward(const PackedBatch& batch) {
  const fmat& dlogits = logits;
  d_blocks.resize(blocks.size());
  d_embedding.set_size(vocabulary, d);
  multiply_shared({.transpose_b = true}, dlogits, lnf.y, d_embedding);  // dE = dz yᵀ
  d_final.set_size(d, rows);
  multiply_shared({.transpose_a = true}, embedding, dlogits, d_final);  // dy = Eᵀ dz
  d_stream.zeros(d, rows);
  layer_norm_backward(lnf, lnf_gamma, d_final, d_stream, d_lnf_gamma, d_lnf_beta);
  d_branch.set_size(d, rows);
  d_attended.set_size(d, rows);
  d_qkv.set_size(3 * d, rows);
  d_hidden.set_size(d_ff, rows);
  d_scores.resize(static_cast<uword>(omp_get_max_threads()));
  for (std::vector<float>& scratch : d_scores)
    scratch.resize(max_length * max_length);
  for (uword l = blocks.size(); l-- > 0;) {
    const BlockF& b = blocks[l];
    BlockF& g = d_blocks[l];
    const BlockActivations& a = activations[l];
    // x' = u + W2ᵀ gelu(W1ᵀ LN2(u) + b1) + b2: d_stream holds ∂L/∂x'.
    g.b2 = arma::sum(d_stream, 1);
    g.W2.set_size(d_ff, d);
    multiply_shared({.transpose_b = true}, a.hidden.y, d_stream, g.W2);
    multiply_shared({}, b.W2, d_stream, d_hidden);
    gelu_backward(a.pre, a.hidden, d_hidden);
    g.b1 = arma::sum(d_hidden, 1);
    g.W1.set_size(d, d_ff);
    multiply_shared({.transpose_b = true}, a.ln2.y, d_hidden, g.W1);
    multiply_shared({}, b.W1, d_hidden, d_branch);
    layer_norm_backward(a.ln2, b.ln2_gamma, d_branch, d_stream, g.ln2_gamma, g.ln2_beta);
    // u = x + W_Oᵀ attention(W_QKVᵀ LN1(x) + b_QKV) + b_O: d_stream now holds ∂L/∂u.
    g.b_O = arma::sum(d_stream, 1);
    g.W_O.set_size(d, d);
    multiply_shared({.transpose_b = true}, a.attended, d_stream, g.W_O);
    multiply_shared({}, b.W_O, d_stream, d_attended);
    attend_backward(a);
    g.b_QKV = arma::sum(d_qkv, 1);
    g.W_QKV.set_size(d, 3 * d);
    multiply_shared({.transpose_b = true}, a.ln1.y, d_qkv, g.W_QKV);
    multiply_shared({}, b.W_QKV, d_qkv, d_branch);
    layer_norm_backward(a.ln1, b.ln1_gamma, d_branch, d_stream, g.ln1_gamma, g.ln1_beta);
  }
  // x⁽⁰⁾ᵢ = E_tᵢ + P_pᵢ: row tᵢ of E and row pᵢ of P collect column i of ∂L/∂x⁽⁰⁾.
  d_embedding_columns.zeros(d, vocabulary);
  d_position_columns.zeros(d, position_columns.is_empty() ? 0 : max_length);
  for (uword i = 0; i < rows; ++i) {
    d_embedding_columns.col(batch.tokens(i)) += d_stream.col(i);
    if (!position_columns.is_empty())
      d_position_columns.col(positions(i)) += d_stream.col(i);
  }
  d_embedding += d_embedding_columns.t();
}

void Float32Step::Work::widen_gradients(TransformerWeights& g) const {
  g.config = config;
  widen_into(g.embedding, d_embedding);
  if (config.positions == Positions::learned)
    widen_into(g.position_embedding, fmat(d_position_columns.t()));
  g.blocks.resize(d_blocks.size());
  for (uword l = 0; l < d_blocks.size(); ++l)
    widen_into(g.blocks[l], d_blocks[l], heads);
  widen_into(g.lnf_gamma, d_lnf_gamma);
  widen_into(g.lnf_beta, d_lnf_beta);
}

Float32Step::Float32Step(const TransformerConfig& config) {
  check_config(config);
  if (!config.tied_embeddings)
    throw math::InputError(
        "Float32Step: the model's output layer is not tied to its embedding; the float32 "
        "step computes tied models only (transformer_step() computes both)");
  if (config.dropout != 0.0)
    throw math::InputError(fmt::format(
        "Float32Step: the model drops out at rate {}; the float32 step computes no dropout "
        "(transformer_step() does)",
        config.dropout));
  if (config.positions == Positions::rotary || config.kv_heads != 0 || config.window != 0 ||
      config.norm != Norm::layer_norm || config.mlp != Mlp::gelu)
    throw math::InputError(fmt::format(
        "Float32Step: the model's block is not GPT-2's (positions {}, {} key/value heads, "
        "window {}, {}, {}); the float32 step computes GPT-2's block only "
        "(transformer_step() computes every choice)",
        to_string(config.positions), config.kv_heads, config.window, to_string(config.norm),
        to_string(config.mlp)));
  work_ = std::make_unique<Work>(config);
  if (config.positions == Positions::sinusoidal)
    work_->position_columns =
        arma::conv_to<fmat>::from(math::sinusoidal_positions(config.max_length, config.d_model))
            .t();
}

Float32Step::~Float32Step() = default;
Float32Step::Float32Step(Float32Step&&) noexcept = default;
Float32Step& Float32Step::operator=(Float32Step&&) noexcept = default;

const TransformerStep& Float32Step::run(const TransformerWeights& weights,
                                        const PackedBatch& batch) {
  const fast::OneThread blas_on_one_thread(fast::Held::blas);
  work_->load(weights);
  work_->prepare(batch);
  work_->forward(batch);
  work_->step.loss = work_->loss_and_dlogits(batch);
  work_->backward(batch);
  work_->widen_gradients(work_->step.gradients);
  return work_->step;
}

double Float32Step::loss(const TransformerWeights& weights, const PackedBatch& batch) {
  const fast::OneThread blas_on_one_thread(fast::Held::blas);
  work_->load(weights);
  work_->prepare(batch);
  work_->forward(batch);
  return work_->loss_and_dlogits(batch);
}

arma::vec Float32Step::row_losses(const TransformerWeights& weights, const PackedBatch& batch) {
  loss(weights, batch);
  return work_->row_losses;
}

}  // namespace attn::gpt
