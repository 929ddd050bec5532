#include "attn/fast/embedding.hpp"

#include <attn/math/positions.hpp>

namespace attn::fast {

using arma::fmat;
using arma::uword;

void embedding_forward(const fmat& E_columns, const fmat& P_columns, const arma::uvec& tokens,
                       const arma::uvec& positions, fmat& x) {
  x.set_size(E_columns.n_rows, tokens.n_elem);
#pragma omp parallel for
  for (uword i = 0; i < tokens.n_elem; ++i) {
    x.col(i) = E_columns.col(tokens(i));
    if (!P_columns.is_empty())
      x.col(i) += P_columns.col(positions(i));
  }
}

void embedding_backward(const fmat& E_columns, const fmat& P_columns, const arma::uvec& tokens,
                        const arma::uvec& positions, const fmat& dx, fmat& dE_columns,
                        fmat& dP_columns) {
  dE_columns.zeros(arma::size(E_columns));
  dP_columns.zeros(arma::size(P_columns));
  for (uword i = 0; i < tokens.n_elem; ++i) {  // in order: a token repeated adds the same way
    dE_columns.col(tokens(i)) += dx.col(i);
    if (!P_columns.is_empty())
      dP_columns.col(positions(i)) += dx.col(i);
  }
}

RopeTables rope_tables(uword d_head, uword max_length) {
  const arma::mat angles =  // p θᵢ in double, as math::rotary()'s
      math::rotary_frequencies(d_head).t() *
      arma::regspace<arma::rowvec>(0.0, static_cast<double>(max_length) - 1.0);
  return {.cos = arma::conv_to<fmat>::from(arma::mat(arma::cos(angles))),
          .sin = arma::conv_to<fmat>::from(arma::mat(arma::sin(angles)))};
}

namespace {

// Each of the first `heads` heads of every column turns its pairs (2i, 2i + 1) by p θᵢ, forwards
// (sign 1) or back by the transpose (sign −1: sin → −sin).
void rotate(fmat& x, uword heads, const RopeTables& tables, const arma::uvec& positions,
            float sign) {
  const uword pairs = tables.cos.n_rows;
  const uword d_head = 2 * pairs;
#pragma omp parallel for
  for (uword t = 0; t < x.n_cols; ++t) {
    const float* cos = tables.cos.colptr(positions(t));
    const float* sin = tables.sin.colptr(positions(t));
    float* column = x.colptr(t);
    for (uword h = 0; h < heads; ++h) {
      float* head = column + h * d_head;
      for (uword i = 0; i < pairs; ++i) {
        const float a = head[2 * i], b = head[2 * i + 1], s = sign * sin[i];
        head[2 * i] = a * cos[i] - b * s;
        head[2 * i + 1] = a * s + b * cos[i];
      }
    }
  }
}

}  // namespace

void rope_forward(fmat& x, uword heads, const RopeTables& tables, const arma::uvec& positions) {
  rotate(x, heads, tables, positions, 1.0f);
}

void rope_backward(fmat& dx, uword heads, const RopeTables& tables, const arma::uvec& positions) {
  rotate(dx, heads, tables, positions, -1.0f);
}

}  // namespace attn::fast
