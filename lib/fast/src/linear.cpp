#include "attn/fast/linear.hpp"

#include <cblas.h>
#include <omp.h>

#include <algorithm>

namespace attn::fast {

using arma::fmat;
using arma::fvec;
using arma::uword;

void multiply(Product how, uword m, uword n, uword k, const float* A, uword lda, const float* B,
              uword ldb, float* C, uword ldc) {
  cblas_sgemm(CblasColMajor, how.transpose_a ? CblasTrans : CblasNoTrans,
              how.transpose_b ? CblasTrans : CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(k), 1.0f, A, static_cast<int>(lda), B, static_cast<int>(ldb),
              how.accumulate ? 1.0f : 0.0f, C, static_cast<int>(ldc));
}

void multiply_shared(Product how, const fmat& A, const fmat& B, fmat& C) {
  const uword m = how.transpose_a ? A.n_cols : A.n_rows;
  const uword k = how.transpose_a ? A.n_rows : A.n_cols;
  const uword n = how.transpose_b ? B.n_rows : B.n_cols;
  const uword ldb = B.n_rows;
  const uword ldc = C.n_rows;
#pragma omp parallel
  {
    const auto threads = static_cast<uword>(omp_get_num_threads());
    const auto thread = static_cast<uword>(omp_get_thread_num());
    const uword share = (n + threads - 1) / threads;
    const uword width = (share + 15) / 16 * 16;
    const uword first = std::min(n, thread * width);
    const uword last = std::min(n, first + width);
    if (first < last) {
      const float* B_part = how.transpose_b ? B.memptr() + first : B.memptr() + first * ldb;
      multiply(how, m, last - first, k, A.memptr(), A.n_rows, B_part, ldb, C.memptr() + first * ldc,
               ldc);
    }
  }
}

namespace {

// Every column of M set to v (before a product accumulates into it: M = v + Wᵀ x).
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

}  // namespace

void linear_forward(const fmat& W, const fvec& b, const fmat& x, fmat& y, Output output) {
  if (output == Output::overwrite)
    y.set_size(W.n_cols, x.n_cols);
  const bool biased = !b.is_empty();
  if (biased && output == Output::overwrite)
    fill_columns(y, b);  // y = b, then y += Wᵀ x
  if (biased && output == Output::add)
    add_to_columns(y, b);  // y += b, then y += Wᵀ x
  const bool accumulate = biased || output == Output::add;
  multiply_shared({.transpose_a = true, .accumulate = accumulate}, W, x, y);
}

void linear_backward(const fmat& W, const fmat& x, const fmat& dy, fmat& dW, fvec* db, fmat& dx) {
  dW.set_size(arma::size(W));
  multiply_shared({.transpose_b = true}, x, dy, dW);  // dW = x dyᵀ: (d_in × N)(N × d_out)
  if (db != nullptr)
    *db = arma::sum(dy, 1);  // summed over the tokens
  dx.set_size(W.n_rows, dy.n_cols);
  multiply_shared({}, W, dy, dx);  // dx = W dy: (d_in × d_out)(d_out × N)
}

}  // namespace attn::fast
