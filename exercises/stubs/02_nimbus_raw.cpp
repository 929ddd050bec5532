// Chapter 02's exercises: your answers go here. Each function's statement, parameters and
// hint are above its declaration in exercises/02_nimbus_raw.hpp and at the end of the
// chapter's page. Replace each not_solved(...) line with your answer, then run
// ./scripts/exercises.
#include "02_nimbus_raw.hpp"

#include "exercise.hpp"

namespace attn::exercises {

// Exercise 2.1: which other word does a word lean on most?
// Its statement and hint: exercises/02_nimbus_raw.hpp, or ./scripts/exercises 2.1.
std::string strongest_partner(const arma::mat& E, const std::vector<std::string>& tokens,
                              const std::string& token) {
  not_solved("2.1", E, tokens, token);
}

// Exercise 2.2: the whole grid of raw weights.
// Its statement and hint: exercises/02_nimbus_raw.hpp, or ./scripts/exercises 2.2.
arma::mat raw_weights(const arma::mat& E) {
  not_solved("2.2", E);
}

}  // namespace attn::exercises
