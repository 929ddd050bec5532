/// \file
/// \brief The KV cache: a decoder's keys and values so far, so that each new token attends
///        with one query (chapter 09 shows it; attn::gpt's decoder steps through it).
#pragma once

#include <armadillo>

#include <algorithm>

namespace attn::math {

/// \brief The keys and values of the tokens decoded so far, so that each new token attends
///        with one query instead of recomputing the whole sentence.
///
/// Step \f$t\f$ appends \f$k_t, v_t\f$ and computes
/// \f$z_t = \mathrm{softmax}(c\, q_t K_{\le t}^\top)\, V_{\le t}\f$: \f$O(t\,d)\f$ work
/// (\f$O(w\,d)\f$ at most with a window), and row \f$t\f$ of full causal attention. Storage grows
/// by doubling.
///
/// With a window \f$w\f$ (a sliding-window model such as Mistral 7B) the cache holds only the
/// last \f$w\f$ keys and values, row \f$t\f$ of attention under Mask::causal_window(): a new
/// token overwrites the one \f$w\f$ steps older, in a ring of \f$w\f$ rows, and the memory
/// stops growing at \f$w\f$ tokens. The ring is never rotated into order:
/// \f$\mathrm{softmax}(c\,qK^\top)V\f$ is a weighted sum over (key, value) pairs, so moving rows
/// of \f$K\f$ and \f$V\f$ together changes nothing but rounding; and a key's position is
/// already in it (with RoPE, the key is turned before it is cached), not in its row.
/// \tparam eT `double` (KVCache) or `float` (KVCacheF): the precision of what is stored and
///         computed.
template <typename eT>
class BasicKVCache {
 public:
  /// A row of keys, values, queries or outputs in this precision.
  using Row = arma::Row<eT>;
  /// \brief An empty cache. \param d_k key width. \param d_v value width.
  /// \param window \f$w\f$, the most tokens it holds, or 0 to hold every token.
  /// \throws InputError if a width is 0.
  BasicKVCache(arma::uword d_k, arma::uword d_v, arma::uword window = 0);
  /// \brief Stores one token's key and value. \param k `(1 × d_k)`. \param v `(1 × d_v)`.
  /// \throws ShapeError if a width differs.
  /// \throws InputError if \p k or \p v holds a NaN or an infinity.
  void append(const Row& k, const Row& v);
  /// \brief The number of tokens appended so far. \return \f$t\f$.
  arma::uword size() const { return size_; }
  /// \brief The number of tokens whose keys and values are held: \f$t\f$, or at most \f$w\f$
  ///        with a window. \return the rows attend() reads.
  arma::uword held() const { return window_ == 0 ? size_ : std::min(size_, window_); }
  /// \brief The bytes of the keys and values held: held() \f$\times (d_k + d_v) \times\f$
  ///        `sizeof(eT)`. \return the count (storage reserved ahead by doubling not included).
  arma::uword bytes() const { return held() * (K_.n_cols + V_.n_cols) * sizeof(eT); }
  /// \brief One query against every cached key.
  /// \param q `(1 × d_k)`. \param scale \f$c\f$.
  /// \return \f$z = \mathrm{softmax}(c\, q K^\top) V\f$, `(1 × d_v)`.
  /// \throws InputError if the cache is empty, \p q holds a NaN or an infinity, \p scale is not
  ///         finite or a score overflows to infinity.
  /// \throws ShapeError if \p q is not as wide as the keys.
  Row attend(const Row& q, double scale) const;

 private:
  arma::Mat<eT> K_, V_;  // rows [0, held()) are in use
  arma::uword window_ = 0;
  arma::uword size_ = 0;
};

/// The KV cache in double precision.
using KVCache = BasicKVCache<double>;
/// The KV cache in single precision.
using KVCacheF = BasicKVCache<float>;

extern template class BasicKVCache<double>;
extern template class BasicKVCache<float>;

}  // namespace attn::math
