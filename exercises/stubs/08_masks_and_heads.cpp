// Chapter 08's exercises: your answers go here. Each function's statement, parameters and
// hint are above its declaration in exercises/08_masks_and_heads.hpp and at the end of the
// chapter's page. Replace each not_solved(...) line with your answer, then run
// ./scripts/exercises.
#include "08_masks_and_heads.hpp"

#include "exercise.hpp"

namespace attn::exercises {

// Exercise 8.1: a causal mask, as numbers to add to the scores.
// Its statement and hint: exercises/08_masks_and_heads.hpp, or ./scripts/exercises 8.1.
arma::mat causal_additive_mask(arma::uword n) {
  not_solved("8.1", n);
}

// Exercise 8.2: split a matrix's columns between the heads.
// Its statement and hint: exercises/08_masks_and_heads.hpp, or ./scripts/exercises 8.2.
std::vector<arma::mat> split_into_heads(const arma::mat& X, arma::uword heads) {
  not_solved("8.2", X, heads);
}

}  // namespace attn::exercises
