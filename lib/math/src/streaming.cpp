#include "attn/math/streaming.hpp"

#include "attn/math/validate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace attn {

namespace {

constexpr double kMinusInfinity = -std::numeric_limits<double>::infinity();

// One online-softmax step for one query and one block of its scores `s`:
// m ← max(m, max_j s_j), s_j ← e^{s_j − m}, ℓ ← e^{m_old − m} ℓ + Σ_j s_j. Returns e^{m_old − m},
// the factor that rescales what was accumulated against the old maximum.
//! [online-update]
double online_update(arma::rowvec& s, double& m, double& l) {
  const double m_new = std::max(m, s.max());
  s = arma::exp(s - m_new);
  const double alpha = std::exp(m - m_new);  // 0 on the first block, where m = −∞
  l = alpha * l + arma::accu(s);
  m = m_new;
  return alpha;
}
//! [online-update]

// Scores of the block that starts at query q0 and key k0 whose keys the mask hides: −∞.
void hide_masked(arma::mat& S, const StreamingMask& mask, arma::uword q0, arma::uword k0,
                 arma::uword keys) {
  for (arma::uword r = 0; r < S.n_rows; ++r) {
    const arma::uword end = allowed_keys(mask, q0 + r, keys);
    for (arma::uword j = end > k0 ? end - k0 : 0; j < S.n_cols; ++j)
      S(r, j) = kMinusInfinity;
  }
}

}  // namespace

arma::uword allowed_keys(const StreamingMask& mask, arma::uword row, arma::uword keys) {
  arma::uword end = mask.key_length > 0 ? std::min(mask.key_length, keys) : keys;
  if (mask.causal)
    end = std::min(end, row + 1);
  return end;
}

namespace {

// The checks of every streaming pass, written once for both precisions.
template <typename eT>
void streaming_inputs(const arma::Mat<eT>& Q, const arma::Mat<eT>& K, const arma::Mat<eT>& V,
                      double scale, const StreamingBlocks& blocks) {
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
  require_finite("streaming_attention: the scale", scale);
}

template <typename eT>
void no_overflow(const BasicStreamingAttention<eT>& result) {
  // Finite inputs can still give an infinite score c q·k; then Z would hold NaN.
  if (!result.log_sum_exp.is_finite() || !result.output.is_finite())
    throw InputError(
        "streaming_attention: a score c q·k overflowed to infinity; Q, K or the "
        "scale is too large");
}

}  // namespace

void require_streaming_inputs(const arma::mat& Q, const arma::mat& K, const arma::mat& V,
                              double scale, const StreamingBlocks& blocks) {
  streaming_inputs(Q, K, V, scale, blocks);
}

void require_streaming_inputs(const arma::fmat& Q, const arma::fmat& K, const arma::fmat& V,
                              double scale, const StreamingBlocks& blocks) {
  streaming_inputs(Q, K, V, scale, blocks);
}

void require_no_overflow(const StreamingAttention& result) {
  no_overflow(result);
}

void require_no_overflow(const StreamingAttentionF& result) {
  no_overflow(result);
}

StreamingAttention streaming_attention(const arma::mat& Q, const arma::mat& K, const arma::mat& V,
                                       double scale, const StreamingMask& mask,
                                       const StreamingBlocks& blocks) {
  require_streaming_inputs(Q, K, V, scale, blocks);
  //! [streaming]
  const arma::uword n = Q.n_rows;
  const arma::uword keys = K.n_rows;
  StreamingAttention result{arma::mat(n, V.n_cols), arma::vec(n)};
  for (arma::uword q0 = 0; q0 < n; q0 += blocks.queries) {
    const arma::uword q1 = std::min(n, q0 + blocks.queries);  // this block: queries [q0, q1)
    const arma::mat Qb = scale * Q.rows(q0, q1 - 1);
    arma::vec m(q1 - q0, arma::fill::value(kMinusInfinity));    // running maximum, per query
    arma::vec l(q1 - q0, arma::fill::zeros);                    // running sum of exponentials
    arma::mat O(q1 - q0, V.n_cols, arma::fill::zeros);          // unnormalised output
    const arma::uword last = allowed_keys(mask, q1 - 1, keys);  // no query here sees past it
    for (arma::uword k0 = 0; k0 < last; k0 += blocks.keys) {
      const arma::uword k1 = std::min(last, k0 + blocks.keys);  // keys [k0, k1)
      arma::mat S = Qb * K.rows(k0, k1 - 1).t();                // scores, (queries × keys)
      hide_masked(S, mask, q0, k0, keys);                       // masked scores: −∞
      const arma::vec m_new = arma::max(m, arma::max(S, 1));
      const arma::vec alpha = arma::exp(m - m_new);         // rescales the old sums
      const arma::mat P = arma::exp(S.each_col() - m_new);  // e^{s − m'}
      l = alpha % l + arma::sum(P, 1);
      O = (O.each_col() % alpha) + P * V.rows(k0, k1 - 1);
      m = m_new;
    }
    result.output.rows(q0, q1 - 1) = O.each_col() / l;  // divide once, at the end
    result.log_sum_exp.subvec(q0, q1 - 1) = m + arma::log(l);
  }
  //! [streaming]
  require_no_overflow(result);
  return result;
}

