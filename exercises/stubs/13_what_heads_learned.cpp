// Chapter 13's exercises: your answers go here. Each function's statement, parameters and
// hint are above its declaration in exercises/13_what_heads_learned.hpp and at the end of the
// chapter's page. Replace each not_solved(...) line with your answer, then run
// ./scripts/exercises.
#include "13_what_heads_learned.hpp"

#include "exercise.hpp"

namespace attn::exercises {

// Exercise 13.1: a head's weight on the previous token.
// Its statement and hint: exercises/13_what_heads_learned.hpp, or ./scripts/exercises 13.1.
double previous_token_score(const arma::mat& weights) {
  not_solved("13.1", weights);
}

// Exercise 13.2: the induction score of a head.
// Its statement and hint: exercises/13_what_heads_learned.hpp, or ./scripts/exercises 13.2.
double induction_score_of(const arma::mat& weights, arma::uword first, arma::uword period) {
  not_solved("13.2", weights, first, period);
}

}  // namespace attn::exercises
