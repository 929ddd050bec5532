/// \file
/// \brief Softmax: turning a row of scores into weights in [0, 1] that sum to 1.
///
/// Every function here rejects an empty input and any NaN or infinity in it with an
/// InputError naming the `softmax input`; a score of \f$-\infty\f$ from a mask belongs to
/// masked_softmax_rows() in mask.hpp, which gives such entries weight exactly 0.
#pragma once

#include <armadillo>

namespace attn::math {

/// \brief Row-wise softmax, each row on its own, computed stably.
///
/// \f[ W_{ij} = \frac{e^{S_{ij} - m_i}}{\sum_k e^{S_{ik} - m_i}}, \qquad m_i = \max_k S_{ik} \f]
///
/// Subtracting the row maximum \f$m_i\f$ changes nothing mathematically (it cancels between
/// numerator and denominator) but keeps every exponent \f$\le 0\f$, so rows of scores near
/// \f$10^3\f$ or \f$-10^3\f$ give the same weights as rows near 0 instead of `inf/inf`.
///
/// \param scores `S: (n × m)`, one row per query, one column per key; finite, non-empty.
/// \return `W: (n × m)`, every entry in [0, 1], every row summing to 1. An entry is positive
///         in exact arithmetic, but underflows to exactly 0 when its score is more than about
///         745 below the largest of its row, where \f$e^x\f$ rounds to 0.
/// \throws InputError if \p scores is empty or holds a NaN or an infinity.
arma::mat softmax_rows(const arma::mat& scores);

/// \brief Softmax of one row of scores: `softmax_rows` for a `(1 × m)` matrix.
/// \param scores `s: (1 × m)`, finite, non-empty.
/// \return `w: (1 × m)`, every entry in [0, 1] (0 only where \f$e^x\f$ underflows, as in
///         softmax_rows()), summing to 1.
/// \throws InputError if \p scores is empty or holds a NaN or an infinity.
arma::rowvec softmax(const arma::rowvec& scores);

/// \brief One softmax over every entry of the matrix at once, the way attention does *not* work.
///
/// \f[ W_{ij} = \frac{e^{S_{ij} - m}}{\sum_{k,l} e^{S_{kl} - m}}, \qquad m = \max_{k,l} S_{kl} \f]
///
/// Chapter 05 uses it to show the difference: all entries together sum to 1, so a single row no
/// longer describes how one query shares its attention.
/// \param scores `S: (n × m)`, finite, non-empty.
/// \return `W: (n × m)` summing to 1 in total.
/// \throws InputError if \p scores is empty or holds a NaN or an infinity.
arma::mat softmax_whole(const arma::mat& scores);

}  // namespace attn::math