AttentionMemory attention_memory(arma::uword n, arma::uword m, arma::uword d_k, arma::uword d_v,
                                 const StreamingBlocks& blocks) {
  const double bytes = sizeof(double);
  return {3.0 * n * m * bytes, ((n + m) * d_k + (m + n) * d_v) * bytes,
          static_cast<double>(blocks.queries * blocks.keys) * bytes};
}

StreamingAttention merge(const StreamingAttention& a, const StreamingAttention& b) {
  if (a.output.n_rows != b.output.n_rows || a.output.n_cols != b.output.n_cols ||
      a.log_sum_exp.n_elem != a.output.n_rows || b.log_sum_exp.n_elem != b.output.n_rows)
    throw ShapeError(fmt::format("merge: outputs {} and {}, log-sum-exps of {} and {}",
                                 shape_of(a.output), shape_of(b.output), a.log_sum_exp.n_elem,
                                 b.log_sum_exp.n_elem));
  require_nonempty("merge: a.output", a.output);
  require_finite("merge: a.output", a.output);
  require_finite("merge: b.output", b.output);
  require_finite("merge: a.log_sum_exp", a.log_sum_exp);
  require_finite("merge: b.log_sum_exp", b.log_sum_exp);
  //! [merge]
  const arma::vec top = arma::max(a.log_sum_exp, b.log_sum_exp);
  const arma::vec wa = arma::exp(a.log_sum_exp - top), wb = arma::exp(b.log_sum_exp - top);
  const arma::vec both = wa + wb;  // e^{L − top}
  arma::mat Z = a.output.each_col() % (wa / both) + b.output.each_col() % (wb / both);
  return {std::move(Z), top + arma::log(both)};
  //! [merge]
}

arma::umat streaming_schedule(arma::uword n, arma::uword keys, const StreamingMask& mask,
                              const StreamingBlocks& blocks) {
  if (n == 0 || keys == 0 || blocks.queries == 0 || blocks.keys == 0)
    throw InputError("streaming_schedule: sizes and block sizes must be at least 1");
  const arma::uword rows = (n + blocks.queries - 1) / blocks.queries;
  const arma::uword cols = (keys + blocks.keys - 1) / blocks.keys;
  arma::umat plan(rows, cols);
  for (arma::uword b = 0; b < rows; ++b) {
    const arma::uword q0 = b * blocks.queries, q1 = std::min(n, q0 + blocks.queries);
    const arma::uword first_end = allowed_keys(mask, q0, keys),
                      last = allowed_keys(mask, q1 - 1, keys);
    for (arma::uword c = 0; c < cols; ++c) {
      const arma::uword k0 = c * blocks.keys, k1 = std::min(keys, k0 + blocks.keys);
      const BlockWork work = k0 >= last       ? BlockWork::skipped
                             : first_end < k1 ? BlockWork::partly_masked
                                              : BlockWork::whole;
      plan(b, c) = static_cast<arma::uword>(work);
    }
  }
  return plan;
}

std::vector<OnlineStep> online_softmax_steps(const arma::rowvec& scores, const arma::mat& V,
                                             arma::uword block) {
  require_nonempty("scores", scores);
  require_finite("scores", scores);
  require_finite("V", V);
  if (V.n_rows != scores.n_elem)
    throw ShapeError(
        fmt::format("online_softmax_steps: {} scores for V {}", scores.n_elem, shape_of(V)));
  if (block == 0)
    throw InputError("online_softmax_steps: a block holds at least one key");
  std::vector<OnlineStep> steps;
  double m = kMinusInfinity, l = 0.0;
  arma::rowvec O(V.n_cols, arma::fill::zeros);
  for (arma::uword k0 = 0; k0 < scores.n_elem; k0 += block) {
    const arma::uword k1 = std::min<arma::uword>(scores.n_elem, k0 + block);
    arma::rowvec e = scores.cols(k0, k1 - 1);
    const double alpha = online_update(e, m, l);  // e_j ← e^{s_j − m}
    O = alpha * O + e * V.rows(k0, k1 - 1);
    steps.push_back({m, l, O});
  }
  return steps;
}

template <typename eT>
BasicKVCache<eT>::BasicKVCache(arma::uword d_k, arma::uword d_v) : K_(16, d_k), V_(16, d_v) {
  if (d_k == 0 || d_v == 0)
    throw InputError("a KV cache needs keys and values at least 1 wide");
}

template <typename eT>
void BasicKVCache<eT>::append(const Row& k, const Row& v) {
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

template <typename eT>
typename BasicKVCache<eT>::Row BasicKVCache<eT>::attend(const Row& q, double scale) const {
  if (size_ == 0)
    throw InputError("the KV cache is empty: append a key and a value first");
  if (q.n_elem != K_.n_cols)
    throw ShapeError(fmt::format("a query of {} against keys of width {}", q.n_elem, K_.n_cols));
  require_finite("the query", q);
  require_finite("KVCache::attend: the scale", scale);
  const auto c = static_cast<eT>(scale);  // in the cache's precision
  //! [kv-cache]
  const Row s = c * (q * K_.rows(0, size_ - 1).t());  // (1 × t): O(t·d)
  const Row e = arma::exp(s - s.max());
  const Row z = (e * V_.rows(0, size_ - 1)) / arma::accu(e);  // (1 × d_v)
  //! [kv-cache]
  require_finite("the scores c q K^T", s);  // finite inputs can still overflow
  return z;
}

template class BasicKVCache<double>;
template class BasicKVCache<float>;

}  // namespace attn
