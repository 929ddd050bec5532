// Chapter 06's exercises: your answers go here. Each function's statement, parameters and
// hint are above its declaration in exercises/06_trained_head.hpp and at the end of the
// chapter's page. Replace each not_solved(...) line with your answer, then run
// ./scripts/exercises.
#include "06_trained_head.hpp"

#include "exercise.hpp"

namespace attn::exercises {

// Exercise 6.1: one Adam step on one parameter matrix.
// Its statement and hint: exercises/06_trained_head.hpp, or ./scripts/exercises 6.1.
void adam_update(arma::mat& theta, const arma::mat& gradient, AdamMoments& moments,
                 double learning_rate, double beta1, double beta2, double epsilon) {
  not_solved("6.1", theta, gradient, moments, learning_rate, beta1, beta2, epsilon);
}

// Exercise 6.2: the loss that trains the head, for one query.
// Its statement and hint: exercises/06_trained_head.hpp, or ./scripts/exercises 6.2.
TargetLoss target_loss(const arma::rowvec& scores, arma::uword target) {
  not_solved("6.2", scores, target);
}

}  // namespace attn::exercises
