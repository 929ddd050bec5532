// Scores far apart, for the stability of every path that exponentiates scores. A softmax is
// computed stably by shifting each row by its largest score, so that every exponent is at most 0
// and the largest is exactly 0. Shifted by anything else (the row's smallest score, or nothing),
// a row whose scores span more than ln(DBL_MAX) ≈ 709.8 (ln(FLT_MAX) ≈ 88.7 in float) overflows
// to infinity, and a row whose scores all lie far below 0 underflows to 0/0: either way a NaN or
// a wrong number. The inputs here span 2000 in double and 250 in float, with the largest score
// far above 710 (89), so both wrong shifts fail; scores close to 1000 and 2.5 apart do not tell
// the right shift from the wrong one, since both are exact there.
#pragma once

#include <attn/math/streaming.hpp>

#include <armadillo>

#include "normal_inputs.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <ostream>
#include <vector>

namespace attn_test {

/// One streaming case of the stability tests: \p n queries and \p m keys, cut into blocks, with
/// a mask or none (the math layer's readable form and the fast layer are run on the same cases).
struct StreamingCase {
  arma::uword n, m;                    ///< queries, keys.
  attn::math::StreamingBlocks blocks;  ///< queries and keys per block.
  attn::math::StreamingMask mask;      ///< causal, or padding from key_length on.
};

/// How GoogleTest names a case in a failure.
inline void PrintTo(const StreamingCase& c, std::ostream* os) {
  *os << "n " << c.n << " m " << c.m << " blocks " << c.blocks.queries << "x" << c.blocks.keys;
  if (c.mask.causal)
    *os << " causal";
  if (c.mask.key_length > 0)
    *os << " padding from " << c.mask.key_length;
}

/// \brief The weights of the hand-worked row {top, top − 1, far below}: the first two are
///        \f$1 / (1 + e^{-1})\f$ and \f$e^{-1} / (1 + e^{-1})\f$; the third, at least 1000 below
///        the top, is \f$e^{-1000}\f$ of the first, below 1e-434: 0 in double.
inline arma::rowvec top_two_weights() {
  const double e = std::exp(-1.0);
  return {1.0 / (1.0 + e), e / (1.0 + e), 0.0};
}

/// \brief The largest \f$|a - b|\f$, entry by entry; NaN if either holds a NaN or an infinity,
///        which is what a wrong shift gives (arma's max() would pass over a NaN).
inline double largest_gap(const arma::mat& a, const arma::mat& b) {
  const arma::mat gap = arma::abs(a - b);
  return gap.is_finite() ? gap.max() : std::numeric_limits<double>::quiet_NaN();
}

/// \brief Queries and keys one wide, so that every score \f$q_i k_j\f$ is one product of
///        numbers exact in binary, and so exact in float and in double: the code under test and
///        the reference see the same scores.
struct ExtremeInputs {
  arma::mat Q;  ///< `(n × 1)`: q_i cycles through 8, −8, 4.
  arma::mat K;  ///< `(m × 1)`: k_j cycles through unit × {125, −125, 124.875, 0, −62.5}.
  arma::mat V;  ///< `(m × 3)`: standard normal.
};

/// \brief The inputs, with unit 1 for double (scores from −1000 to 1000: a query of 8 scores
///        1000, −1000, 999, 0 and −500, a spread of 2000) or 1/8 for float (from −125 to 125, a
///        spread of 250). A query of 4 spreads half as wide (1000, 125), still beyond 710 (89).
inline ExtremeInputs extreme_inputs(arma::uword n, arma::uword m, double unit, std::uint64_t seed) {
  constexpr std::array<double, 3> kQueries = {8.0, -8.0, 4.0};
  constexpr std::array<double, 5> kKeys = {125.0, -125.0, 124.875, 0.0, -62.5};
  ExtremeInputs in{arma::mat(n, 1), arma::mat(m, 1), Normals(seed).normal(m, 3)};
  for (arma::uword i = 0; i < n; ++i)
    in.Q(i, 0) = kQueries[i % kQueries.size()];
  for (arma::uword j = 0; j < m; ++j)
    in.K(j, 0) = unit * kKeys[j % kKeys.size()];
  return in;
}

/// \brief Which keys each query sees: the keys before `key_length` (0: all), and under a causal
///        mask only keys \f$j \le i\f$. Written out here, not taken from the code under test.
inline arma::umat allowed_grid(arma::uword n, arma::uword m, bool causal, arma::uword key_length) {
  arma::umat allowed(n, m, arma::fill::ones);
  for (arma::uword i = 0; i < n; ++i)
    for (arma::uword j = 0; j < m; ++j)
      if ((causal && j > i) || (key_length > 0 && j >= key_length))
        allowed(i, j) = 0;
  return allowed;
}

/// \brief Attention computed apart from the code under test, in long double.
struct ReferenceAttention {
  arma::mat output;       ///< `(n × d_v)`: softmax of each row's allowed scores, times V.
  arma::vec log_sum_exp;  ///< `(n)`: \f$\log \sum_j e^{s_{ij}}\f$ over the allowed keys.
};

/// \brief softmax(S) V over the allowed entries of each row, each weight \f$e^{s_{ij} - M_i}\f$
///        with \f$M_i\f$ the row's largest allowed score (the shift changes nothing in exact
///        arithmetic), the sums carried in long double (a 64-bit significand on x86-64; on a
///        platform whose long double is double, the reference is as good as double).
/// \param S `(n × m)`. \param allowed `(n × m)`, every row with at least one 1.
/// \param V `(m × d_v)`.
inline ReferenceAttention reference_attention(const arma::mat& S, const arma::umat& allowed,
                                              const arma::mat& V) {
  ReferenceAttention r{arma::mat(S.n_rows, V.n_cols), arma::vec(S.n_rows)};
  for (arma::uword i = 0; i < S.n_rows; ++i) {
    long double top = -std::numeric_limits<long double>::infinity();
    for (arma::uword j = 0; j < S.n_cols; ++j)
      if (allowed(i, j) != 0)
        top = std::max(top, static_cast<long double>(S(i, j)));
    long double sum = 0.0L;
    std::vector<long double> out(V.n_cols, 0.0L);
    for (arma::uword j = 0; j < S.n_cols; ++j) {
      if (allowed(i, j) == 0)
        continue;
      const long double w = std::exp(static_cast<long double>(S(i, j)) - top);
      sum += w;
      for (arma::uword c = 0; c < V.n_cols; ++c)
        out[c] += w * static_cast<long double>(V(j, c));
    }
    for (arma::uword c = 0; c < V.n_cols; ++c)
      r.output(i, c) = static_cast<double>(out[c] / sum);
    r.log_sum_exp(i) = static_cast<double>(top + std::log(sum));
  }
  return r;
}

}  // namespace attn_test
