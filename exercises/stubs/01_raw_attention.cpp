// Chapter 01's exercises: your answers go here. Each function's statement, parameters and
// hint are above its declaration in exercises/01_raw_attention.hpp and at the end of the
// chapter's page. Replace each not_solved(...) line with your answer, then run
// ./scripts/exercises.
#include "01_raw_attention.hpp"

#include "exercise.hpp"

namespace attn::exercises {

// Exercise 1.1: the softmax of one row of scores, written by hand.
// Its statement and hint: exercises/01_raw_attention.hpp, or ./scripts/exercises 1.1.
arma::rowvec row_softmax(const arma::rowvec& scores) {
  not_solved("1.1", scores);
}

// Exercise 1.2: one token asks the sentence, end to end.
// Its statement and hint: exercises/01_raw_attention.hpp, or ./scripts/exercises 1.2.
arma::rowvec blend_for(const arma::mat& E, arma::uword query) {
  not_solved("1.2", E, query);
}

}  // namespace attn::exercises
