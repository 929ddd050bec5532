/// \file
/// \brief Chapter 11's exercises: one merge of BPE training, and top-p (nucleus) filtering.
#pragma once

#include <attn/text/bpe.hpp>

#include <armadillo>

#include <cstddef>
#include <optional>
#include <vector>

namespace attn::exercises {

/// \brief One distinct piece of a training text, as its tokens, and how many times the text
///        holds it (exercise 11.1).
///
/// attn::text::pretokenize() cuts the text into pieces; a merge never joins two of them, so
/// training counts each distinct piece once and weighs its pairs by its count. Before the first
/// merge a piece's tokens are its bytes, each token id the byte's value (0 to 255).
struct CountedPiece {
  std::vector<attn::text::TokenId> tokens;  ///< the piece's tokens, left to right.
  std::size_t count = 1;  ///< how many times the text holds the piece, at least 1.
};

/// \brief Exercise 11.1: one merge of BPE training.
///
/// Training a byte-level BPE tokenizer, attn::text::train_bpe(), repeats one step: count the
/// adjacent pairs of tokens, make the most frequent pair a new token, and put the new token in
/// the pair's place. Write that step on \p pieces, the distinct pieces of a training text:
/// 1. count every adjacent pair \f$(a, b)\f$ of every piece, at every position (the piece `zzz`
///    holds \f$(z, z)\f$ twice), times the piece's count;
/// 2. choose the pair counted most; of pairs counted equally, the one whose left id is
///    smallest, then the one whose right id is smallest;
/// 3. in every piece, replace each occurrence of that pair by the one token \p new_id, left to
///    right: `zzz` becomes (\p new_id, z) and `zzzz` becomes (\p new_id, \p new_id).
///
/// Return the pair chosen, or std::nullopt, leaving \p pieces as they are, when no piece has two
/// tokens left. For example (Hugging Face's course on tokenizers), the pieces `hug` 10 times,
/// `pug` 5, `pun` 12, `bun` 4 and `hugs` 5, as bytes, hold (u, g) 20 times, (p, u) 17, (u, n)
/// 16, (h, u) 15, (g, s) 5 and (b, u) 4: the step returns (u, g), the bytes 117 and 103, and
/// with \p new_id 256 `hug` becomes (h, 256) and `hugs` becomes (h, 256, s). The test checks
/// that example and the tie-breaks by hand; then it runs your step again and again, from the
/// bytes on, on random texts and on a page of English, and holds every pair you choose to the
/// merge train_bpe() learns from the same text at the same rank, and every piece's final tokens
/// to what the trained tokenizer's encode() makes of it.
///
/// \param pieces the distinct pieces with their counts; changed in place: every occurrence of
///        the pair chosen becomes \p new_id.
/// \param new_id the new token's id (train_bpe() gives merge \f$k\f$, from 0, the id
///        \f$256 + k\f$).
/// \return the pair merged (attn::text::Merge: its left and right token), or std::nullopt if no
///         piece has two tokens.
///
/// \par Hint
/// Count into a `std::map<std::pair<TokenId, TokenId>, std::size_t>`: it keeps its keys in
/// order of left id, then right id, so walking it from the start and taking a pair only when
/// its count is strictly larger than the best so far gives the tie-break for free. To replace,
/// build each piece anew: at position \f$i\f$, if tokens \f$i\f$ and \f$i + 1\f$ are the pair,
/// push \p new_id and move on by two, otherwise push token \f$i\f$ and move on by one.
std::optional<attn::text::Merge> bpe_merge_step(std::vector<CountedPiece>& pieces,
                                                attn::text::TokenId new_id);

/// \brief Exercise 11.2: top-p (nucleus) filtering.
///
/// Top-p sampling (Holtzman et al. 2020, "The Curious Case of Neural Text Degeneration") draws
/// the next token only from the nucleus, the fewest most likely tokens whose probabilities add
/// up to at least \f$p\f$, so that the long tail of unlikely tokens, each rare but many
/// together, cannot send the text astray. Given \p probabilities \f$q\f$ over the vocabulary,
/// rank the tokens by probability, largest first, equal probabilities by index (a stable sort,
/// descending): \f$t_1, t_2\f$ and so on. With \f$c_j\f$ the mass of the first \f$j\f$ of them
/// (summed in that order; \f$c_0 = 0\f$), keep \f$t_j\f$ if and only if \f$c_{j-1} < p\f$: the
/// smallest prefix whose mass reaches \f$p\f$, the token that crosses \f$p\f$ included, so
/// \f$t_1\f$ is always kept and a prefix whose mass is exactly \f$p\f$ is complete. Return a row
/// in the tokens' own order: 0 for every token dropped, and for every token kept its
/// probability divided by the sum of the kept ones. \f$p = 1\f$ keeps every token. A \p p outside
/// \f$(0, 1]\f$, NaN included, must throw std::invalid_argument.
///
/// For example, \f$q = (1/8, 1/4, 1/2, 1/8)\f$ and \f$p = 3/4\f$ keep tokens 2 and 1, whose
/// mass is exactly \f$3/4\f$, and give \f$(0, 1/3, 2/3, 0)\f$. The test checks that example, ties,
/// the first token and the bad values of \p p by hand, then holds your row to
/// attn::math::next_token_distribution() with the same top_p, the filter the chapter samples its
/// last text with, on hundreds of random logits, temperatures and top-k.
///
/// \param probabilities \f$q\f$ `(1 × V)`: non-negative, summing to 1, as
///        attn::math::next_token_distribution() returns.
/// \param p the mass the nucleus must reach, in \f$(0, 1]\f$.
/// \return `(1 × V)`: the nucleus, renormalised, in the order of \p probabilities.
///
/// \par Hint
/// `arma::stable_sort_index(probabilities, "descend")` gives the order \f$t\f$. Walk it with
/// the mass so far, starting at 0: while that mass is still below \f$p\f$, keep the token and
/// add its probability; the first token reached with the mass already at \f$p\f$ or more, and
/// every one after it, is dropped. Then divide the kept entries by their sum.
arma::rowvec top_p_filter(const arma::rowvec& probabilities, double p);

}  // namespace attn::exercises
