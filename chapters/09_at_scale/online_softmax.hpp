/// \file
/// \brief Chapter 09's views of the online softmax: its steps worked by hand for one query,
///        the plan of blocks a streaming pass computes or skips, and what attention holds in
///        memory, by formula. The pass itself is attn::math::streaming_attention().
#pragma once

#include <attn/math/streaming.hpp>

#include <armadillo>

#include <vector>

/// \brief Chapter 09's own material: the online softmax by hand, its plan and its memory.
namespace attn::ch09 {

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
                                 const math::StreamingBlocks& blocks = {});

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
arma::umat streaming_schedule(arma::uword n, arma::uword keys, const math::StreamingMask& mask,
                              const math::StreamingBlocks& blocks = {});

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

}  // namespace attn::ch09
