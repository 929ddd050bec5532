/// \file
/// \brief Chapter 07's exercises: RoPE's turn of one pair, and one row of sinusoidal encodings.
#pragma once

#include <armadillo>

#include <array>

namespace attn::exercises {

std::array<double, 2> rotate_pair(const std::array<double, 2>& pair, double position,
                                  double frequency);

arma::rowvec sinusoidal_row(arma::uword position, arma::uword d_model);

}  // namespace attn::exercises
