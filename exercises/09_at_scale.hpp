/// \file
/// \brief Chapter 09's exercises: the online softmax one key at a time, and two partial results
///        merged into one.
#pragma once

#include <armadillo>

#include <limits>

namespace attn::exercises {

/// \brief The online softmax's running state for one query after some of its keys: chapter
///        09's \f$(m, \ell, O)\f$ (exercise 9.1 and exercise 9.2). After the last key, \f$O /
///        \ell\f$ is the query's output and \f$m + \log \ell\f$ the log-sum-exp of its scores.
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

/// \brief Exercise 9.1: the online softmax, one key at a time.
///
/// Fold one more key into \p state, the running \f$(m, \ell, O)\f$ of one query (see
/// OnlineState), and return the new state. The key brings its \p score against the query
/// (\f$-\infty\f$ for a masked key) and its \p value row. This is chapter 09's update with a
/// block of one key: \f$m' = \max(m, s)\f$, \f$\ell' = e^{m - m'}\ell + e^{s - m'}\f$ and
/// \f$O' = e^{m - m'} O + e^{s - m'} v\f$. The test starts from OnlineState::empty(2) and folds
/// chapter 09's example, scores [1 3 2 5] with V rows [1 0] [0 1] [1 1] [2 1], key by key:
/// after keys 1 and 2 it expects l = 1.135335 and O = [0.135335, 1.000000], after all four
/// l = 1.203438 and O / l = [1.718495, 0.984781]. It also folds random rows and compares
/// \f$O / \ell\f$ with softmax(scores) V, and checks that the first key gives no NaN and that a
/// key whose score is \f$-\infty\f$ leaves any state unchanged, the empty state included.
///
/// \param state the state so far. \param score the key's score \f$s\f$.
/// \param value the key's value \f$v\f$, `(1 × d_v)`.
/// \return the state with the key folded in.
///
/// \par Hint
/// On the first key \f$m - m'\f$ is \f$-\infty - s\f$, and \f$e^{-\infty} = 0\f$ wipes out the
/// empty start, as it should. A masked key on the empty state is the trap: then \f$m'\f$ is
/// \f$-\infty\f$ too, and \f$-\infty - (-\infty)\f$ is NaN. Ask what a key that may not be seen
/// should change, and answer that before any arithmetic.
OnlineState online_update(const OnlineState& state, double score, const arma::rowvec& value);

/// \brief Exercise 9.2: merge two partial results.
///
/// \p a and \p b are the states of the same query over two sets of keys that share no key.
/// Return the state over both, as chapter 09 merges partial results: \f$m = \max(m_a, m_b)\f$,
/// \f$\ell = e^{m_a - m}\ell_a + e^{m_b - m}\ell_b\f$ and
/// \f$O = e^{m_a - m} O_a + e^{m_b - m} O_b\f$.
/// The test merges the state of chapter 09's keys 1 and 2 with that of keys 3 and 4 and expects
/// the state of all four, l = 1.203438 and O / l = [1.718495, 0.984781], within 1e-14 of
/// folding the keys one by one. Merging with an empty state, on either side and when both are
/// empty, must give the other state back without NaN, and merging \p a with \p b must give the
/// same as \p b with \p a.
///
/// \param a the state over one set of keys. \param b the state over the others.
/// \return the state over both.
///
/// \par Hint
/// Each part was summed against its own maximum; the factor \f$e^{m_a - m}\f$ re-measures part
/// \p a against the shared one, and it is 1 for the part that holds the maximum. An empty part
/// has \f$m = -\infty\f$, and if both parts are empty the formula meets \f$-\infty - (-\infty)\f$.
OnlineState merge_states(const OnlineState& a, const OnlineState& b);

}  // namespace attn::exercises
