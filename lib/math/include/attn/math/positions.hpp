/// \file
/// \brief Word order for attention, which cannot see it: sinusoidal position encodings added
///        to the embeddings ("Attention Is All You Need", section 3.5) and rotary position
///        embeddings applied to queries and keys (RoPE, Su et al., "RoFormer").
///
/// Both work on pairs of columns. Sinusoidal encodings write pair \f$i\f$ interleaved, sine in
/// column \f$2i\f$ and cosine in column \f$2i+1\f$, as the paper's formula does. RoPE rotates the
/// pair \f$(2i, 2i+1)\f$ by default (the paper's layout, RotaryLayout::interleaved); GPT-NeoX and
/// many later models pair column \f$i\f$ with column \f$i + d/2\f$ instead
/// (RotaryLayout::halves, "rotate_half"). The two layouts are the same rotation of columns put
/// in a different order (halves_from_interleaved()).
#pragma once

#include <armadillo>

namespace attn::math {

/// \brief The sinusoidal position encoding of positions \f$0 \dots n-1\f$.
///
/// \f[ PE_{p,\,2i} = \sin\!\big(p / b^{2i/d}\big), \qquad PE_{p,\,2i+1} = \cos\!\big(p /
/// b^{2i/d}\big),
///     \qquad b = 10000 \f]
/// Added to the embeddings, \f$X + PE\f$, it makes the same word at two positions two different
/// rows. For every pair of columns, \f$PE_{p+k}\f$ is \f$PE_p\f$ rotated by the angle
/// \f$k / b^{2i/d}\f$, whatever \f$p\f$ is.
/// \param positions \f$n\f$, the number of rows. \param d_model \f$d\f$, the number of columns.
/// \param base \f$b\f$.
/// \return `PE: (n × d)`.
/// \throws InputError if \p d_model is zero or odd, \p positions is zero, or \p base is not
///         a finite number greater than 1 (NaN and ±∞ included).
arma::mat sinusoidal_positions(arma::uword positions, arma::uword d_model, double base = 10000.0);

/// \brief The angle per position of each column pair: \f$\theta_i = b^{-2i/d}\f$,
///        \f$i = 0 \dots d/2 - 1\f$. Pair \f$i\f$ turns by \f$m\,\theta_i\f$ at position \f$m\f$.
/// \param d the number of columns. \param base \f$b\f$.
/// \return `θ: (1 × d/2)`, from 1 down.
/// \throws InputError if \p d is zero or odd, or \p base is not a finite number greater than 1.
arma::rowvec rotary_frequencies(arma::uword d, double base = 10000.0);

/// \brief Which columns RoPE rotates together.
enum class RotaryLayout {
  interleaved,  ///< pairs \f$(2i, 2i+1)\f$, as in the RoFormer paper.
  halves,       ///< pairs \f$(i, i + d/2)\f$, "rotate_half", as in GPT-NeoX.
};

/// \brief Rotary position embedding: row \f$r\f$ of \p X, at position \f$m_r\f$, has each of its
///        column pairs rotated by the angle \f$m_r \theta_i\f$.
///
/// For the pair \f$(x, y)\f$ of pair index \f$i\f$:
/// \f[ \begin{pmatrix} x' \\ y' \end{pmatrix} =
///     \begin{pmatrix} \cos m\theta_i & -\sin m\theta_i \\ \sin m\theta_i & \cos m\theta_i
///     \end{pmatrix} \begin{pmatrix} x \\ y \end{pmatrix} \f]
/// Applied to queries and keys (not values), it makes every score depend on the positions only
/// through their offset: \f$\mathrm{rope}(q, m) \cdot \mathrm{rope}(k, n) = q^\top
/// R_{(n-m)\theta}\, k\f$. \param X `(n × d)`, one row per token. \param positions `(n)`, the
/// position of each row. \param layout which columns are paired. \param base \f$b\f$ of
/// rotary_frequencies(). \return `(n × d)`, the rotated rows. \throws ShapeError if \p positions
/// does not have one entry per row of \p X. \throws InputError if \p d is zero or odd, \p X is
/// empty or holds a NaN or an infinity,
///         a position is negative or not finite (the message names it), or \p base is not a
///         finite number greater than 1.
arma::mat rotary(const arma::mat& X, const arma::vec& positions,
                 RotaryLayout layout = RotaryLayout::interleaved, double base = 10000.0);

/// \brief Backward pass of rotary(): a rotation's gradient is the gradient rotated back,
///        \f$\bar X_r = R_{m_r\theta}^\top \bar Y_r\f$.
/// \param upstream `Ȳ: (n × d)`, the gradient with respect to rotary()'s output.
/// \param positions, layout, base as given to rotary().
/// \return `X̄: (n × d)`.
/// \throws ShapeError, InputError as rotary() does, naming \p upstream.
arma::mat rotary_backward(const arma::mat& upstream, const arma::vec& positions,
                          RotaryLayout layout = RotaryLayout::interleaved, double base = 10000.0);

/// \brief The column order that turns the interleaved layout into the halves layout.
///
/// Column \f$j\f$ of `X.cols(order)` is column `order[j]` of \p X: the even columns first, then
/// the odd ones, so pair \f$(2i, 2i+1)\f$ becomes pair \f$(i, i + d/2)\f$. Then
/// `rotary(X.cols(order), m, halves)` equals `rotary(X, m, interleaved).cols(order)`, and
/// scores, being dot products of rows, are the same in both layouts.
/// \param d the number of columns.
/// \return `(d)`: 0, 2, 4, ..., 1, 3, 5, ...
/// \throws InputError if \p d is zero or odd.
arma::uvec halves_from_interleaved(arma::uword d);

/// \name The properties that make positions work, measured
/// Each returns the largest violation, to compare with a tolerance.
/// @{

/// \brief How far sinusoidal encodings are from being rotations of each other: the largest
///        \f$|PE_{p+k} - R_{k\theta_i} PE_p|\f$ over every column pair \f$i\f$,
///        \f$p < \f$ \p positions and \f$k < \f$ \p shifts.
/// \param positions,shifts the ranges of \f$p\f$ and \f$k\f$. \param d_model the width.
/// \return the largest entry-wise difference.
/// \throws InputError if \p positions or \p shifts is 0, or as sinusoidal_positions() does.
double largest_shift_error(arma::uword positions, arma::uword shifts, arma::uword d_model);

/// \brief The similarity of two sinusoidal encodings \p shift positions apart,
///        \f$PE_p \cdot PE_{p+k} = \sum_i \cos(k\,\theta_i)\f$, for \f$k = 0 \dots\f$ \p shifts −
///        1: computed from the encodings, it is the same for every \p p.
/// \param p the first position. \param shifts how many \f$k\f$. \param d_model the width.
/// \return `(1 × shifts)`.
/// \throws InputError as sinusoidal_positions() does, or if \p shifts is zero.
arma::rowvec sinusoidal_similarity(arma::uword p, arma::uword shifts, arma::uword d_model);

/// \brief How much RoPE scores change when every position moves by \p shift: the largest
///        \f$|S(m + s) - S(m)|\f$, \f$S(m) = \mathrm{rotary}(Q, m)\, \mathrm{rotary}(K, m)^\top\f$.
/// \param Q `(n × d)`. \param K `(n × d)`. \param positions `(n)`. \param shift \f$s \ge 0\f$.
/// \return the largest change (0 in exact arithmetic).
/// \throws ShapeError if \p Q and \p K differ in shape, or as rotary() does.
/// \throws InputError if \p shift is negative, NaN or infinite, or as rotary() does.
double rotary_shift_error(const arma::mat& Q, const arma::mat& K, const arma::vec& positions,
                          double shift);

/// \brief How much RoPE scores differ between the two layouts, the columns of \p Q and \p K
///        reordered by halves_from_interleaved() for the halves layout.
/// \param Q `(n × d)`. \param K `(m × d)`. \param q_positions `(n)`. \param k_positions `(m)`.
/// \return the largest difference (0 in exact arithmetic).
/// \throws ShapeError if \p Q and \p K differ in columns, or as rotary() does.
/// \throws InputError as rotary() does (empty, NaN or infinite input).
double rotary_layout_error(const arma::mat& Q, const arma::mat& K, const arma::vec& q_positions,
                           const arma::vec& k_positions);
/// @}

}  // namespace attn::math
