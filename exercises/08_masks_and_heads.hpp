/// \file
/// \brief Chapter 08's exercises: a causal mask as numbers to add, and the columns of each head.
#pragma once

#include <armadillo>

#include <vector>

namespace attn::exercises {

/// \brief Exercise 8.1: a causal mask, as numbers to add to the scores.
///
/// Return the \f$n \times n\f$ matrix that, added to a grid of scores before the row softmax,
/// makes the attention causal: entry \f$(i, j)\f$ is 0 where query \f$i\f$ may attend to key
/// \f$j\f$, that is \f$j \le i\f$ (the diagonal included), and \f$-\infty\f$ above the diagonal,
/// where \f$j > i\f$. That is the library's convention too: the test compares your matrix with
/// attn::math::Mask::causal(n).additive() for several \p n, down to n = 1, whose mask is [0]. It
/// then adds your mask to scores and takes each row's softmax: every weight above the diagonal must
/// be exactly 0, and the first row must put exactly 1 on its own token, as chapter 08's first
/// "the" does (1.00).
///
/// \param n the number of tokens.
/// \return the mask `(n × n)`, to add to a score grid.
///
/// \par Hint
/// A large negative number such as \f$-10^9\f$ usually gives the same weights, but it is another
/// matrix, and next to scores of that size it would block nothing: the test asks for
/// \f$-\infty\f$ itself. `std::numeric_limits<double>::infinity()` (from `<limits>`) is
/// \f$\infty\f$, and \f$e^{-\infty}\f$ is exactly 0. Start from zeros and visit the entries
/// whose column is larger than their row.
arma::mat causal_additive_mask(arma::uword n);

/// \brief Exercise 8.2: split a matrix's columns between the heads.
///
/// \p X has one row per token and \f$d\f$ columns. Cut it into \p heads blocks of columns of
/// equal width \f$d / h\f$ and return them in order: head \f$k\f$ gets columns \f$k\,d/h\f$ up to,
/// but not including, \f$(k+1)\,d/h\f$, as chapter 08 splits its \f$Q\f$ (5 × 8) into 2 heads
/// of (5 × 4). The test compares your blocks with attn::math::split_heads() and puts them back side
/// by side with attn::math::concat_heads(), which must give \p X again. If \p heads is 0 or does
/// not divide \f$d\f$, throw std::invalid_argument whose message contains both numbers, \f$d\f$ and
/// \p heads, in decimal: the test looks for each of them in the message.
///
/// \param X `(n × d)`. \param heads how many heads share the columns.
/// \return `heads` blocks, each `(n × d / heads)`.
///
/// \par Hint
/// `X.cols(first, last)` copies a block of columns, and it includes `last`, unlike the range
/// above. Check the two bad cases before you divide: an integer divided by 0 is undefined
/// behaviour in C++, not an exception. std::to_string writes a count as text.
std::vector<arma::mat> split_into_heads(const arma::mat& X, arma::uword heads);

}  // namespace attn::exercises
