#include "attn/math/positions.hpp"

#include "attn/math/validate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace attn::math {

namespace {

void require_even_width(std::string_view what, arma::uword d) {
  if (d == 0 || d % 2 != 0)
    throw InputError(
        fmt::format("{}: the width d = {} must be even and positive, since the "
                    "columns are used in pairs",
                    what, d));
}

void require_base(std::string_view what, double base) {
  if (!(base > 1.0) || !std::isfinite(base))
    throw InputError(
        fmt::format("{}: the base {} must be a finite number greater than 1", what, base));
}

void require_positions(std::string_view what, const arma::mat& X, const arma::vec& positions) {
  if (positions.n_elem != X.n_rows)
    throw ShapeError(fmt::format("{}: {} positions for X {}, which needs one per row", what,
                                 positions.n_elem, shape_of(X)));
  for (arma::uword r = 0; r < positions.n_elem; ++r)
    if (!std::isfinite(positions(r)) || positions(r) < 0)
      throw InputError(
          fmt::format("{}: position {} of row {} is not a position (positions are "
                      "finite and at least 0)",
                      what, positions(r), r));
}

// The two columns of pair i in a layout.
std::pair<arma::uword, arma::uword> pair_columns(RotaryLayout layout, arma::uword d,
                                                 arma::uword i) {
  return layout == RotaryLayout::interleaved ? std::pair{2 * i, 2 * i + 1}
                                             : std::pair{i, i + d / 2};
}

// Rotates every pair of every row by sign · m_r θ_i: +1 is rotary(), −1 its transpose.
arma::mat rotate_pairs(std::string_view what, const arma::mat& X, const arma::vec& positions,
                       RotaryLayout layout, double base, double sign) {
  require_even_width(what, X.n_cols);
  const std::string operand = fmt::format("{}: {}", what, sign > 0 ? "X" : "upstream");
  require_nonempty(operand, X);
  require_finite(operand, X);
  require_positions(what, X, positions);
  //! [rotary]
  // rotary() turns by +m θ_i (sign +1), rotary_backward() back by −m θ_i (sign −1).
  const arma::rowvec theta = rotary_frequencies(X.n_cols, base);
  arma::mat Y(X.n_rows, X.n_cols);
  for (arma::uword i = 0; i < theta.n_elem; ++i) {
    const auto [a, b] = pair_columns(layout, X.n_cols, i);
    const arma::vec angle = sign * positions * theta(i);
    const arma::vec c = arma::cos(angle), s = arma::sin(angle);
    Y.col(a) = X.col(a) % c - X.col(b) % s;
    Y.col(b) = X.col(a) % s + X.col(b) % c;
  }
  return Y;
  //! [rotary]
}

}  // namespace

arma::mat sinusoidal_positions(arma::uword positions, arma::uword d_model, double base) {
  require_even_width("sinusoidal_positions", d_model);
  require_base("sinusoidal_positions", base);
  if (positions == 0)
    throw InputError("sinusoidal_positions: at least one position is needed");
  //! [sinusoidal]
  arma::mat PE(positions, d_model);
  for (arma::uword i = 0; i < d_model / 2; ++i) {
    const double wavelength = std::pow(base, 2.0 * i / d_model);  // divided into, as numpy does
    for (arma::uword p = 0; p < positions; ++p) {
      const double angle = static_cast<double>(p) / wavelength;
      PE(p, 2 * i) = std::sin(angle);
      PE(p, 2 * i + 1) = std::cos(angle);
    }
  }
  return PE;
  //! [sinusoidal]
}

arma::rowvec rotary_frequencies(arma::uword d, double base) {
  require_even_width("rotary_frequencies", d);
  require_base("rotary_frequencies", base);
  arma::rowvec theta(d / 2);
  for (arma::uword i = 0; i < d / 2; ++i)
    theta(i) = std::pow(base, -2.0 * i / d);
  return theta;
}

arma::mat rotary(const arma::mat& X, const arma::vec& positions, RotaryLayout layout, double base) {
  return rotate_pairs("rotary", X, positions, layout, base, +1.0);
}

arma::mat rotary_backward(const arma::mat& upstream, const arma::vec& positions,
                          RotaryLayout layout, double base) {
  return rotate_pairs("rotary_backward", upstream, positions, layout, base, -1.0);
}

arma::uvec halves_from_interleaved(arma::uword d) {
  require_even_width("halves_from_interleaved", d);
  arma::uvec order(d);
  for (arma::uword i = 0; i < d / 2; ++i) {
    order(i) = 2 * i;
    order(i + d / 2) = 2 * i + 1;
  }
  return order;
}

double largest_shift_error(arma::uword positions, arma::uword shifts, arma::uword d_model) {
  if (positions == 0 || shifts == 0)
    throw InputError(
        fmt::format("largest_shift_error: {} positions and {} shifts measure "
                    "nothing; both must be at least 1",
                    positions, shifts));
  const arma::mat PE = sinusoidal_positions(positions + shifts, d_model);
  const arma::rowvec theta = rotary_frequencies(d_model);
  double worst = 0.0;
  for (arma::uword k = 0; k < shifts; ++k)
    for (arma::uword i = 0; i < theta.n_elem; ++i) {
      // (sin, cos) of angle a + kθ from those of a: the angle-addition formulas.
      const double c = std::cos(k * theta(i)), s = std::sin(k * theta(i));
      for (arma::uword p = 0; p < positions; ++p) {
        const double sin_p = PE(p, 2 * i), cos_p = PE(p, 2 * i + 1);
        worst = std::max({worst, std::abs(PE(p + k, 2 * i) - (sin_p * c + cos_p * s)),
                          std::abs(PE(p + k, 2 * i + 1) - (cos_p * c - sin_p * s))});
      }
    }
  return worst;
}

arma::rowvec sinusoidal_similarity(arma::uword p, arma::uword shifts, arma::uword d_model) {
  if (shifts == 0)
    throw InputError("sinusoidal_similarity: at least one shift is needed");
  const arma::mat PE = sinusoidal_positions(p + shifts, d_model);
  return (PE.rows(p, p + shifts - 1) * PE.row(p).t()).t();
}

double rotary_shift_error(const arma::mat& Q, const arma::mat& K, const arma::vec& positions,
                          double shift) {
  require_same_cols("rotary_shift_error: Q K^T", "Q", Q, "K", K);
  require_same_rows("rotary_shift_error: one position per row", "Q", Q, "K", K);
  if (!std::isfinite(shift) || shift < 0)
    throw InputError(
        fmt::format("rotary_shift_error: the shift {} must be finite and at least 0", shift));
  const arma::mat before = rotary(Q, positions) * rotary(K, positions).t();
  const arma::mat after = rotary(Q, positions + shift) * rotary(K, positions + shift).t();
  return arma::abs(after - before).max();
}

double rotary_layout_error(const arma::mat& Q, const arma::mat& K, const arma::vec& q_positions,
                           const arma::vec& k_positions) {
  require_same_cols("rotary_layout_error: Q K^T", "Q", Q, "K", K);
  const arma::uvec order = halves_from_interleaved(Q.n_cols);
  const auto halves = RotaryLayout::halves;
  const arma::mat interleaved = rotary(Q, q_positions) * rotary(K, k_positions).t();
  const arma::mat paired_halves =
      rotary(Q.cols(order), q_positions, halves) * rotary(K.cols(order), k_positions, halves).t();
  return arma::abs(interleaved - paired_halves).max();
}

}  // namespace attn::math
