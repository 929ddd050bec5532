// Chapter 03's exercises: your answers go here. Each function's statement, parameters and
// hint are above its declaration in exercises/03_qkv_projections.hpp and at the end of the
// chapter's page. Replace each not_solved(...) line with your answer, then run
// ./scripts/exercises.
#include "03_qkv_projections.hpp"

#include "exercise.hpp"

namespace attn::exercises {

// Exercise 3.1: one token's query, key and value.
// Its statement and hint: exercises/03_qkv_projections.hpp, or ./scripts/exercises 3.1.
TokenQKV project_token(const arma::rowvec& x, const math::Projections& W) {
  not_solved("3.1", x, W);
}

// Exercise 3.2: one query against every key.
// Its statement and hint: exercises/03_qkv_projections.hpp, or ./scripts/exercises 3.2.
OneQuery attend_one(const arma::rowvec& q, const arma::mat& K, const arma::mat& V) {
  not_solved("3.2", q, K, V);
}

}  // namespace attn::exercises
