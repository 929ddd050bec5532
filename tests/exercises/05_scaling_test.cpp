// Chapter 05's exercises: softmax's Jacobian, and the backward pass that never builds it.
#include "05_scaling.hpp"

#include "exercise_checks.hpp"

#include <attn/math/backward.hpp>
#include <attn/math/softmax.hpp>

#include <gtest/gtest.h>

using attn_exercise::near;
using namespace attn::exercises;

namespace {

const arma::rowvec kScores{0.3, -1.2, 2.0, 0.0, 0.7};

// Column j: (softmax(s + h e_j) − softmax(s − h e_j)) / 2h.
arma::mat finite_difference_jacobian(const arma::rowvec& scores) {
  const double h = 1e-6;
  arma::mat J(scores.n_elem, scores.n_elem);
  for (arma::uword j = 0; j < scores.n_elem; ++j) {
    arma::rowvec up = scores, down = scores;
    up(j) += h;
    down(j) -= h;
    J.col(j) = (attn::math::softmax(up) - attn::math::softmax(down)).t() / (2 * h);
  }
  return J;
}

}  // namespace

// The derivative itself: against central finite differences of the softmax.
TEST(Exercise5_1, MatchesFiniteDifferences) {
  const arma::mat J = softmax_jacobian_of(attn::math::softmax(kScores));
  EXPECT_TRUE(near("J", J, finite_difference_jacobian(kScores), 1e-9));
}

// Its shape of the answer: symmetric, rows summing to 0, equal to the library's.
TEST(Exercise5_1, SymmetricWithRowsSummingToZero) {
  const arma::rowvec y = attn::math::softmax(kScores);
  const arma::mat J = softmax_jacobian_of(y);
  EXPECT_TRUE(near("J against its transpose", J, arma::mat(J.t()), 1e-16));
  EXPECT_TRUE(near("the row sums of J", arma::mat(arma::sum(J, 1)),
                   arma::mat(arma::zeros(y.n_elem, 1)), 1e-16));
  EXPECT_TRUE(near("J", J, attn::math::softmax_jacobian(y), 1e-16));
}

// J^T g, as the Jacobian would give it.
TEST(Exercise5_2, EqualsTheJacobiansProduct) {
  const arma::rowvec y = attn::math::softmax(kScores);
  const arma::rowvec g{1.0, -2.0, 0.5, 3.0, -0.25};
  EXPECT_TRUE(
      near("dL/ds", softmax_backward_row(y, g), g * attn::math::softmax_jacobian(y), 1e-15));
}

// Against finite differences of L(s) = g · softmax(s).
TEST(Exercise5_2, MatchesFiniteDifferences) {
  const arma::rowvec g{1.0, -2.0, 0.5, 3.0, -0.25};
  const arma::rowvec expected = attn_exercise::central_differences(
      [&](const arma::rowvec& s) { return arma::dot(g, attn::math::softmax(s)); }, kScores, 1e-6);
  EXPECT_TRUE(near("dL/ds", softmax_backward_row(attn::math::softmax(kScores), g), expected, 1e-9));
}

// A long row of equal weights 1/m, where the answer is known: dL/ds_j = (g_j − mean(g)) / m.
TEST(Exercise5_2, ALongRowOfEqualWeights) {
  const arma::uword m = 4096;
  const arma::rowvec y(m, arma::fill::value(1.0 / m));
  const arma::rowvec g = arma::linspace<arma::rowvec>(-1.0, 1.0, m);  // mean(g) = 0
  EXPECT_TRUE(near("dL/ds for 4096 equal weights", softmax_backward_row(y, g), g / m, 1e-18));
}

// Lengths that differ are refused.
TEST(Exercise5_2, MismatchedLengthsAreRefused) {
  EXPECT_THROW(softmax_backward_row(arma::rowvec{0.5, 0.5}, arma::rowvec{1.0, 2.0, 3.0}),
               std::invalid_argument)
      << "2 weights against 3 upstream gradients";
}
