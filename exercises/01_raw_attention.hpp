/// \file
/// \brief Chapter 01's exercises: the softmax of a row and one token's blend, by hand.
#pragma once

#include <armadillo>

namespace attn::exercises {

/// \brief Exercise 1.1: the softmax of one row of scores, written by hand.
///
/// Return the weights \f$w_j = e^{s_j} / \sum_k e^{s_k}\f$ for the row of scores \f$s\f$,
/// with a loop of your own (attn::math::softmax is the answer, so leave it alone). The test gives
/// the scores of "bank" from chapter 01, [0.2 1.0 0.7], and expects the article's weights
/// [0.21 0.46 0.34]; it also gives scores near 1000, where a careless softmax returns NaN.
///
/// \param scores one row of scores `(1 × m)`.
/// \return the weights `(1 × m)`, summing to 1: positive in exact arithmetic, though a weight
///         whose score is more than about 745 below the row's largest underflows to 0.
///
/// \par Hint
/// \f$e^{1000}\f$ overflows a double. Subtracting the row's largest score from every score
/// changes no weight (the factor \f$e^{-m}\f$ cancels between top and bottom) and keeps every
/// exponent at most 0.
arma::rowvec row_softmax(const arma::rowvec& scores);

/// \brief Exercise 1.2: one token asks the sentence, end to end.
///
/// \p E holds one raw embedding per row. Return the new vector of the token in row \p query.
/// Score every row against it (\f$s_j = e_{query} \cdot e_j\f$), turn the scores into weights
/// with a softmax, and blend the rows, \f$z = \sum_j w_j e_j\f$. For "bank" in "money bank
/// river" the article prints z_bank = [0.734 0.441]. A \p query that is not a row of \p E
/// must throw std::out_of_range.
///
/// \param E raw embeddings `(n × d)`, one row per token. \param query the row that asks.
/// \return its new vector \f$z\f$, `(1 × d)`.
///
/// \par Hint
/// `E.row(query) * E.t()` is the row of scores (`E * E.row(query).t()` is the same numbers as a
/// column, which row_softmax does not take); your row_softmax from exercise 1.1 gives the
/// weights; and the blend is a weighted sum of rows, which is one product, `weights * E`.
arma::rowvec blend_for(const arma::mat& E, arma::uword query);

}  // namespace attn::exercises
