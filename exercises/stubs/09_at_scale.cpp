// Chapter 09's exercises: your answers go here. Each function's statement, parameters and
// hint are above its declaration in exercises/09_at_scale.hpp and at the end of the
// chapter's page. Replace each not_solved(...) line with your answer, then run
// ./scripts/exercises.
#include "09_at_scale.hpp"

#include "exercise.hpp"

namespace attn::exercises {

// Exercise 9.1: the online softmax, one key at a time.
// Its statement and hint: exercises/09_at_scale.hpp, or ./scripts/exercises 9.1.
OnlineState online_update(const OnlineState& state, double score, const arma::rowvec& value) {
  not_solved("9.1", state, score, value);
}

// Exercise 9.2: merge two partial results.
// Its statement and hint: exercises/09_at_scale.hpp, or ./scripts/exercises 9.2.
OnlineState merge_states(const OnlineState& a, const OnlineState& b) {
  not_solved("9.2", a, b);
}

}  // namespace attn::exercises
