/// \file
/// \brief Chapter 02's exercises: raw attention on the Nimbus question, token by token.
#pragma once

#include <armadillo>

#include <string>
#include <vector>

namespace attn::exercises {

/// \brief Exercise 2.1: which other word does a word lean on most?
///
/// \p E has one raw embedding per row and \p tokens names the rows. Return the token, other
/// than \p token itself, that gets the largest raw-attention weight in \p token's row. For
/// "Why did my Nimbus export fail?" chapter 02 prints that export leans most on fail (0.48) and
/// fail most on export (0.33); the test asks for those and for "why". A word that is not in
/// \p tokens must throw std::invalid_argument whose message lists every valid token, so that a
/// typo tells the reader what to type instead.
///
/// \param E raw embeddings `(n × d)`. \param tokens the rows' names, `n` of them.
/// \param token the word that asks.
/// \return the name of the other token it weighs most.
///
/// \par Hint
/// A token never counts as its own partner, so leave the diagonal out, even where a token's
/// score with itself is not its largest. The softmax keeps the order of the scores, so the
/// largest weight sits where the largest score does: you may compare scores instead of weights.
std::string strongest_partner(const arma::mat& E, const std::vector<std::string>& tokens,
                              const std::string& token);

/// \brief Exercise 2.2: the whole grid of raw weights.
///
/// Return the \f$n \times n\f$ grid \f$W = \mathrm{softmax}_{\text{rows}}(E E^\top)\f$: row
/// \f$i\f$ holds how much token \f$i\f$ weighs every token. The test compares it with chapter
/// 02's printed grid (two digits) and with the library, checks that every row sums to 1, and
/// that the grid is not symmetric although \f$E E^\top\f$ is.
///
/// \param E raw embeddings `(n × d)`.
/// \return the weights `(n × n)`, rows asking and columns answering.
///
/// \par Hint
/// One matrix product gives every score at once. Then normalise each row on its own: take the
/// largest entry of the row out before the exponential, and divide by the row's sum.
arma::mat raw_weights(const arma::mat& E);

}  // namespace attn::exercises
