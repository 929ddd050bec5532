/// \file
/// \brief Masks: which keys each query may attend to, with the meaning in the type's name.
///
/// A Mask answers one question for every query row \f$i\f$ and key column \f$j\f$: **may query
/// \f$i\f$ attend to key \f$j\f$?** Where it may not, the score is replaced by \f$-\infty\f$
/// before the row softmax, so that weight is exactly 0.
///
/// PyTorch spells masks both ways. `F.scaled_dot_product_attention` reads a boolean `True` as
/// "may attend", our meaning; `nn.MultiheadAttention` reads `True` in `attn_mask` and in
/// `key_padding_mask` as "may **not** attend". A grid from either is turned into a Mask by the
/// constructor named for its meaning, Mask::from_allowed() or Mask::from_blocked(), so a grid
/// cannot be read the wrong way round by accident.
#pragma once

#include <armadillo>

#include <string>

namespace attn::math {

/// \brief For every query \f$i\f$ and key \f$j\f$, whether query \f$i\f$ may attend to key \f$j\f$.
class Mask {
 public:
  /// \brief The causal mask of a decoder: query \f$i\f$ may attend to keys \f$j \le i\f$, itself
  ///        and the tokens before it, never a later one. Allowed entries form the lower
  ///        triangle with its diagonal (numpy's `tril`); the upper triangle is blocked.
  /// \param n the sentence's length (queries and keys). \return `(n × n)`.
  /// \throws InputError if \p n is 0.
  static Mask causal(arma::uword n);

  /// \brief The sliding-window causal mask (Mistral 7B's; later versions of it dropped the
  ///        window): query \f$i\f$ may attend to the last \p window tokens up to itself, keys
  ///        \f$i - w < j \le i\f$. Allowed entries form a band of the lower triangle, \f$w\f$
  ///        wide with the diagonal, as a rolling cache of \f$w\f$ entries holds them; a window
  ///        of \f$n\f$ or more is causal().
  /// \param n the sentence's length. \param window \f$w\f$, the keys a query sees at most.
  /// \return `(n × n)`. \throws InputError if \p n or \p window is 0.
  static Mask causal_window(arma::uword n, arma::uword window);

  /// \brief A padded sentence: its first \p length keys are real tokens, the rest padding
  ///        that no query may attend to.
  /// \param queries the number of query rows. \param keys the padded length.
  /// \param length the real length, from 1 to \p keys.
  /// \return `(queries × keys)`.
  /// \throws InputError unless 1 ≤ \p length ≤ \p keys, or if \p queries is 0.
  static Mask padding(arma::uword queries, arma::uword keys, arma::uword length);

  /// \brief Every query may attend to every key: the same as no mask.
  /// \param queries,keys the shape. \return `(queries × keys)`.
  /// \throws InputError if \p queries or \p keys is 0.
  static Mask none(arma::uword queries, arma::uword keys);

  /// \brief From a grid whose nonzero entries mean "may attend", as
  ///        `F.scaled_dot_product_attention` reads a boolean mask.
  /// \param allowed `(n × m)`. \return the mask. \throws InputError if the grid is empty.
  static Mask from_allowed(const arma::umat& allowed);

  /// \brief From a grid whose nonzero entries mean "may **not** attend", as
  ///        `nn.MultiheadAttention` reads `attn_mask` and `key_padding_mask`.
  /// \param blocked `(n × m)`. \return the mask. \throws InputError if the grid is empty.
  static Mask from_blocked(const arma::umat& blocked);

  /// \brief Both masks allow: a causal mask and a padding mask together.
  /// \param other a mask of the same shape. \return the entry-wise "and".
  /// \throws ShapeError naming both shapes if they differ.
  Mask operator&(const Mask& other) const;

  /// \brief Whether query \p query may attend to key \p key.
  /// \param query a row. \param key a column. \return true if allowed.
  /// \throws std::out_of_range outside the mask.
  bool allows(arma::uword query, arma::uword key) const;

  /// \brief The number of query rows. \return \f$n\f$.
  arma::uword queries() const { return allowed_.n_rows; }
  /// \brief The number of key columns. \return \f$m\f$.
  arma::uword keys() const { return allowed_.n_cols; }
  /// \brief The grid itself, 1 where attending is allowed. \return `(n × m)` of 0 and 1.
  const arma::umat& allowed() const { return allowed_; }
  /// \brief The mask as numbers to add to scores: 0 where allowed, \f$-\infty\f$ where not
  ///        (the additive float mask both PyTorch functions accept).
  /// \return `(n × m)`.
  arma::mat additive() const;
  /// \brief The grid as text, `1` for allowed and `.` for blocked, one line per query.
  /// \return the lines, each ending with `'\n'`.
  std::string picture() const;

 private:
  explicit Mask(arma::umat allowed);
  arma::umat allowed_;
};

/// \brief Row-wise softmax over the allowed entries only: blocked entries get weight exactly 0.
///
/// \f[ W_{ij} = \frac{[M_{ij}]\, e^{S_{ij} - m_i}}{\sum_k [M_{ik}]\, e^{S_{ik} - m_i}},
///     \qquad m_i = \max_{k:\,M_{ik}} S_{ik} \f]
///
/// which is softmax_rows() of the scores with \f$-\infty\f$ put where the mask blocks.
/// \param scores `S: (n × m)`, finite. \param mask `(n × m)`.
/// \return `W: (n × m)`, each row summing to 1 over its allowed keys.
/// \throws ShapeError naming both shapes if they differ.
/// \throws InputError if \p scores is empty or holds a NaN or an infinity (a blocked score
///         too: the mask, not the score, says what is left out), or if a query may attend to
///         no key at all (its row is named). Such a row's softmax is 0/0; PyTorch answers it
///         with NaN or with 0 depending on the function and the version
///         (tests/data/torch_fully_masked.txt).
arma::mat masked_softmax_rows(const arma::mat& scores, const Mask& mask);

}  // namespace attn::math
