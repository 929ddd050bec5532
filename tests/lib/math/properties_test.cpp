// The math layer's promises, for every input RapidCheck can think of, not just the examples:
// random shapes (n = 1 included) and values, with scores as large as ±700 and as small as
// 1e-300 and the subnormals. A failing case shrinks to a small one, and RapidCheck prints the
// seed that reproduces it (RC_PARAMS="seed=..."); ctest fixes the seed and the case count
// (tests/CMakeLists.txt), so every run checks the same cases.
#include <attn/math/attention.hpp>
#include <attn/math/backward.hpp>
#include <attn/math/kv_cache.hpp>
#include <attn/math/mask.hpp>
#include <attn/math/multi_head.hpp>
#include <attn/math/softmax.hpp>
#include <attn/math/streaming.hpp>

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace {

// One entry of a score grid: mostly moderate, sometimes at the edge of exp()'s range, tiny or
// subnormal.
rc::Gen<double> score() {
  return rc::gen::weightedOneOf<double>({
      {6, rc::gen::map(rc::gen::inRange(-20000, 20001), [](int k) { return k / 1000.0; })},
      {2, rc::gen::map(rc::gen::inRange(-700000, 700001), [](int k) { return k / 1000.0; })},
      {1, rc::gen::element(700.0, -700.0, 1e-300, -1e-300, 4.9e-324, -4.9e-324, 0.0)},
  });
}

// An (rows × cols) matrix of scores.
arma::mat matrix(arma::uword rows, arma::uword cols) {
  const auto values = *rc::gen::container<std::vector<double>>(rows * cols, score());
  return arma::mat(values.data(), rows, cols);
}

// A moderate matrix, for products whose entries must stay far from overflow.
arma::mat moderate(arma::uword rows, arma::uword cols) {
  const auto values = *rc::gen::container<std::vector<double>>(
      rows * cols, rc::gen::map(rc::gen::inRange(-3000, 3001), [](int k) { return k / 1000.0; }));
  return arma::mat(values.data(), rows, cols);
}

arma::uword size(arma::uword at_most) {
  return *rc::gen::inRange<arma::uword>(1, at_most + 1);
}

double largest_difference(const arma::mat& a, const arma::mat& b) {
  return arma::abs(a - b).max();
}

}  // namespace

RC_GTEST_PROP(SoftmaxProperties, RowsArePositiveOrZeroAndSumToOne, ()) {
  const arma::mat S = matrix(size(6), size(9));
  const arma::mat W = attn::math::softmax_rows(S);
  RC_ASSERT(W.is_finite());
  RC_ASSERT(W.min() >= 0.0);
  RC_ASSERT(arma::abs(arma::sum(W, 1) - 1.0).max() <= 1e-12);
}

RC_GTEST_PROP(SoftmaxProperties, AddingAConstantToARowChangesNothing, ()) {
  const arma::mat S = matrix(size(6), size(9));
  const double c =
      *rc::gen::map(rc::gen::inRange(-500000, 500001), [](int k) { return k / 1000.0; });
  arma::mat shifted = S;
  shifted.row(0) += c;
  RC_ASSERT(largest_difference(attn::math::softmax_rows(shifted), attn::math::softmax_rows(S)) <=
            1e-12);
}

RC_GTEST_PROP(AttentionProperties, PermutingTheTokensPermutesTheOutput, ()) {
  // Without positions attention cannot tell the order: Z(P X) = P Z(X).
  const arma::uword n = size(7), d = size(5);
  const arma::mat Q = moderate(n, d), K = moderate(n, d), V = moderate(n, d);
  const auto order = *rc::gen::container<std::vector<int>>(n, rc::gen::arbitrary<int>());
  const arma::uvec p = arma::sort_index(arma::conv_to<arma::vec>::from(order));
  const arma::mat Z = attn::math::attend(Q, K, V, 0.5).output;
  const arma::mat Zp = attn::math::attend(Q.rows(p), K.rows(p), V.rows(p), 0.5).output;
  RC_ASSERT(largest_difference(Zp, Z.rows(p)) <= 1e-12);
}

