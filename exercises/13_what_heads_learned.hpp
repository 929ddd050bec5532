/// \file
/// \brief Chapter 13's exercises: a head's weight on the previous token, and its induction
///        score on a repeated segment.
#pragma once

#include <armadillo>

namespace attn::exercises {

/// \brief Exercise 13.1: a head's weight on the previous token.
///
/// A head's weights over a sentence of \f$n\f$ tokens are a matrix \f$A\f$ `(n × n)`: row
/// \f$i\f$ is how query \f$i\f$ spreads its attention over the tokens \f$0 \dots i\f$ (a causal
/// head puts nothing above the diagonal). A previous-token head puts most of each row on the
/// token just before the query. Return the mean of \f$A_{i,i-1}\f$ over the queries
/// \f$i = 1 \dots n-1\f$ (query 0 has no token before it, so it does not count). If \p weights
/// is not square, or has fewer than 2 rows, throw std::invalid_argument.
///
/// For example, the 3 × 3 weights with rows \f$(1, 0, 0)\f$, \f$(\tfrac14, \tfrac34, 0)\f$ and
/// \f$(\tfrac12, \tfrac12, 0)\f$ score \f$(\tfrac14 + \tfrac12) / 2 = \tfrac38\f$. The test checks
/// this and the bad shapes, then holds your score to attn::gpt::profile()'s on random causal heads.
///
/// \param weights `(n × n)`, rows of weights. \return the mean weight on the token before.
///
/// \par Hint
/// The entries \f$A_{i,i-1}\f$ are the diagonal just below the main one: Armadillo's
/// `weights.diag(-1)` gives them as a column of \f$n - 1\f$ numbers.
double previous_token_score(const arma::mat& weights);

/// \brief Exercise 13.2: the induction score of a head.
///
/// A sentence repeats a segment of \f$p\f$ tokens: the first copy starts at row \f$f\f$, the
/// second at \f$f + p\f$. At a token \f$i\f$ of the second copy, an induction head looks back to
/// where the same token stood in the first copy, \f$i - p\f$, and attends to the token that came
/// after it, \f$i - p + 1\f$: what followed last time is a good guess for what comes next. Return
/// the head's mean weight on that token over the second copy,
/// \f[ \frac{1}{p} \sum_{i = f+p}^{f+2p-1} A_{i,\, i-p+1}. \f]
/// If \p period is 0, or \p weights is not square or has fewer than \f$f + 2p\f$ rows, throw
/// std::invalid_argument.
///
/// For example, with \f$f = 0\f$ and \f$p = 3\f$ on the 6 tokens "a b c a b c", rows 3, 4 and
/// 5 are scored: row 3 ("a") on column 1 ("b", which followed the first "a"), row 4 ("b") on
/// column 2 and row 5 ("c") on column 3. A head whose rows 3, 4 and 5 put \f$\tfrac12\f$,
/// \f$\tfrac14\f$ and \f$\tfrac34\f$ there scores \f$\tfrac12\f$. The test checks this, a
/// perfect induction head (score 1), a previous-token head (score 0 when \f$p > 2\f$) and the
/// bad inputs, then holds your score to attn::gpt::induction_score() on random heads.
///
/// \param weights `(n × n)`. \param first \f$f\f$, the first copy's first row.
/// \param period \f$p\f$, the segment's length. \return the score.
///
/// \par Hint
/// Check the sizes before reading an entry: \f$f + 2p\f$ rows are needed. The column is always
/// \f$p - 1\f$ to the left of the row, a fixed offset: one loop over the second copy's rows.
double induction_score_of(const arma::mat& weights, arma::uword first, arma::uword period);

}  // namespace attn::exercises
