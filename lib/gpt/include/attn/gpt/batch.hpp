/// \file
/// \brief What a GPT trains on: token sequences packed into one batch, and windows drawn at
///        random from a long text (chapter 11's batches, nanoGPT's `get_batch`).
#pragma once

#include <attn/numpy/numpy_random.hpp>

#include <armadillo>

#include <vector>

namespace attn::gpt {

/// \brief Sentences laid end to end as one input, the way a batch is trained here.
///
/// Each sentence of \f$k\f$ tokens gives \f$k - 1\f$ rows: inputs \f$t_0 \dots t_{k-2}\f$ and
/// targets \f$t_1 \dots t_{k-1}\f$. The position-wise layers (embedding, layer norms, MLP,
/// unembedding) run on all rows at once; attention runs sentence by sentence, causal inside
/// each and blind to the others, which is what a block-diagonal causal mask over the whole
/// batch would compute, without the blocks that are all zero.
struct PackedBatch {
  arma::uvec tokens;   ///< `(N)`: the input tokens, sentence after sentence.
  arma::uvec targets;  ///< `(N)`: the token that follows each input token.
  arma::uvec starts;   ///< the first row of each sentence, from 0, increasing.
};

/// \brief Pack \p sentences (token ids) into one batch.
/// \param sentences each with at least 2 tokens. \return the batch.
/// \throws InputError if there is no sentence or one has fewer than 2 tokens.
PackedBatch pack_sentences(const std::vector<arma::uvec>& sentences);

/// \brief The position of each row in its own sentence: \f$i - \text{start}\f$.
/// \param rows \f$N\f$. \param starts as in PackedBatch. \return `(N)`.
/// \throws InputError unless \p starts begins with 0 and increases below \p rows.
arma::uvec positions_in_sentences(arma::uword rows, const arma::uvec& starts);

/// \brief The rows of one sequence in a packed batch, `first` to `last`.
struct SequenceRows {
  arma::uword first = 0;  ///< its first row.
  arma::uword last = 0;   ///< its last row.
  /// \brief How many rows it has. \return `last - first + 1`.
  [[nodiscard]] arma::uword count() const { return last - first + 1; }
};

/// \brief The rows of each sequence of a packed batch, from their first rows: the first
///        starts at row 0, and each ends where the next starts, the last at \p rows.
/// \param rows \f$N\f$. \param starts as in PackedBatch. \return one entry per sequence.
/// \throws InputError unless \p starts begins with 0 and increases below \p rows.
std::vector<SequenceRows> sequence_rows(arma::uword rows, const arma::uvec& starts);

/// \brief \p count windows of \p window + 1 tokens from \p tokens, window \f$b\f$ starting at
///        \f$\lfloor u_b\,(N - \text{window}) \rfloor\f$ with \f$u_b\f$ = `rng.random()`, drawn
///        in order: a training batch of inputs and their next tokens (pack_sentences()).
/// \param tokens the text, \f$N\f$ tokens. \param window the model's context, max_length.
/// \param count the batch's windows. \param rng the run's random stream (advanced).
/// \return the windows.
/// \throws InputError if \p tokens has no more than \p window tokens, or \p window is 0.
std::vector<arma::uvec> random_windows(const arma::uvec& tokens, arma::uword window,
                                       arma::uword count, numpy::Generator& rng);

}  // namespace attn::gpt