RC_GTEST_PROP(MaskProperties, MaskedWeightsAreExactlyZero, ()) {
  const arma::uword n = size(8);
  const arma::mat S = matrix(n, n);
  const arma::mat W = attn::math::masked_softmax_rows(S, attn::math::Mask::causal(n));
  for (arma::uword i = 0; i < n; ++i) {
    for (arma::uword j = i + 1; j < n; ++j)
      RC_ASSERT(W(i, j) == 0.0);
  }
  RC_ASSERT(W(0, 0) == 1.0);
  RC_ASSERT(arma::abs(arma::sum(W, 1) - 1.0).max() <= 1e-12);
}

RC_GTEST_PROP(MultiHeadProperties, EqualsTheHeadsConcatenated, ()) {
  const arma::uword heads = size(4), d_k = size(3), d = heads * d_k, n = size(6), m = size(6);
  attn::math::MultiHeadWeights W;
  W.heads = heads;
  W.W_Q = moderate(d, d);
  W.W_K = moderate(d, d);
  W.W_V = moderate(d, d);
  W.W_O = moderate(d, d);
  const arma::mat Xq = moderate(n, d), Xkv = moderate(m, d);
  const attn::math::MultiHead all = attn::math::multi_head_attention(Xq, Xkv, Xkv, W);
  std::vector<arma::mat> outputs;
  for (arma::uword h = 0; h < heads; ++h) {
    const arma::span cols(h * d_k, (h + 1) * d_k - 1);
    outputs.push_back(attn::math::attend(Xq * W.W_Q.cols(cols), Xkv * W.W_K.cols(cols),
                                         Xkv * W.W_V.cols(cols), 1.0 / std::sqrt(double(d_k)))
                          .output);
  }
  RC_ASSERT(largest_difference(all.output, attn::math::concat_heads(outputs) * W.W_O) <= 1e-10);
}

RC_GTEST_PROP(StreamingProperties, EqualsTheReference, ()) {
  const arma::uword n = size(40), m = size(40), d = size(6);
  const arma::mat Q = moderate(n, d), K = moderate(m, d), V = moderate(m, d);
  const attn::math::StreamingBlocks blocks{size(9), size(9)};
  const auto streamed = attn::math::streaming_attention(Q, K, V, 0.7, {}, blocks);
  RC_ASSERT(largest_difference(streamed.output, attn::math::attend(Q, K, V, 0.7).output) <= 1e-12);
}

RC_GTEST_PROP(StreamingProperties, TheKvCacheEqualsCausalAttention, ()) {
  const arma::uword n = size(12), d = size(5);
  const arma::mat Q = moderate(n, d), K = moderate(n, d), V = moderate(n, d);
  const arma::mat full = attn::math::attend(Q, K, V, 0.5, attn::math::Mask::causal(n)).output;
  attn::math::KVCache cache(d, d);
  for (arma::uword t = 0; t < n; ++t) {
    cache.append(K.row(t), V.row(t));
    RC_ASSERT(largest_difference(cache.attend(Q.row(t), 0.5), full.row(t)) <= 1e-12);
  }
}

RC_GTEST_PROP(BackwardProperties, SoftmaxBackwardMatchesFiniteDifferences, ()) {
  const arma::uword m = size(7);
  const arma::rowvec s = moderate(1, m), g = moderate(1, m);
  const arma::rowvec ds = attn::math::softmax_rows_backward(attn::math::softmax(s), g);
  const double h = 1e-6;
  for (arma::uword j = 0; j < m; ++j) {
    arma::rowvec up = s, down = s;
    up(j) += h;
    down(j) -= h;
    const double numeric =
        arma::dot(g, attn::math::softmax(up) - attn::math::softmax(down)) / (2 * h);
    RC_ASSERT(std::abs(ds(j) - numeric) <= 1e-7);
  }
}
