// Chapter 10's exercises: your answers go here. Each function's statement, parameters and
// hint are above its declaration in exercises/10_tiny_transformer.hpp and at the end of the
// chapter's page. Replace each not_solved(...) line with your answer, then run
// ./scripts/exercises.
#include "10_tiny_transformer.hpp"

#include "exercise.hpp"

namespace attn::exercises {

// Exercise 10.1: layer norm's backward pass, for one row.
// Its statement and hint: exercises/10_tiny_transformer.hpp, or ./scripts/exercises 10.1.
arma::rowvec layer_norm_backward_row(const arma::rowvec& x, const arma::rowvec& gamma,
                                     const arma::rowvec& dy, double eps) {
  not_solved("10.1", x, gamma, dy, eps);
}

// Exercise 10.2: the cross-entropy of one row of logits.
// Its statement and hint: exercises/10_tiny_transformer.hpp, or ./scripts/exercises 10.2.
double cross_entropy_row(const arma::rowvec& logits, arma::uword target) {
  not_solved("10.2", logits, target);
}

}  // namespace attn::exercises
