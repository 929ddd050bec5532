// Chapter 12's exercises: your answers go here. Each function's statement, parameters and
// hint are above its declaration in exercises/12_todays_attention.hpp and at the end of the
// chapter's page. Replace each not_solved(...) line with your answer, then run
// ./scripts/exercises.
#include "12_todays_attention.hpp"

#include "exercise.hpp"

namespace attn::exercises {

// Exercise 12.1: the KV cache's size.
// Its statement and hint: exercises/12_todays_attention.hpp, or ./scripts/exercises 12.1.
std::size_t kv_cache_bytes(const attn::gpt::TransformerConfig& config, std::size_t tokens,
                           std::size_t bytes_per_number) {
  not_solved("12.1", config, tokens, bytes_per_number);
}

// Exercise 12.2: RMSNorm's backward pass, for one row.
// Its statement and hint: exercises/12_todays_attention.hpp, or ./scripts/exercises 12.2.
arma::rowvec rms_norm_backward_row(const arma::rowvec& x, const arma::rowvec& gamma,
                                   const arma::rowvec& dy, double eps) {
  not_solved("12.2", x, gamma, dy, eps);
}

}  // namespace attn::exercises
