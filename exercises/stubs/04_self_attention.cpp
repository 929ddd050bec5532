// Chapter 04's exercises: your answers go here. Each function's statement, parameters and
// hint are above its declaration in exercises/04_self_attention.hpp and at the end of the
// chapter's page. Replace each not_solved(...) line with your answer, then run
// ./scripts/exercises.
#include "04_self_attention.hpp"

#include "exercise.hpp"

namespace attn::exercises {

// Exercise 4.1: numpy's uniform double, from one raw 64-bit draw.
// Its statement and hint: exercises/04_self_attention.hpp, or ./scripts/exercises 4.1.
double uniform_from_bits(std::uint64_t bits) {
  not_solved("4.1", bits);
}

// Exercise 4.2: the weights the article prints for "the cat drank the milk".
// Its statement and hint: exercises/04_self_attention.hpp, or ./scripts/exercises 4.2.
arma::mat self_attention_weights(const arma::mat& X, const math::Projections& W) {
  not_solved("4.2", X, W);
}

}  // namespace attn::exercises
