/// \file
/// \brief Chapter 07's exercises: RoPE's turn of one pair, and one row of sinusoidal encodings.
#pragma once

#include <armadillo>

#include <array>

namespace attn::exercises {

/// \brief Exercise 7.1: RoPE's turn of one pair of coordinates.
///
/// Return \p pair \f$(x_0, x_1)\f$ turned by the angle \f$m\theta\f$, where \f$m\f$ is the token's
/// \p position and \f$\theta\f$ the pair's \p frequency. This is the turn RoPE gives every
/// column pair of a query or a key. A positive angle turns counterclockwise, taking \f$(1, 0)\f$
/// towards \f$(0, 1)\f$, as attn::math::rotary does. The test rebuilds chapter 07's example (d = 2,
/// θ = 1, q = (1, 2), k = (3, −1)) from your turns: q at 5 and k at 3 must score q·k =
/// −6.781228824, and so must q at 2 and k at 0, while q at 3 and k at 5 score 5.948935151. It also
/// compares your turns with attn::math::rotary and checks that a turn keeps the pair's length.
///
/// \param pair \f$(x_0, x_1)\f$. \param position \f$m\f$. \param frequency \f$\theta\f$.
/// \return the turned pair.
///
/// \par Hint
/// A turn is linear: it sends \f$(1, 0)\f$ to \f$(\cos\alpha, \sin\alpha)\f$ and \f$(0, 1)\f$ to
/// where \f$(1, 0)\f$ would go after a further quarter turn, and \p pair is \f$x_0\f$ of the first
/// plus \f$x_1\f$ of the second. When both vectors turn, their dot product depends only on the
/// difference of their angles, which is why the first two scores above agree.
std::array<double, 2> rotate_pair(const std::array<double, 2>& pair, double position,
                                  double frequency);

/// \brief Exercise 7.2: one row of the sinusoidal position encoding.
///
/// Return the encoding of \p position as a row of \p d_model numbers: for each pair
/// \f$i = 0 \dots d/2 - 1\f$, column \f$2i\f$ holds \f$\sin(p / 10000^{2i/d})\f$ and column
/// \f$2i+1\f$ the cosine of the same angle. A \p d_model that is zero or odd has no pairs to fill
/// and must throw std::invalid_argument, as attn::math::sinusoidal_positions does. The test checks
/// the rows of chapter 07's rounded table for d_model = 4, positions 0 to 3 (row 1 begins
/// 0.8415 0.5403), the value PE[1, 2] = 0.8218561900175316 for d_model = 512, and agreement with
/// attn::math::sinusoidal_positions for several widths.
///
/// \param position \f$p\f$. \param d_model the row's width, even.
/// \return the encoding `(1 × d_model)`.
///
/// \par Hint
/// Loop over the pairs rather than the columns: both columns of pair \f$i\f$ share one angle. The
/// exponent \f$2i/d\f$ runs from 0 towards 1, so the first pair turns by one radian per position
/// and the last one \f$10000^{1-2/d}\f$ times slower (almost ten thousand times for wide
/// encodings). Compute that exponent in floating point:
/// with unsigned integers `2 * i / d` is 0 for every pair.
arma::rowvec sinusoidal_row(arma::uword position, arma::uword d_model);

}  // namespace attn::exercises
