/// \file
/// \brief Attention at scale: the online softmax (Milakov and Gimelshein 2018; FlashAttention,
///        Dao et al. 2022), which never holds the \f$n \times m\f$ score grid.
///
/// Keys are visited in blocks. For each query the pass keeps a running maximum \f$m\f$, a
/// running sum \f$\ell\f$ of exponentials and an unnormalised output \f$O\f$. A block with
/// scores \f$s_j\f$ updates them as
///
/// \f[ m' = \max(m, \max_j s_j), \quad \ell' = e^{m - m'} \ell + \sum_j e^{s_j - m'}, \quad
///     O' = e^{m - m'} O + \sum_j e^{s_j - m'} v_j, \f]
///
/// and at the end the output is \f$O / \ell\f$ (divided once, as FlashAttention-2 does) and the
/// log-sum-exp of the row's scores is \f$m + \log \ell\f$. Beyond its inputs and its output the
/// pass holds, per thread, one block of queries, scores and outputs: memory \f$O((n + m)\,d)\f$
/// in all, never \f$O(n\,m)\f$.
#pragma once

#include <armadillo>

#include <vector>

namespace attn {

/// \brief Which keys a query may attend to, described by rule rather than by a grid (a grid
///        for \f$n = 65536\f$ would itself take gigabytes).
struct StreamingMask {
  bool causal = false;         ///< query \f$i\f$ attends to keys \f$j \le i\f$ only.
  arma::uword key_length = 0;  ///< keys from this index on are padding; 0 means none is.
};

/// \brief How the keys and queries are cut into blocks.
struct StreamingBlocks {
  arma::uword queries = 128;  ///< query rows per block (a thread's unit of work).
  arma::uword keys = 256;     ///< key rows per block: the scores, 256 × 128 doubles, fit in L2.
};

/// \brief What the streaming pass returns, in the precision of its inputs.
/// \tparam eT `double` (StreamingAttention) or `float` (StreamingAttentionF).
template <typename eT>
struct BasicStreamingAttention {
  arma::Mat<eT> output;       ///< `Z: (n × d_v)`, equal to attend()'s output.
  arma::Col<eT> log_sum_exp;  ///< `(n)`: \f$\log \sum_j e^{s_{ij}}\f$ over the allowed keys.
};

/// What the streaming pass returns in double precision (Armadillo's `mat`).
using StreamingAttention = BasicStreamingAttention<double>;
/// What attn::fast::streaming_attention() returns in single precision (Armadillo's `fmat`).
using StreamingAttentionF = BasicStreamingAttention<float>;

/// \brief \f$Z = \mathrm{softmax}(c\,Q K^\top)\,V\f$, computed block by block with the online
///        softmax; the score grid is never formed.
///
/// The readable form: one block of queries at a time, each block's scores, maxima and
/// exponentials as Armadillo expressions. attn::fast::streaming_attention() computes the same
/// numbers with BLAS calls on the blocks in place, a vectorised exponential and one thread per
/// block of queries.
/// \param Q `(n × d_k)`. \param K `(m × d_k)`. \param V `(m × d_v)`. \param scale \f$c\f$.
/// \param mask which keys each query may attend to; blocks that are wholly masked are skipped.
/// \param blocks the block sizes.
/// \return the output and each row's log-sum-exp.
/// \throws ShapeError if the shapes do not fit (the message names both shapes).
/// \throws InputError if \p Q, \p K or \p V is empty or holds a NaN or an infinity (it is
///         named), if \p scale is not finite, if a block size is 0, or if a score overflows
///         to infinity. (A StreamingMask always lets every query see key 0, so no row can be
///         left with no key, as a grid mask can.)
StreamingAttention streaming_attention(const arma::mat& Q, const arma::mat& K, const arma::mat& V,
                                       double scale, const StreamingMask& mask = {},
                                       const StreamingBlocks& blocks = {});

/// \brief How many keys query \p row may attend to: it sees keys `[0, allowed_keys(...))`.
/// \param mask the rule. \param row the query's index. \param keys the number of keys.
/// \return at least 1 when \p keys is at least 1 (key 0 is never hidden). Never throws.
arma::uword allowed_keys(const StreamingMask& mask, arma::uword row, arma::uword keys);

/// \brief The checks streaming_attention() makes before it computes anything, for every form
///        of it (attn::fast's too), so that each checks its inputs once, in the same words.
/// \param Q,K,V the inputs. \param scale \f$c\f$. \param blocks the block sizes.
/// \throws ShapeError and InputError as streaming_attention() says.
void require_streaming_inputs(const arma::mat& Q, const arma::mat& K, const arma::mat& V,
                              double scale, const StreamingBlocks& blocks);
/// \brief require_streaming_inputs() for float inputs, in the same words.
/// \param Q,K,V the inputs. \param scale \f$c\f$. \param blocks the block sizes.
/// \throws ShapeError and InputError as streaming_attention() says.
void require_streaming_inputs(const arma::fmat& Q, const arma::fmat& K, const arma::fmat& V,
                              double scale, const StreamingBlocks& blocks);

/// \brief The check every form of streaming_attention() makes on its result: finite inputs
///        can still give a score \f$c\,q \cdot k\f$ that overflows to infinity.
/// \param result the output and log-sum-exps of a streaming pass.
/// \throws InputError if the output or a log-sum-exp is not finite.
void require_no_overflow(const StreamingAttention& result);
/// \brief require_no_overflow() for a float result. \param result its output and log-sum-exps.
/// \throws InputError if the output or a log-sum-exp is not finite.
void require_no_overflow(const StreamingAttentionF& result);

/// \brief Bytes of memory, by formula, of attention on `n` queries and `m` keys.
struct AttentionMemory {
  /// attend(): the scores, their exponentials and the weights, \f$3\,n\,m\f$ doubles.
  double reference_grids = 0.0;
  /// streaming_attention(): Q, K, V and Z, \f$(n + m)\,d_k + (m + n)\,d_v\f$ doubles.
  double streaming_data = 0.0;
  /// streaming_attention(), per thread: one block of scores, queries × keys doubles.
  double streaming_block = 0.0;
};

/// \brief What attend() and streaming_attention() hold, by formula.
/// \param n queries. \param m keys. \param d_k,d_v widths. \param blocks the block sizes.
/// \return the three figures, in bytes; a size of 0 gives 0 bytes. Never throws.
AttentionMemory attention_memory(arma::uword n, arma::uword m, arma::uword d_k, arma::uword d_v,
                                 const StreamingBlocks& blocks = {});

/// \brief Attention over all the keys from attention over two disjoint sets of them: how
///        several machines, each holding some of the keys, combine their results.
///
/// With \f$L = \log(e^{\mathrm{lse}_1} + e^{\mathrm{lse}_2})\f$ per row,
/// \f$Z = e^{\mathrm{lse}_1 - L} Z_1 + e^{\mathrm{lse}_2 - L} Z_2\f$ and the log-sum-exp is
/// \f$L\f$: the online softmax's update, applied to two finished parts.
/// \param a,b the same queries against two sets of keys: outputs `(n × d_v)`, log-sum-exps `(n)`.
/// \return the queries against both sets.
/// \throws ShapeError if the two do not have the same shapes (all four are named).
/// \throws InputError if the outputs are empty, or an output or a log-sum-exp holds a NaN or
///         an infinity (it is named).
StreamingAttention merge(const StreamingAttention& a, const StreamingAttention& b);

/// \brief The work the streaming pass does on one block of keys for one block of queries.
enum class BlockWork : arma::uword {
  skipped = 0,        ///< every pair in it is masked: never computed.
  partly_masked = 1,  ///< computed, with its masked scores set to \f$-\infty\f$.
  whole = 2,          ///< computed, nothing masked.
};

/// \brief The plan of a streaming pass: for each block of queries (rows) and block of keys
///        (columns), the BlockWork done there, as its number.
/// \param n queries. \param keys keys. \param mask the rule. \param blocks the block sizes.
/// \return `(⌈n / blocks.queries⌉ × ⌈keys / blocks.keys⌉)`.
/// \throws InputError if a size or block size is 0.
arma::umat streaming_schedule(arma::uword n, arma::uword keys, const StreamingMask& mask,
                              const StreamingBlocks& blocks = {});

/// \brief One step of the online softmax for one query, for showing the recurrence by hand.
struct OnlineStep {
  double m;        ///< the running maximum after the block.
  double l;        ///< the running sum \f$\ell\f$ after the block.
  arma::rowvec O;  ///< the unnormalised output after the block, `(1 × d_v)`.
};

/// \brief The online softmax of one row of scores against \p V, block by block.
/// \param scores `(1 × m)`. \param V `(m × d_v)`. \param block keys per block.
/// \return one step per block; the output is `back().O / back().l`.
/// \throws ShapeError if \p V does not have one row per score.
/// \throws InputError if \p scores is empty or \p scores or \p V holds a NaN or an infinity
///         (it is named), or if \p block is 0.
std::vector<OnlineStep> online_softmax_steps(const arma::rowvec& scores, const arma::mat& V,
                                             arma::uword block);

/// \brief The keys and values of the tokens decoded so far, so that each new token attends
///        with one query instead of recomputing the whole sentence.
///
/// Step \f$t\f$ appends \f$k_t, v_t\f$ and computes
/// \f$z_t = \mathrm{softmax}(c\, q_t K_{\le t}^\top)\, V_{\le t}\f$: \f$O(t\,d)\f$ work, and row
/// \f$t\f$ of full causal attention. Storage grows by doubling.
/// \tparam eT `double` (KVCache) or `float` (KVCacheF): the precision of what is stored and
///         computed.
template <typename eT>
class BasicKVCache {
 public:
  /// A row of keys, values, queries or outputs in this precision.
  using Row = arma::Row<eT>;
  /// \brief An empty cache. \param d_k key width. \param d_v value width.
  /// \throws InputError if a width is 0.
  BasicKVCache(arma::uword d_k, arma::uword d_v);
  /// \brief Stores one token's key and value. \param k `(1 × d_k)`. \param v `(1 × d_v)`.
  /// \throws ShapeError if a width differs.
  /// \throws InputError if \p k or \p v holds a NaN or an infinity.
  void append(const Row& k, const Row& v);
  /// \brief The number of tokens cached. \return \f$t\f$.
  arma::uword size() const { return size_; }
  /// \brief One query against every cached key.
  /// \param q `(1 × d_k)`. \param scale \f$c\f$.
  /// \return \f$z = \mathrm{softmax}(c\, q K^\top) V\f$, `(1 × d_v)`.
  /// \throws InputError if the cache is empty, \p q holds a NaN or an infinity, \p scale is not
  ///         finite or a score overflows to infinity.
  /// \throws ShapeError if \p q is not as wide as the keys.
  Row attend(const Row& q, double scale) const;

 private:
  arma::Mat<eT> K_, V_;  // rows [0, size_) are in use
  arma::uword size_ = 0;
};

/// The KV cache in double precision.
using KVCache = BasicKVCache<double>;
/// The KV cache in single precision.
using KVCacheF = BasicKVCache<float>;

extern template class BasicKVCache<double>;
extern template class BasicKVCache<float>;

}  // namespace attn
