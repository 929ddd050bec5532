// Chapter 07's exercises: your answers go here. Each function's statement, parameters and
// hint are above its declaration in exercises/07_positions.hpp and at the end of the
// chapter's page. Replace each not_solved(...) line with your answer, then run
// ./scripts/exercises.
#include "07_positions.hpp"

#include "exercise.hpp"

namespace attn::exercises {

// Exercise 7.1: RoPE's turn of one pair of coordinates.
// Its statement and hint: exercises/07_positions.hpp, or ./scripts/exercises 7.1.
std::array<double, 2> rotate_pair(const std::array<double, 2>& pair, double position,
                                  double frequency) {
  not_solved("7.1", pair, position, frequency);
}

// Exercise 7.2: one row of the sinusoidal position encoding.
// Its statement and hint: exercises/07_positions.hpp, or ./scripts/exercises 7.2.
arma::rowvec sinusoidal_row(arma::uword position, arma::uword d_model) {
  not_solved("7.2", position, d_model);
}

}  // namespace attn::exercises
