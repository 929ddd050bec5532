#include "attn/math/streaming.hpp"

#include "attn/math/validate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace attn::math {

namespace {

constexpr double kMinusInfinity = -std::numeric_limits<double>::infinity();

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

}  // namespace attn::math
