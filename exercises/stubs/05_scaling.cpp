// Chapter 05's exercises: your answers go here. Each function's statement, parameters and
// hint are above its declaration in exercises/05_scaling.hpp and at the end of the
// chapter's page. Replace each not_solved(...) line with your answer, then run
// ./scripts/exercises.
#include "05_scaling.hpp"

#include "exercise.hpp"

namespace attn::exercises {

// Exercise 5.1: how each weight moves when one score moves.
// Its statement and hint: exercises/05_scaling.hpp, or ./scripts/exercises 5.1.
arma::mat softmax_jacobian_of(const arma::rowvec& weights) {
  not_solved("5.1", weights);
}

// Exercise 5.2: softmax's backward pass, without building the Jacobian.
// Its statement and hint: exercises/05_scaling.hpp, or ./scripts/exercises 5.2.
arma::rowvec softmax_backward_row(const arma::rowvec& weights, const arma::rowvec& upstream) {
  not_solved("5.2", weights, upstream);
}

}  // namespace attn::exercises
