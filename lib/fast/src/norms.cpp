#include "attn/fast/norms.hpp"

#include <cmath>

namespace attn::fast {

using arma::fmat;
using arma::fvec;
using arma::uword;

namespace {

// Both norms' forward frame: `out` sized as x, then each token's column, on the OpenMP threads,
// normalised by `column(in, x_hat, y)`, which writes the token's x̂ and y and returns its 1/σ.
template <typename Column>
void normalise_columns(const fmat& x, Normalised& out, Column column) {
  out.x_hat.set_size(arma::size(x));
  out.y.set_size(arma::size(x));
  out.inv_std.set_size(x.n_cols);
#pragma omp parallel for
  for (uword j = 0; j < x.n_cols; ++j)
    out.inv_std[j] = column(x.colptr(j), out.x_hat.colptr(j), out.y.colptr(j));
}

// Both norms' backward frame: for each token's column, on the OpenMP threads,
// `column(g_in, x_hat, out, inv_std)` adds the token's ∂L/∂x to `out` from its ∂L/∂y, `g_in`.
template <typename Column>
void backward_columns(const Normalised& forward, const fmat& dy, fmat& dx, Column column) {
#pragma omp parallel for
  for (uword j = 0; j < dy.n_cols; ++j)
    column(dy.colptr(j), forward.x_hat.colptr(j), dx.colptr(j), forward.inv_std[j]);
}

// dγ = Σ dy ⊙ x̂ over the tokens, token after token: the same sums on any number of threads.
void scale_gradient(const Normalised& forward, const fmat& dy, fvec& dgamma) {
  dgamma.zeros(dy.n_rows);
  for (uword j = 0; j < dy.n_cols; ++j) {
    const float* g_in = dy.colptr(j);
    const float* x_hat = forward.x_hat.colptr(j);
    for (uword i = 0; i < dy.n_rows; ++i)
      dgamma[i] += g_in[i] * x_hat[i];
  }
}

}  // namespace

void layer_norm_forward(const fmat& x, const fvec& gamma, const fvec& beta, Normalised& out) {
  const uword d = x.n_rows;
  normalise_columns(x, out, [&](const float* in, float* x_hat, float* y) {
    float sum = 0.0f;
    for (uword i = 0; i < d; ++i)
      sum += in[i];
    const float mean = sum / static_cast<float>(d);
    float squares = 0.0f;
    for (uword i = 0; i < d; ++i)
      squares += (in[i] - mean) * (in[i] - mean);
    const float inv_std = 1.0f / std::sqrt(squares / static_cast<float>(d) + kNormEpsilon);
    for (uword i = 0; i < d; ++i) {
      x_hat[i] = (in[i] - mean) * inv_std;
      y[i] = gamma[i] * x_hat[i] + beta[i];
    }
    return inv_std;
  });
}

void layer_norm_backward(const Normalised& forward, const fvec& gamma, const fmat& dy, fmat& dx,
                         fvec& dgamma, fvec& dbeta) {
  const uword d = dy.n_rows;
  const auto token = [&](const float* g_in, const float* x_hat, float* out, float inv_std) {
    float mean_g = 0.0f;
    float mean_gx = 0.0f;
    for (uword i = 0; i < d; ++i) {
      mean_g += gamma[i] * g_in[i];
      mean_gx += gamma[i] * g_in[i] * x_hat[i];
    }
    mean_g /= static_cast<float>(d);
    mean_gx /= static_cast<float>(d);
    for (uword i = 0; i < d; ++i)
      out[i] += (gamma[i] * g_in[i] - mean_g - x_hat[i] * mean_gx) * inv_std;
  };
  backward_columns(forward, dy, dx, token);
  scale_gradient(forward, dy, dgamma);
  dbeta.zeros(d);
  for (uword j = 0; j < dy.n_cols; ++j) {  // dβ = Σ dy, token after token
    const float* g_in = dy.colptr(j);
    for (uword i = 0; i < d; ++i)
      dbeta[i] += g_in[i];
  }
}

void rms_norm_forward(const fmat& x, const fvec& gamma, Normalised& out) {
  const uword d = x.n_rows;
  normalise_columns(x, out, [&](const float* in, float* x_hat, float* y) {
    float squares = 0.0f;
    for (uword i = 0; i < d; ++i)
      squares += in[i] * in[i];
    const float inv_rms = 1.0f / std::sqrt(squares / static_cast<float>(d) + kNormEpsilon);
    for (uword i = 0; i < d; ++i) {
      x_hat[i] = in[i] * inv_rms;
      y[i] = gamma[i] * x_hat[i];
    }
    return inv_rms;
  });
}

void rms_norm_backward(const Normalised& forward, const fvec& gamma, const fmat& dy, fmat& dx,
                       fvec& dgamma) {
  const uword d = dy.n_rows;
  const auto token = [&](const float* g_in, const float* x_hat, float* out, float inv_std) {
    float mean_gx = 0.0f;
    for (uword i = 0; i < d; ++i)
      mean_gx += gamma[i] * g_in[i] * x_hat[i];
    mean_gx /= static_cast<float>(d);
    for (uword i = 0; i < d; ++i)
      out[i] += (gamma[i] * g_in[i] - x_hat[i] * mean_gx) * inv_std;
  };
  backward_columns(forward, dy, dx, token);
  scale_gradient(forward, dy, dgamma);
}

}  // namespace attn::fast
