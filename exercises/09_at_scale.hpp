/// \file
/// \brief Chapter 09's exercises: the online softmax one key at a time, and two partial results
///        merged into one.
#pragma once

#include <armadillo>

#include <limits>

namespace attn::exercises {

/// \brief The online softmax's running state for one query after some of its keys: chapter
///        09's \f$(m, \ell, O)\f$ (exercises 9.1 and 9.2). After the last key, \f$O / \ell\f$ is
///        the query's output and \f$m + \log \ell\f$ the log-sum-exp of its scores.
struct OnlineState {
  /// The largest score so far; −∞ before any key.
  double m = -std::numeric_limits<double>::infinity();
  /// \f$\ell = \sum_j e^{s_j - m}\f$ over the keys so far; 0 before any key.
  double l = 0.0;
  /// `(1 × d_v)`: \f$O = \sum_j e^{s_j - m} v_j\f$, not yet divided by \f$\ell\f$.
  arma::rowvec o;

  /// \brief The state before any key: \f$m = -\infty\f$, \f$\ell = 0\f$, \f$O\f$ all zeros.
  /// \param width \f$d_v\f$, the width of the values. \return the empty state.
  static OnlineState empty(arma::uword width) {
    OnlineState state;
    state.o.zeros(width);
    return state;
  }
};

OnlineState online_update(const OnlineState& state, double score, const arma::rowvec& value);
OnlineState merge_states(const OnlineState& a, const OnlineState& b);

}  // namespace attn::exercises
