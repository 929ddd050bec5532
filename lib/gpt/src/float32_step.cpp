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
#include <string_view>
#include <vector>

namespace attn::gpt {
namespace {

using arma::fmat;
using arma::fvec;
using arma::uword;

constexpr float kNormEpsilon = 1e-5f;  // PyTorch's default, as math::layer_norm's and rms_norm's
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
// The weights in float: a block's, with W_Q, W_K, W_V side by side, and SwiGLU's W_gate, W_up.
// With g key/value heads of d_k, W_K and W_V are (d × g·d_k): g = h (d_kv = d) but for
// grouped-query attention.

struct BlockF {
  fmat W_QKV;  // (d × (d + 2 d_kv)): [W_Q W_K W_V]
  fmat W_O;    // (d × d)
  fmat W1;     // GELU: (d × d_ff); SwiGLU: (d × 2 d_ff), [W_gate W_up]
  fmat W2;     // (d_ff × d): GELU's W2 or SwiGLU's W_down
  fvec ln1_gamma, ln1_beta, b_QKV, b_O, ln2_gamma, ln2_beta;  // no betas with RMSNorm
  fvec b1, b2;                                                // GELU's only
};

// A block's weights of the shapes its config gives them (check_weights() checks the rest of the
// model; the reference's layers check these as they use them), before they are copied. The
// weight is named as parameters() names it, `blocks.1.attention.W_K`, in the message alone: a
// step that passes allocates nothing here.
void require_shape(uword layer, std::string_view name, const arma::mat& m, uword rows, uword cols) {
  if (m.n_rows != rows || m.n_cols != cols)
    throw math::ShapeError(fmt::format("Float32Step: blocks.{}.{} is {}, not ({} × {})", layer,
                                       name, math::shape_of(m), rows, cols));
}
void require_length(uword layer, std::string_view name, const arma::rowvec& v, uword count) {
  if (v.n_elem != count)
    throw math::ShapeError(fmt::format("Float32Step: blocks.{}.{} has {} entries, not {}", layer,
                                       name, v.n_elem, count));
}

void check_block(const BlockWeights& b, uword l, const TransformerConfig& c) {
  const uword d = c.d_model, d_kv = key_value_heads(c) * (d / c.heads), f = c.d_ff;
  const uword betas = c.norm == Norm::layer_norm ? d : 0;
  const math::MultiHeadWeights& W = b.attention;
  require_shape(l, "attention.W_Q", W.W_Q, d, d);
  require_shape(l, "attention.W_K", W.W_K, d, d_kv);
  require_shape(l, "attention.W_V", W.W_V, d, d_kv);
  require_shape(l, "attention.W_O", W.W_O, d, d);
  require_length(l, "attention.b_Q", W.b_Q, d);
  require_length(l, "attention.b_K", W.b_K, d_kv);
  require_length(l, "attention.b_V", W.b_V, d_kv);
  require_length(l, "attention.b_O", W.b_O, d);
  require_length(l, "ln1.gamma", b.ln1_gamma, d);
  require_length(l, "ln1.beta", b.ln1_beta, betas);
  require_length(l, "ln2.gamma", b.ln2_gamma, d);
  require_length(l, "ln2.beta", b.ln2_beta, betas);
  if (c.mlp == Mlp::gelu) {
    require_shape(l, "mlp.W1", b.mlp.W1, d, f);
    require_length(l, "mlp.b1", b.mlp.b1, f);
    require_shape(l, "mlp.W2", b.mlp.W2, f, d);
    require_length(l, "mlp.b2", b.mlp.b2, d);
  } else {
    require_shape(l, "swiglu.W_gate", b.swiglu.W_gate, d, f);
    require_shape(l, "swiglu.W_up", b.swiglu.W_up, d, f);
    require_shape(l, "swiglu.W_down", b.swiglu.W_down, f, d);
  }
}

// And the final norm's.
void check_final_norm(const TransformerWeights& w) {
  const uword d = w.config.d_model;
  const uword betas = w.config.norm == Norm::layer_norm ? d : 0;
  if (w.lnf_gamma.n_elem != d || w.lnf_beta.n_elem != betas)
    throw math::ShapeError(
        fmt::format("Float32Step: lnf.gamma has {} entries and lnf.beta {}, not {} and {}",
                    w.lnf_gamma.n_elem, w.lnf_beta.n_elem, d, betas));
}

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

// A block's weights, of the shapes check_block() checked, rounded: the MLP's as its kind has.
void round_into(BlockF& to, const BlockWeights& b, Mlp mlp) {
  const math::MultiHeadWeights& W = b.attention;
  const uword d = W.W_Q.n_rows;
  const uword d_kv = W.W_K.n_cols;
  to.W_QKV.set_size(d, d + 2 * d_kv);
  to.b_QKV.set_size(d + 2 * d_kv);
  const std::array<const arma::mat*, 3> matrices = {&W.W_Q, &W.W_K, &W.W_V};
  const std::array<const arma::rowvec*, 3> biases = {&W.b_Q, &W.b_K, &W.b_V};
  const std::array<uword, 3> columns = {0, d, d + d_kv};
  for (uword k = 0; k < 3; ++k) {  // side by side: [W_Q W_K W_V], [b_Q b_K b_V]
    round_into(to.W_QKV.colptr(columns[k]), *matrices[k]);
    round_into(to.b_QKV.memptr() + columns[k], *biases[k]);
  }
  round_into(to.W_O, W.W_O);
  round_into(to.ln1_gamma, b.ln1_gamma);
  round_into(to.ln1_beta, b.ln1_beta);
  round_into(to.b_O, W.b_O);
  round_into(to.ln2_gamma, b.ln2_gamma);
  round_into(to.ln2_beta, b.ln2_beta);
  if (mlp == Mlp::gelu) {
    round_into(to.W1, b.mlp.W1);
    round_into(to.W2, b.mlp.W2);
    round_into(to.b1, b.mlp.b1);
    round_into(to.b2, b.mlp.b2);
  } else {  // side by side: [W_gate W_up]
    const uword d_ff = b.swiglu.W_gate.n_cols;
    to.W1.set_size(d, 2 * d_ff);
    round_into(to.W1.colptr(0), b.swiglu.W_gate);
    round_into(to.W1.colptr(d_ff), b.swiglu.W_up);
    round_into(to.W2, b.swiglu.W_down);
  }
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

void widen_into(BlockWeights& to, const BlockF& g, const TransformerConfig& c) {
  const uword d = g.W_O.n_rows;
  const uword d_kv = (g.W_QKV.n_cols - d) / 2;
  math::MultiHeadWeights& W = to.attention;
  W.heads = c.heads;
  W.kv_heads = c.kv_heads;
  const std::array<arma::mat*, 3> matrices = {&W.W_Q, &W.W_K, &W.W_V};
  const std::array<arma::rowvec*, 3> biases = {&W.b_Q, &W.b_K, &W.b_V};
  const std::array<uword, 3> columns = {0, d, d + d_kv};
  const std::array<uword, 3> widths = {d, d_kv, d_kv};
  for (uword k = 0; k < 3; ++k) {
    widen_into(*matrices[k], g.W_QKV.colptr(columns[k]), d, widths[k]);
    widen_into(*biases[k], g.b_QKV.memptr() + columns[k], widths[k]);
  }
  widen_into(W.W_O, g.W_O);
  widen_into(W.b_O, g.b_O);
  widen_into(to.ln1_gamma, g.ln1_gamma);
  widen_into(to.ln1_beta, g.ln1_beta);  // empty with RMSNorm
  widen_into(to.ln2_gamma, g.ln2_gamma);
  widen_into(to.ln2_beta, g.ln2_beta);
  if (c.mlp == Mlp::gelu) {
    widen_into(to.mlp.W1, g.W1);
    widen_into(to.mlp.b1, g.b1);
    widen_into(to.mlp.W2, g.W2);
    widen_into(to.mlp.b2, g.b2);
  } else {
    const uword d_ff = g.W2.n_rows;
    widen_into(to.swiglu.W_gate, g.W1.colptr(0), d, d_ff);
    widen_into(to.swiglu.W_up, g.W1.colptr(d_ff), d, d_ff);
    widen_into(to.swiglu.W_down, g.W2);
  }
}

// ---------------------------------------------------------------------------------------------
// The norms, one column (token) at a time. Layer norm: y = γ ⊙ x̂ + β with
// x̂ = (x − μ)/sqrt(σ² + ε). RMSNorm: y = γ ⊙ x̂ with x̂ = x/sqrt(mean(x²) + ε), no centring and
// no β.

struct NormF {
  fmat normalised;  // (d × N): x̂
  fmat y;           // (d × N)
  fvec inv_std;     // (N): 1/sqrt(σ² + ε), or 1/sqrt(mean(x²) + ε)
};

void layer_norm(const fmat& x, const fvec& gamma, const fvec& beta, NormF& ln) {
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
    const float inv_std = 1.0f / std::sqrt(squares / static_cast<float>(d) + kNormEpsilon);
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
void layer_norm_backward(const NormF& ln, const fvec& gamma, const fmat& dy, fmat& dx, fvec& dgamma,
                         fvec& dbeta) {
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

void rms_norm(const fmat& x, const fvec& gamma, NormF& rms) {
  const uword d = x.n_rows;
  rms.normalised.set_size(arma::size(x));
  rms.y.set_size(arma::size(x));
  rms.inv_std.set_size(x.n_cols);
#pragma omp parallel for
  for (uword j = 0; j < x.n_cols; ++j) {
    const float* in = x.colptr(j);
    float squares = 0.0f;
    for (uword i = 0; i < d; ++i)
      squares += in[i] * in[i];
    const float inv_rms = 1.0f / std::sqrt(squares / static_cast<float>(d) + kNormEpsilon);
    float* normalised = rms.normalised.colptr(j);
    float* y = rms.y.colptr(j);
    for (uword i = 0; i < d; ++i) {
      normalised[i] = in[i] * inv_rms;
      y[i] = gamma[i] * normalised[i];
    }
    rms.inv_std[j] = inv_rms;
  }
}

// dx += ∂L/∂x given dy: with g = γ ⊙ dy, dx = (g − x̂ mean(g ⊙ x̂)) / rms (layer norm's without
// its − mean(g)); dγ = Σ dy ⊙ x̂.
void rms_norm_backward(const NormF& rms, const fvec& gamma, const fmat& dy, fmat& dx,
                       fvec& dgamma) {
  const uword d = dy.n_rows;
#pragma omp parallel for
  for (uword j = 0; j < dy.n_cols; ++j) {
    const float* g_in = dy.colptr(j);
    const float* normalised = rms.normalised.colptr(j);
    float mean_gx = 0.0f;
    for (uword i = 0; i < d; ++i)
      mean_gx += gamma[i] * g_in[i] * normalised[i];
    mean_gx /= static_cast<float>(d);
    float* out = dx.colptr(j);
    for (uword i = 0; i < d; ++i)
      out[i] += (gamma[i] * g_in[i] - normalised[i] * mean_gx) * rms.inv_std[j];
  }
  dgamma.zeros(d);
  for (uword j = 0; j < dy.n_cols; ++j) {
    const float* g_in = dy.colptr(j);
    const float* normalised = rms.normalised.colptr(j);
    for (uword i = 0; i < d; ++i)
      dgamma[i] += g_in[i] * normalised[i];
  }
}

// The model's norm: layer norm, or RMSNorm (which ignores β, empty).
void normalise(Norm kind, const fmat& x, const fvec& gamma, const fvec& beta, NormF& out) {
  if (kind == Norm::layer_norm)
    layer_norm(x, gamma, beta, out);
  else
    rms_norm(x, gamma, out);
}

// Its backward pass: dx += ∂L/∂x, and dγ, dβ (left empty with RMSNorm).
void normalise_backward(Norm kind, const NormF& f, const fvec& gamma, const fmat& dy, fmat& dx,
                        fvec& dgamma, fvec& dbeta) {
  if (kind == Norm::layer_norm) {
    layer_norm_backward(f, gamma, dy, dx, dgamma, dbeta);
  } else {
    rms_norm_backward(f, gamma, dy, dx, dgamma);
    dbeta.reset();
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
};

// y = h Φ(h), keeping Φ and the Gaussian in g.
void gelu(const fmat& h, GeluF& g, fmat& y_all) {
  constexpr float p = 0.3275911f;
  constexpr float a1 = 0.254829592f, a2 = -0.284496736f, a3 = 1.421413741f, a4 = -1.453152027f,
                  a5 = 1.061405429f;
  constexpr auto inv_sqrt2 = static_cast<float>(std::numbers::sqrt2 / 2);
  g.cdf.set_size(arma::size(h));
  g.gauss.set_size(arma::size(h));
  y_all.set_size(arma::size(h));
#pragma omp parallel for
  for (uword j = 0; j < h.n_cols; ++j) {
    const float* in = h.colptr(j);
    float* gauss = g.gauss.colptr(j);
    for (uword i = 0; i < h.n_rows; ++i)
      gauss[i] = -0.5f * in[i] * in[i];
    fast::exp_shifted(gauss, h.n_rows, 0.0f);
    float* cdf = g.cdf.colptr(j);
    float* y = y_all.colptr(j);
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
// SwiGLU's middle, silu(gate) ⊙ up with silu(a) = a σ(a). σ(a) = 1/(1 + e^(−a)) for a ≥ 0 and
// e^a/(1 + e^a) below, both from e^(−|a|) ≤ 1, which never overflows: one vectorised
// exponential per entry, as GELU's.

struct SwiGluF {
  fmat sigmoid;  // (d_ff × N): σ(gate)
};

// pre (2 d_ff × N) holds the gate above up, per column; y = silu(gate) ⊙ up.
void swiglu(const fmat& pre, SwiGluF& s, fmat& y_all) {
  const uword d_ff = pre.n_rows / 2;
  s.sigmoid.set_size(d_ff, pre.n_cols);
  y_all.set_size(d_ff, pre.n_cols);
#pragma omp parallel for
  for (uword j = 0; j < pre.n_cols; ++j) {
    const float* gate = pre.colptr(j);
    const float* up = gate + d_ff;
    float* sigmoid = s.sigmoid.colptr(j);
    for (uword i = 0; i < d_ff; ++i)
      sigmoid[i] = -std::abs(gate[i]);
    fast::exp_shifted(sigmoid, d_ff, 0.0f);  // e^(−|a|)
    float* y = y_all.colptr(j);
    for (uword i = 0; i < d_ff; ++i) {
      sigmoid[i] = (gate[i] >= 0.0f ? 1.0f : sigmoid[i]) / (1.0f + sigmoid[i]);
      y[i] = gate[i] * sigmoid[i] * up[i];
    }
  }
}

// Given dy = ∂L/∂y (d_ff × N), into d_pre (2 d_ff × N): the gate's rows
// dy ⊙ up ⊙ silu'(gate), silu'(a) = σ(a)(1 + a(1 − σ(a))), and up's rows dy ⊙ silu(gate).
void swiglu_backward(const fmat& pre, const SwiGluF& s, const fmat& dy, fmat& d_pre) {
  const uword d_ff = dy.n_rows;
#pragma omp parallel for
  for (uword j = 0; j < dy.n_cols; ++j) {
    const float* gate = pre.colptr(j);
    const float* up = gate + d_ff;
    const float* sigmoid = s.sigmoid.colptr(j);
    const float* in = dy.colptr(j);
    float* d_gate = d_pre.colptr(j);
    float* d_up = d_gate + d_ff;
    for (uword i = 0; i < d_ff; ++i) {
      const float silu = gate[i] * sigmoid[i];
      d_gate[i] = in[i] * up[i] * (sigmoid[i] + silu * (1.0f - sigmoid[i]));
      d_up[i] = in[i] * silu;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// What one block keeps from its forward pass for its backward pass.

struct BlockActivations {
  NormF ln1;
  fmat qkv;                  // (d + 2 d_kv × N): Q, K and V, one column per token (RoPE'd)
  std::vector<float> probs;  // per sentence and head, its (n × n) weights, one column per query
  fmat attended;             // (d × N): the heads' outputs side by side
  NormF ln2;
  fmat pre;        // GELU: (d_ff × N), W1ᵀ LN2(u) + b1; SwiGLU: (2 d_ff × N), gate above up
  GeluF gelu;      // GELU's values, or
  SwiGluF swiglu;  // SwiGLU's
  fmat hidden;     // (d_ff × N): gelu(pre), or silu(gate) ⊙ up: what W2 (W_down) reads
};

}  // namespace

struct Float32Step::Work {
  TransformerConfig config;
  uword d = 0, heads = 0, d_head = 0, d_ff = 0, vocabulary = 0, max_length = 0;
  uword kv_heads = 0;  // g: every key/value head is shared by `group` query heads
  uword group = 0;
  uword d_kv = 0;      // g·d_k: the rows of K, and of V, in qkv
  uword qkv_rows = 0;  // d + 2 d_kv: Q, K and V, one column per token
  uword mlp_rows = 0;  // the rows of W1ᵀ LN2(u): d_ff, or 2 d_ff with SwiGLU (gate and up)
  uword window = 0;    // w: query i sees keys i − w < j ≤ i; max_length without a window
                       // (or a wider one: no sentence is longer)
  float score_scale = 0.0f;

  // The model, rounded to float.
  fmat embedding;          // (V × d): E, the output layer
  fmat embedding_columns;  // (d × V): Eᵀ, for the embedding's look-ups
  fmat position_rows;      // (max_length × d): P, when learned
  fmat position_columns;   // (d × max_length): Pᵀ, learned or sinusoidal; empty without
  fmat rotary_cos;         // (d_k/2 × max_length): column p holds cos(p θᵢ), with RoPE
  fmat rotary_sin;         // and sin(p θᵢ); empty without
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
  NormF lnf;
  fmat logits;           // (V × N); after the loss, ∂L/∂z
  arma::vec row_losses;  // (N): −ln p(target) per row

  // The backward pass's working matrices.
  fmat d_stream, d_branch, d_attended, d_qkv, d_hidden, d_pre, d_final;
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
        kv_heads(key_value_heads(c)),
        group(c.heads / key_value_heads(c)),
        d_kv(key_value_heads(c) * (c.d_model / c.heads)),
        qkv_rows(c.d_model + 2 * key_value_heads(c) * (c.d_model / c.heads)),
        mlp_rows(c.mlp == Mlp::gelu ? c.d_ff : 2 * c.d_ff),
        window(c.window == 0 ? c.max_length : std::min(c.window, c.max_length)),
        score_scale(1.0f / std::sqrt(static_cast<float>(c.d_model / c.heads))),
        activations(c.layers) {}

  void load(const TransformerWeights& w);
  void prepare(const PackedBatch& batch);
  void forward(const PackedBatch& batch);
  double loss_and_dlogits(const PackedBatch& batch);
  void backward(const PackedBatch& batch);
  struct HeadSlice;
  [[nodiscard]] HeadSlice slice(const BlockActivations& a, std::ptrdiff_t pair) const;
  // The first key query i sees: i − w + 1, or 0 (always 0 without a window).
  [[nodiscard]] uword first_key(uword i) const { return i + 1 > window ? i + 1 - window : 0; }
  void attend(BlockActivations& a);
  void attend_backward(const BlockActivations& a);
  enum class Turn { forward, back };
  void rotate(fmat& M, Turn turn) const;
  void widen_gradients(TransformerWeights& g) const;
};

void Float32Step::Work::load(const TransformerWeights& w) {
  check_weights(w);
  const TransformerConfig& c = w.config;
  if (c.vocabulary != config.vocabulary || c.d_model != config.d_model || c.heads != config.heads ||
      c.layers != config.layers || c.d_ff != config.d_ff || c.max_length != config.max_length ||
      c.positions != config.positions || c.tied_embeddings != config.tied_embeddings ||
      key_value_heads(c) != kv_heads || c.window != config.window || c.norm != config.norm ||
      c.mlp != config.mlp)
    throw math::ShapeError(fmt::format(
        "Float32Step: the weights are of a model with V = {}, d = {}, {} heads ({} key/value), "
        "{} layers, d_ff = {}, max_length = {}, positions {}, window {}, {}, {}; this step was "
        "made for V = {}, d = {}, {} heads ({} key/value), {} layers, d_ff = {}, max_length = {}, "
        "positions {}, window {}, {}, {}",
        c.vocabulary, c.d_model, c.heads, key_value_heads(c), c.layers, c.d_ff, c.max_length,
        to_string(c.positions), c.window, to_string(c.norm), to_string(c.mlp), config.vocabulary,
        config.d_model, config.heads, kv_heads, config.layers, config.d_ff, config.max_length,
        to_string(config.positions), config.window, to_string(config.norm), to_string(config.mlp)));
  for (uword l = 0; l < w.blocks.size(); ++l)
    check_block(w.blocks[l], l, c);
  check_final_norm(w);
  round_into(embedding, w.embedding);
  embedding_columns = embedding.t();
  if (c.positions == Positions::learned) {
    round_into(position_rows, w.position_embedding);
    position_columns = position_rows.t();
  }
  blocks.resize(w.blocks.size());
  for (uword l = 0; l < blocks.size(); ++l)
    round_into(blocks[l], w.blocks[l], config.mlp);
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

// Where one (sentence, query head) pair's attention lives in the batch: the sentence's first
// column and length, the head's first row, the first row of its key/value head's K in the
// block's qkv (V's lies d_kv rows below), where its (n × n) weights begin in
// BlockActivations::probs, and its Q, K and V. Query head k reads key/value head k / group.
struct Float32Step::Work::HeadSlice {
  uword first = 0;
  uword n = 0;
  uword row = 0;
  uword kv_row = 0;
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
  const uword row = head * d_head;
  const uword kv_row = d + (head / group) * d_head;
  const float* column = a.qkv.colptr(s.first);
  return {.first = s.first,
          .n = s.count(),
          .row = row,
          .kv_row = kv_row,
          .probs = probs_offset[sentence] + head * s.count() * s.count(),
          .Q = column + row,
          .K = column + kv_row,
          .V = column + kv_row + d_kv};
}

//! [float32-attention]
// Causal attention for every sentence and head, on the columns of Q, K and V in place:
// Sᵀ = Kₕᵀ Qₕ / √d_k holds one column per query i; its softmax runs over the keys it sees,
// first_key(i) ... i (0 ... i without a window), and the other keys get weight 0; Oₕ = Vₕ Pᵀ.
// (Pᵀ is stored: column i holds query i's weights.) The products run on blocks of kQueryBlock
// queries, each against only the keys the block's queries see: the blocks above the diagonal,
// and below the window's band, all masked, are never computed.
void Float32Step::Work::attend(BlockActivations& a) {
  const uword ld = qkv_rows;
  const auto pairs = static_cast<std::ptrdiff_t>(sequences.size() * heads);
#pragma omp parallel for schedule(dynamic)
  for (std::ptrdiff_t pair = 0; pair < pairs; ++pair) {
    const auto [first, n, row, kv_row, probs, Q, K, V] = slice(a, pair);
    float* P = a.probs.data() + probs;
    float* O = a.attended.colptr(first) + row;
    for (uword q0 = 0; q0 < n; q0 += kQueryBlock) {
      const uword width = std::min(kQueryBlock, n - q0);
      const uword k0 = first_key(q0);  // queries q0 ... k1 − 1 see keys k0 ... k1 − 1 at most
      const uword k1 = q0 + width;
      multiply({.transpose_a = true}, k1 - k0, width, d_head, K + k0 * ld, ld, Q + q0 * ld, ld,
               P + q0 * n + k0, n);
      for (uword i = q0; i < k1; ++i) {
        float* column = P + i * n;
        const uword j0 = first_key(i);
        for (uword j = j0; j <= i; ++j)
          column[j] *= score_scale;
        const float largest = *std::max_element(column + j0, column + i + 1);
        const float sum = fast::exp_shifted(column + j0, i + 1 - j0, largest);
        for (uword j = j0; j <= i; ++j)
          column[j] /= sum;
        std::fill(column, column + j0, 0.0f);
        std::fill(column + i + 1, column + n, 0.0f);
      }
      multiply({}, d_head, width, k1 - k0, V + k0 * ld, ld, P + q0 * n + k0, n, O + q0 * d, d);
    }
  }
}

// Its backward pass, given ∂L/∂O in d_attended, into d_qkv:
// dVₕ = dOₕ P, dPᵀ = Vₕᵀ dOₕ, dS = P ⊙ (dP − rowsum(P ⊙ dP)), dQₕ = Kₕ dSᵀ / √d_k,
// dKₕ = Qₕ dS / √d_k; by blocks of queries (dP, dQ) and of keys (dV, dK), each against only
// the keys, or the queries, it meets. A key/value head shared by a group of query heads sums
// their dK and dV: one thread takes the whole group, so that no two threads add to them.
void Float32Step::Work::attend_backward(const BlockActivations& a) {
  const uword ld = qkv_rows;
  const auto pairs = static_cast<std::ptrdiff_t>(sequences.size() * kv_heads);
#pragma omp parallel for schedule(dynamic)
  for (std::ptrdiff_t kv_pair = 0; kv_pair < pairs; ++kv_pair) {
    float* dS = d_scores[static_cast<uword>(omp_get_thread_num())].data();
    const auto sentence = static_cast<uword>(kv_pair) / kv_heads;
    const auto kv_head = static_cast<uword>(kv_pair) % kv_heads;
    for (uword member = 0; member < group; ++member) {  // its query heads, one after the other
      const auto pair = static_cast<std::ptrdiff_t>(sentence * heads + kv_head * group + member);
      const auto [first, n, row, kv_row, probs, Q, K, V] = slice(a, pair);
      const float* P = a.probs.data() + probs;
      const float* dO = d_attended.colptr(first) + row;
      float* dQ = d_qkv.colptr(first) + row;
      float* dK = d_qkv.colptr(first) + kv_row;
      float* dV = dK + d_kv;
      for (uword q0 = 0; q0 < n; q0 += kQueryBlock) {
        const uword width = std::min(kQueryBlock, n - q0);
        const uword k0 = first_key(q0);
        const uword k1 = q0 + width;
        multiply({.transpose_a = true}, k1 - k0, width, d_head, V + k0 * ld, ld, dO + q0 * d, d,
                 dS + q0 * n + k0, n);
        for (uword i = q0; i < k1; ++i) {
          const float* p = P + i * n;
          float* column = dS + i * n;
          const uword j0 = first_key(i);
          float weighted = 0.0f;
          for (uword j = j0; j <= i; ++j)
            weighted += p[j] * column[j];
          for (uword j = j0; j <= i; ++j)
            column[j] = p[j] * (column[j] - weighted) * score_scale;
          std::fill(column, column + j0, 0.0f);
          std::fill(column + i + 1, column + n, 0.0f);
        }
        multiply({}, d_head, width, k1 - k0, K + k0 * ld, ld, dS + q0 * n + k0, n, dQ + q0 * ld,
                 ld);
      }
      // Keys k0 ... k0 + width − 1 are seen by queries k0 ... k0 + width + w − 2 (n − 1 at most).
      const Product into_shared{.transpose_b = true, .accumulate = member > 0};
      for (uword k0 = 0; k0 < n; k0 += kQueryBlock) {
        const uword width = std::min(kQueryBlock, n - k0);
        const uword queries = std::min(n, k0 + width - 1 + window) - k0;
        multiply(into_shared, d_head, width, queries, dO + k0 * d, d, P + k0 * n + k0, n,
                 dV + k0 * ld, ld);
        multiply(into_shared, d_head, width, queries, Q + k0 * ld, ld, dS + k0 * n + k0, n,
                 dK + k0 * ld, ld);
      }
    }
  }
}
//! [float32-attention]

// RoPE on the columns of qkv, or of their gradients: in every token's column, each of the h
// query heads and the g key heads (the rows 0 ... d + d_kv − 1) turns its pairs (2i, 2i + 1) by
// the angle p θᵢ of the token's position p in its sentence, forwards
// (a, b) → (a cos − b sin, a sin + b cos); a gradient turns back by the transpose (sin → −sin).
void Float32Step::Work::rotate(fmat& M, Turn turn) const {
  const uword pairs = d_head / 2;
  const uword turned = heads + kv_heads;
  const float sign = turn == Turn::forward ? 1.0f : -1.0f;
#pragma omp parallel for
  for (uword t = 0; t < rows; ++t) {
    const float* cos = rotary_cos.colptr(positions(t));
    const float* sin = rotary_sin.colptr(positions(t));
    float* column = M.colptr(t);
    for (uword h = 0; h < turned; ++h) {
      float* x = column + h * d_head;
      for (uword i = 0; i < pairs; ++i) {
        const float a = x[2 * i], b = x[2 * i + 1], s = sign * sin[i];
        x[2 * i] = a * cos[i] - b * s;
        x[2 * i + 1] = a * s + b * cos[i];
      }
    }
  }
}

void Float32Step::Work::forward(const PackedBatch& batch) {
  stream.set_size(d, rows);
#pragma omp parallel for
  for (uword i = 0; i < rows; ++i) {
    stream.col(i) = embedding_columns.col(batch.tokens(i));
    if (!position_columns.is_empty())
      stream.col(i) += position_columns.col(positions(i));
  }
  const Norm norm = config.norm;
  const bool rotary = config.positions == Positions::rotary;
  //! [float32-block]
  for (uword l = 0; l < blocks.size(); ++l) {
    const BlockF& b = blocks[l];
    BlockActivations& a = activations[l];
    normalise(norm, stream, b.ln1_gamma, b.ln1_beta, a.ln1);
    a.qkv.set_size(qkv_rows, rows);
    fill_columns(a.qkv, b.b_QKV);
    multiply_shared({.transpose_a = true, .accumulate = true}, b.W_QKV, a.ln1.y, a.qkv);
    if (rotary)
      rotate(a.qkv, Turn::forward);  // RoPE: Q's and K's heads turned at their positions
    a.attended.set_size(d, rows);
    attend(a);
    add_to_columns(stream, b.b_O);  // u = x + W_Oᵀ O + b_O
    multiply_shared({.transpose_a = true, .accumulate = true}, b.W_O, a.attended, stream);
    normalise(norm, stream, b.ln2_gamma, b.ln2_beta, a.ln2);
    a.pre.set_size(mlp_rows, rows);
    if (config.mlp == Mlp::gelu) {
      fill_columns(a.pre, b.b1);
      multiply_shared({.transpose_a = true, .accumulate = true}, b.W1, a.ln2.y, a.pre);
      gelu(a.pre, a.gelu, a.hidden);
      add_to_columns(stream, b.b2);  // x' = u + W2ᵀ gelu(h) + b2
    } else {
      multiply_shared({.transpose_a = true}, b.W1, a.ln2.y, a.pre);  // gate, up: no biases
      swiglu(a.pre, a.swiglu, a.hidden);                             // x' = u + W_downᵀ ...
    }
    multiply_shared({.transpose_a = true, .accumulate = true}, b.W2, a.hidden, stream);
  }
  normalise(norm, stream, lnf_gamma, lnf_beta, lnf);
  logits.set_size(vocabulary, rows);
  multiply_shared({}, embedding, lnf.y, logits);  // z = E Norm_f(x): (V × d)(d × N)
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
  const Norm norm = config.norm;
  const bool rotary = config.positions == Positions::rotary;
  const bool gelu_mlp = config.mlp == Mlp::gelu;
  d_blocks.resize(blocks.size());
  d_embedding.set_size(vocabulary, d);
  multiply_shared({.transpose_b = true}, dlogits, lnf.y, d_embedding);  // dE = dz yᵀ
  d_final.set_size(d, rows);
  multiply_shared({.transpose_a = true}, embedding, dlogits, d_final);  // dy = Eᵀ dz
  d_stream.zeros(d, rows);
  normalise_backward(norm, lnf, lnf_gamma, d_final, d_stream, d_lnf_gamma, d_lnf_beta);
  d_branch.set_size(d, rows);
  d_attended.set_size(d, rows);
  d_qkv.set_size(qkv_rows, rows);
  d_hidden.set_size(d_ff, rows);
  d_pre.set_size(gelu_mlp ? 0 : mlp_rows, gelu_mlp ? 0 : rows);  // GELU's is d_hidden itself
  d_scores.resize(static_cast<uword>(omp_get_max_threads()));
  for (std::vector<float>& scratch : d_scores)
    scratch.resize(max_length * max_length);
  for (uword l = blocks.size(); l-- > 0;) {
    const BlockF& b = blocks[l];
    BlockF& g = d_blocks[l];
    const BlockActivations& a = activations[l];
    // x' = u + W2ᵀ hidden(W1ᵀ Norm2(u) + b1) + b2 (no biases with SwiGLU): d_stream holds
    // ∂L/∂x'.
    g.W2.set_size(d_ff, d);
    multiply_shared({.transpose_b = true}, a.hidden, d_stream, g.W2);
    multiply_shared({}, b.W2, d_stream, d_hidden);
    if (gelu_mlp) {
      g.b2 = arma::sum(d_stream, 1);
      gelu_backward(a.pre, a.gelu, d_hidden);  // in place: ∂L/∂h
      g.b1 = arma::sum(d_hidden, 1);
    } else {
      swiglu_backward(a.pre, a.swiglu, d_hidden, d_pre);  // ∂L/∂(gate, up)
    }
    const fmat& d_in = gelu_mlp ? d_hidden : d_pre;
    g.W1.set_size(d, mlp_rows);
    multiply_shared({.transpose_b = true}, a.ln2.y, d_in, g.W1);
    multiply_shared({}, b.W1, d_in, d_branch);
    normalise_backward(norm, a.ln2, b.ln2_gamma, d_branch, d_stream, g.ln2_gamma, g.ln2_beta);
    // u = x + W_Oᵀ attention(W_QKVᵀ Norm1(x) + b_QKV) + b_O: d_stream now holds ∂L/∂u.
    g.b_O = arma::sum(d_stream, 1);
    g.W_O.set_size(d, d);
    multiply_shared({.transpose_b = true}, a.attended, d_stream, g.W_O);
    multiply_shared({}, b.W_O, d_stream, d_attended);
    attend_backward(a);
    if (rotary)
      rotate(d_qkv, Turn::back);  // the gradients of the turned Q and K, turned back
    g.b_QKV = arma::sum(d_qkv, 1);
    g.W_QKV.set_size(d, qkv_rows);
    multiply_shared({.transpose_b = true}, a.ln1.y, d_qkv, g.W_QKV);
    multiply_shared({}, b.W_QKV, d_qkv, d_branch);
    normalise_backward(norm, a.ln1, b.ln1_gamma, d_branch, d_stream, g.ln1_gamma, g.ln1_beta);
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
    widen_into(g.blocks[l], d_blocks[l], config);
  widen_into(g.lnf_gamma, d_lnf_gamma);
  widen_into(g.lnf_beta, d_lnf_beta);  // empty with RMSNorm
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
  work_ = std::make_unique<Work>(config);
  if (config.positions == Positions::sinusoidal)
    work_->position_columns =
        arma::conv_to<fmat>::from(math::sinusoidal_positions(config.max_length, config.d_model))
            .t();
  if (config.positions == Positions::rotary) {  // the angles p θᵢ in double, as rotary()'s
    const arma::mat angles =
        math::rotary_frequencies(work_->d_head).t() *
        arma::regspace<arma::rowvec>(0.0, static_cast<double>(config.max_length) - 1.0);
    work_->rotary_cos = arma::conv_to<fmat>::from(arma::mat(arma::cos(angles)));
    work_->rotary_sin = arma::conv_to<fmat>::from(arma::mat(arma::sin(angles)));
  }
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
