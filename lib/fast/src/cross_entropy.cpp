#include "attn/fast/cross_entropy.hpp"

#include "attn/fast/streaming.hpp"

#include <algorithm>
#include <cmath>

namespace attn::fast {

using arma::uword;

void cross_entropy_forward(arma::fmat& logits, const arma::uvec& targets, arma::fvec& sums,
                           arma::vec& losses) {
  const uword vocabulary = logits.n_rows;
  sums.set_size(logits.n_cols);
  losses.set_size(logits.n_cols);
#pragma omp parallel for
  for (uword j = 0; j < logits.n_cols; ++j) {
    float* z = logits.colptr(j);
    const float z_target = z[targets(j)];
    const float largest = *std::max_element(z, z + vocabulary);
    sums(j) = exp_shifted(z, vocabulary, largest);  // z_k ← e^(z_k − m)
    losses(j) = static_cast<double>(std::log(sums(j)) + largest - z_target);
  }
}

void cross_entropy_backward(arma::fmat& exps, const arma::fvec& sums, const arma::uvec& targets) {
  const float inv_rows = 1.0f / static_cast<float>(exps.n_cols);
#pragma omp parallel for
  for (uword j = 0; j < exps.n_cols; ++j) {
    float* z = exps.colptr(j);
    const float scale = inv_rows / sums(j);
    for (uword k = 0; k < exps.n_rows; ++k)
      z[k] *= scale;
    z[targets(j)] -= inv_rows;
  }
}

}  // namespace attn::fast
