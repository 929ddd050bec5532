#include "attn/streaming.hpp"

#include "attn/validate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attn {

namespace {

constexpr double kMinusInfinity = -std::numeric_limits<double>::infinity();

// The last key query `row` may attend to, plus one (0 if none).
arma::uword allowed_end(const StreamingMask& mask, arma::uword row, arma::uword keys) {
  arma::uword end = mask.key_length > 0 ? std::min(mask.key_length, keys) : keys;
  if (mask.causal) end = std::min(end, row + 1);
  return end;
}

// One online-softmax update of a block of query rows [q0, q1) by a block of keys [k0, k1).
// S is the block's scaled scores; entries past each row's allowed end are left out.
void update(arma::mat S, arma::uword q0, arma::uword k0, const arma::mat& V_block,
            const StreamingMask& mask, arma::uword keys, arma::vec& m, arma::vec& l, arma::mat& O) {
  for (arma::uword r = 0; r < S.n_rows; ++r) {
    const arma::uword end = allowed_end(mask, q0 + r, keys);
    for (arma::uword c = end > k0 ? end - k0 : 0; c < S.n_cols; ++c) S(r, c) = kMinusInfinity;
  }
  const arma::vec block_max = arma::max(S, 1);
  const arma::vec m_new = arma::max(m, block_max);
  // A row whose keys are all masked so far keeps m = −∞; its factors are taken as 0 and 1.
  arma::vec alpha(m.n_elem);
  for (arma::uword r = 0; r < m.n_elem; ++r)
    alpha(r) = std::isinf(m_new(r)) ? 1.0 : std::exp(m(r) - m_new(r));
  S.each_col() -= m_new;
  S.transform([](double s) { return std::isnan(s) ? 0.0 : std::exp(s); });  // −∞ − −∞ is NaN
  l = alpha % l + arma::sum(S, 1);
  O.each_col() %= alpha;
  O += S * V_block;
  m = m_new;
}

}  // namespace

//! [streaming]
StreamingAttention streaming_attention(const arma::mat& Q, const arma::mat& K, const arma::mat& V,
                                       double scale, const StreamingMask& mask,
                                       const StreamingBlocks& blocks) {
  require_nonempty("Q", Q);
  require_nonempty("K", K);
  require_nonempty("V", V);
  require_finite("Q", Q);
  require_finite("K", K);
  require_finite("V", V);
  require_same_cols("Q K^T", "Q", Q, "K", K);
  require_same_rows("output = W V", "K", K, "V", V);
  if (blocks.queries == 0 || blocks.keys == 0)
    throw InputError("streaming_attention: blocks must hold at least one query and one key");
  for (arma::uword i = 0; i < Q.n_rows; ++i)
    if (allowed_end(mask, i, K.n_rows) == 0)
      throw InputError(fmt::format("query row {} may attend to no key: every key is masked", i));

  const arma::uword n = Q.n_rows, keys = K.n_rows;
  StreamingAttention result{arma::mat(n, V.n_cols), arma::vec(n)};
  const arma::uword query_blocks = (n + blocks.queries - 1) / blocks.queries;
#pragma omp parallel for schedule(dynamic)
  for (arma::uword b = 0; b < query_blocks; ++b) {
    const arma::uword q0 = b * blocks.queries, q1 = std::min(n, q0 + blocks.queries);
    const arma::mat Qb = Q.rows(q0, q1 - 1) * scale;       // (bq × d_k), scaled once
    arma::vec m(q1 - q0, arma::fill::value(kMinusInfinity)), l(q1 - q0, arma::fill::zeros);
    arma::mat O(q1 - q0, V.n_cols, arma::fill::zeros);
    const arma::uword last = allowed_end(mask, q1 - 1, keys);  // no row of the block sees past it
    for (arma::uword k0 = 0; k0 < last; k0 += blocks.keys) {   // wholly masked blocks: skipped
      const arma::uword k1 = std::min(last, k0 + blocks.keys);
      update(Qb * K.rows(k0, k1 - 1).t(), q0, k0, V.rows(k0, k1 - 1), mask, keys, m, l, O);
    }
    O.each_col() /= l;                                     // divide once, at the end
    result.output.rows(q0, q1 - 1) = O;
    result.log_sum_exp.subvec(q0, q1 - 1) = m + arma::log(l);
  }
  return result;
}
//! [streaming]

std::vector<OnlineStep> online_softmax_steps(const arma::rowvec& scores, const arma::mat& V,
                                             arma::uword block) {
  require_nonempty("scores", scores);
  require_finite("scores", scores);
  require_finite("V", V);
  if (V.n_rows != scores.n_elem)
    throw ShapeError(fmt::format("online_softmax_steps: {} scores for V {}", scores.n_elem,
                                 shape_of(V)));
  if (block == 0) throw InputError("online_softmax_steps: a block holds at least one key");
  std::vector<OnlineStep> steps;
  arma::vec m(1, arma::fill::value(kMinusInfinity)), l(1, arma::fill::zeros);
  arma::mat O(1, V.n_cols, arma::fill::zeros);
  for (arma::uword k0 = 0; k0 < scores.n_elem; k0 += block) {
    const arma::uword k1 = std::min<arma::uword>(scores.n_elem, k0 + block);
    update(scores.cols(k0, k1 - 1), 0, k0, V.rows(k0, k1 - 1), {}, scores.n_elem, m, l, O);
    steps.push_back({m(0), l(0), O.row(0)});
  }
  return steps;
}

KVCache::KVCache(arma::uword d_k, arma::uword d_v) : K_(16, d_k), V_(16, d_v) {
  if (d_k == 0 || d_v == 0) throw InputError("a KV cache needs keys and values at least 1 wide");
}

void KVCache::append(const arma::rowvec& k, const arma::rowvec& v) {
  if (k.n_elem != K_.n_cols || v.n_elem != V_.n_cols)
    throw ShapeError(fmt::format("KV cache of widths {} and {}: a key of {} and a value of {}",
                                 K_.n_cols, V_.n_cols, k.n_elem, v.n_elem));
  require_finite("the key", k);
  require_finite("the value", v);
  if (size_ == K_.n_rows) {  // full: double the storage
    K_.resize(2 * K_.n_rows, K_.n_cols);
    V_.resize(2 * V_.n_rows, V_.n_cols);
  }
  K_.row(size_) = k;
  V_.row(size_) = v;
  ++size_;
}

//! [kv-cache]
arma::rowvec KVCache::attend(const arma::rowvec& q, double scale) const {
  if (size_ == 0) throw InputError("the KV cache is empty: append a key and a value first");
  if (q.n_elem != K_.n_cols)
    throw ShapeError(fmt::format("a query of {} against keys of width {}", q.n_elem, K_.n_cols));
  require_finite("the query", q);
  const arma::rowvec s = scale * (q * K_.rows(0, size_ - 1).t());  // (1 × t): O(t·d)
  const arma::rowvec e = arma::exp(s - s.max());
  return (e * V_.rows(0, size_ - 1)) / arma::accu(e);               // (1 × d_v)
}
//! [kv-cache]

}  // namespace attn
