#include "attn/math/kv_cache.hpp"

#include "attn/math/validate.hpp"

#include <fmt/format.h>

namespace attn::math {

template <typename eT>
BasicKVCache<eT>::BasicKVCache(arma::uword d_k, arma::uword d_v, arma::uword window)
    : K_(window == 0 ? 16 : std::min<arma::uword>(16, window), d_k),
      V_(window == 0 ? 16 : std::min<arma::uword>(16, window), d_v),
      window_(window) {
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
  //! [kv-cache-append]
  const arma::uword row = window_ == 0 ? size_ : size_ % window_;  // a window is a ring
  if (row == K_.n_rows) {  // full: double the storage, up to the window
    const arma::uword rows = window_ == 0 ? 2 * K_.n_rows : std::min(2 * K_.n_rows, window_);
    K_.resize(rows, K_.n_cols);
    V_.resize(rows, V_.n_cols);
  }
  K_.row(row) = k;
  V_.row(row) = v;
  ++size_;
  //! [kv-cache-append]
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
  const Row s = c * (q * K_.rows(0, held() - 1).t());  // (1 × t): O(t·d)
  const Row e = arma::exp(s - s.max());
  const Row z = (e * V_.rows(0, held() - 1)) / arma::accu(e);  // (1 × d_v)
  //! [kv-cache]
  require_finite("the scores c q K^T", s);  // finite inputs can still overflow
  return z;
}

template class BasicKVCache<double>;
template class BasicKVCache<float>;

}  // namespace attn::math
