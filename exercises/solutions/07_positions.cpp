// Chapter 07's exercises, answered. Reference solutions: look only after trying.
#include "07_positions.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace attn::exercises {

std::array<double, 2> rotate_pair(const std::array<double, 2>& pair, double position,
                                  double frequency) {
  const double angle = position * frequency;
  const double c = std::cos(angle), s = std::sin(angle);
  return {pair[0] * c - pair[1] * s, pair[0] * s + pair[1] * c};
}

arma::rowvec sinusoidal_row(arma::uword position, arma::uword d_model) {
  if (d_model == 0 || d_model % 2 != 0) {
    throw std::invalid_argument("d_model = " + std::to_string(d_model) +
                                " must be even and positive: the columns come in pairs");
  }
  arma::rowvec row(d_model);
  for (arma::uword i = 0; i < d_model / 2; ++i) {
    const double angle =
        static_cast<double>(position) / std::pow(10000.0, 2.0 * static_cast<double>(i) / d_model);
    row(2 * i) = std::sin(angle);
    row(2 * i + 1) = std::cos(angle);
  }
  return row;
}

}  // namespace attn::exercises
