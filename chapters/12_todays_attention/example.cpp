#include "example.hpp"

#include <attn/math/layers.hpp>
#include <attn/numpy/numpy_random.hpp>

#include <fmt/format.h>

#include <cmath>

namespace attn::ch12 {

namespace {

// `rows` x `cols` standard normals divided by √fan_in, the fan-in being `rows`.
arma::mat scaled_normal(numpy::Generator& rng, arma::uword rows, arma::uword cols) {
  return rng.normal(rows, cols) / std::sqrt(static_cast<double>(rows));
}

const arma::uword kNumbersPerLine = 8;

}  // namespace

Example worked_example() {
  numpy::Generator rng = numpy::default_rng(kExampleSeed);
  const arma::uword d_k = kExampleWidth / kExampleHeads;
  const arma::mat x = rng.normal(kExampleTokens, kExampleWidth);
  math::MultiHeadWeights W;
  W.heads = kExampleHeads;
  W.kv_heads = kExampleKvHeads;
  W.W_Q = scaled_normal(rng, kExampleWidth, kExampleWidth);
  W.W_K = scaled_normal(rng, kExampleWidth, kExampleKvHeads * d_k);
  W.W_V = scaled_normal(rng, kExampleWidth, kExampleKvHeads * d_k);
  W.W_O = scaled_normal(rng, kExampleWidth, kExampleWidth);
  math::SwiGluWeights mlp;
  mlp.W_gate = scaled_normal(rng, kExampleWidth, kExampleHidden);
  mlp.W_up = scaled_normal(rng, kExampleWidth, kExampleHidden);
  mlp.W_down = scaled_normal(rng, kExampleHidden, kExampleWidth);
  const arma::vec positions = arma::regspace<arma::vec>(0, kExampleTokens - 1);
  const math::Mask band = math::Mask::causal_window(kExampleTokens, kExampleWindow);
  const arma::rowvec ones(kExampleWidth, arma::fill::ones);
  return {.x = x,
          .band = band,
          .attention = math::multi_head_attention(x, x, x, W, band,
                                                  {.queries = positions, .keys = positions}),
          .rms_norm = math::rms_norm(x.row(0), ones).y,
          .swiglu = math::swiglu(x.row(0), mlp).y};
}

bool banded(const Example& example, double tolerance) {
  bool banded = true;  // nothing outside the window, every row a distribution
  for (const math::Attention& head : example.attention.heads)
    for (arma::uword i = 0; i < head.weights.n_rows; ++i) {
      const arma::rowvec row = head.weights.row(i);
      banded = banded && std::abs(arma::accu(row) - 1.0) < tolerance;
      for (arma::uword j = 0; j < row.n_elem; ++j)
        banded = banded && (example.band.allows(i, j) || row(j) == 0.0);
    }
  return banded;
}

std::string decimals(const arma::rowvec& row) {
  std::string lines;
  for (arma::uword k = 0; k < row.n_elem; ++k)
    lines +=
        fmt::format("{}{:7.4f}", k % kNumbersPerLine == 0 ? (k == 0 ? "  " : "\n  ") : " ", row(k));
  return lines;
}

}  // namespace attn::ch12
