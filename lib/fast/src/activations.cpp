#include "attn/fast/activations.hpp"

#include "attn/fast/streaming.hpp"

#include <cmath>
#include <numbers>

namespace attn::fast {

using arma::fmat;
using arma::uword;

void gelu_forward(const fmat& h, GeluCache& cache, fmat& y) {
  constexpr float p = 0.3275911f;  // Abramowitz and Stegun 7.1.26
  constexpr float a1 = 0.254829592f, a2 = -0.284496736f, a3 = 1.421413741f, a4 = -1.453152027f,
                  a5 = 1.061405429f;
  constexpr auto inv_sqrt2 = static_cast<float>(std::numbers::sqrt2 / 2);
  cache.cdf.set_size(arma::size(h));
  cache.gauss.set_size(arma::size(h));
  y.set_size(arma::size(h));
#pragma omp parallel for
  for (uword j = 0; j < h.n_cols; ++j) {
    const float* in = h.colptr(j);
    float* gauss = cache.gauss.colptr(j);
    for (uword i = 0; i < h.n_rows; ++i)
      gauss[i] = -0.5f * in[i] * in[i];
    exp_shifted(gauss, h.n_rows, 0.0f);  // e^(−h²/2)
    float* cdf = cache.cdf.colptr(j);
    float* out = y.colptr(j);
    for (uword i = 0; i < h.n_rows; ++i) {
      const float t = 1.0f / (1.0f + p * std::abs(in[i]) * inv_sqrt2);
      const float tail = t * (a1 + t * (a2 + t * (a3 + t * (a4 + t * a5)))) * gauss[i];
      const float erf_abs = 1.0f - tail;  // erf(|h|/√2)
      cdf[i] = 0.5f * (1.0f + (in[i] < 0.0f ? -erf_abs : erf_abs));
      out[i] = in[i] * cdf[i];
    }
  }
}

void gelu_backward(const fmat& h, const GeluCache& cache, fmat& d) {
  const auto inv_sqrt_2pi = static_cast<float>(std::numbers::inv_sqrtpi / std::numbers::sqrt2);
#pragma omp parallel for
  for (uword j = 0; j < h.n_cols; ++j) {
    const float* in = h.colptr(j);
    const float* cdf = cache.cdf.colptr(j);
    const float* gauss = cache.gauss.colptr(j);
    float* out = d.colptr(j);
    for (uword i = 0; i < h.n_rows; ++i)
      out[i] *= cdf[i] + in[i] * gauss[i] * inv_sqrt_2pi;  // Φ(h) + h φ(h)
  }
}

void swiglu_forward(const fmat& pre, SwiGluCache& cache, fmat& y) {
  const uword d_ff = pre.n_rows / 2;
  cache.sigmoid.set_size(d_ff, pre.n_cols);
  y.set_size(d_ff, pre.n_cols);
#pragma omp parallel for
  for (uword j = 0; j < pre.n_cols; ++j) {
    const float* gate = pre.colptr(j);
    const float* up = gate + d_ff;
    float* sigmoid = cache.sigmoid.colptr(j);
    for (uword i = 0; i < d_ff; ++i)
      sigmoid[i] = -std::abs(gate[i]);
    exp_shifted(sigmoid, d_ff, 0.0f);  // e^(−|a|)
    float* out = y.colptr(j);
    for (uword i = 0; i < d_ff; ++i) {
      sigmoid[i] = (gate[i] >= 0.0f ? 1.0f : sigmoid[i]) / (1.0f + sigmoid[i]);
      out[i] = gate[i] * sigmoid[i] * up[i];
    }
  }
}

void swiglu_backward(const fmat& pre, const SwiGluCache& cache, const fmat& dy, fmat& d_pre) {
  const uword d_ff = dy.n_rows;
  d_pre.set_size(2 * d_ff, dy.n_cols);
#pragma omp parallel for
  for (uword j = 0; j < dy.n_cols; ++j) {
    const float* gate = pre.colptr(j);
    const float* up = gate + d_ff;
    const float* sigmoid = cache.sigmoid.colptr(j);
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

}  // namespace attn::fast
