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

namespace attn::math {

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

}  // namespace attn::math
