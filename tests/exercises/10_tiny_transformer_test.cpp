// Chapter 10's exercises: layer norm's backward pass for one row, and the cross-entropy of one
// row of logits, against the library, finite differences and the chapter's numbers.
#include "10_tiny_transformer.hpp"

#include "exercise_checks.hpp"

#include <attn/math/layers.hpp>
#include <attn/math/validate.hpp>
#include <attn/numpy/numpy_random.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

using attn_exercise::near;
using namespace attn::exercises;

namespace {

// A row to normalise, a gamma and an upstream gradient, all of width 6.
struct Row {
  arma::rowvec x, gamma, dy;
};

Row random_row(std::uint64_t seed) {
  attn::numpy::Generator rng = attn::numpy::default_rng(seed);
  Row row;
  row.x = 2.0 * rng.normal(1, 6) + 0.5;
  row.gamma = 1.0 + 0.3 * rng.normal(1, 6);
  row.dy = rng.normal(1, 6);
  return row;
}

// L(x) = Σ_j dy_j y_j, with y the library's layer norm of x (β = 0).
double loss(const Row& row, const arma::rowvec& x) {
  const arma::rowvec beta(x.n_elem, arma::fill::zeros);
  const attn::math::LayerNorm forward = attn::math::layer_norm(x, row.gamma, beta);
  return arma::accu(row.dy % forward.y);
}

}  // namespace

// The library's backward pass on a one-row matrix gives the same row.
TEST(Exercise10_1, EqualsTheLibrarysBackwardPass) {
  for (const std::uint64_t seed : {10U, 11U, 12U}) {
    const Row row = random_row(seed);
    const arma::rowvec beta(row.x.n_elem, arma::fill::zeros);
    const attn::math::LayerNorm forward = attn::math::layer_norm(row.x, row.gamma, beta);
    const arma::mat expected = attn::math::layer_norm_backward(forward, row.gamma, row.dy).dx;
    EXPECT_TRUE(near("dL/dx (seed " + std::to_string(seed) + ")",
                     layer_norm_backward_row(row.x, row.gamma, row.dy), expected, 1e-13));
  }
}

// Central finite differences, (L(x + h e_j) − L(x − h e_j)) / 2h, entry by entry.
TEST(Exercise10_1, AgreesWithFiniteDifferences) {
  const Row row = random_row(13);
  const arma::rowvec numeric = attn_exercise::central_differences(
      [&](const arma::rowvec& x) { return loss(row, x); }, row.x, 1e-5);
  EXPECT_TRUE(near("dL/dx against finite differences",
                   layer_norm_backward_row(row.x, row.gamma, row.dy), numeric, 1e-7));
}

// Adding the same c to every x_j moves μ by c and leaves x − μ, σ and so y unchanged: L does not
// change along (1, ..., 1), so the gradient has no component along it, and its entries sum to 0.
// (That holds for any gamma; the test tries gamma = 1, as nn.LayerNorm starts, and a random one.)
TEST(Exercise10_1, TheGradientSumsToZero) {
  Row row = random_row(14);
  const arma::rowvec with_random_gamma = layer_norm_backward_row(row.x, row.gamma, row.dy);
  row.gamma.ones();
  const arma::rowvec with_unit_gamma = layer_norm_backward_row(row.x, row.gamma, row.dy);
  EXPECT_TRUE(
      near("the sum of dL/dx's entries, gamma all ones", arma::accu(with_unit_gamma), 0.0, 1e-13))
      << "shifting every x_j by the same amount does not change layer norm's output";
  EXPECT_TRUE(near("the sum of dL/dx's entries, a random gamma", arma::accu(with_random_gamma), 0.0,
                   1e-13));
}

// gamma or dy of the wrong width is refused, with both shapes in the message.
TEST(Exercise10_1, AShapeMismatchNamesBothShapes) {
  const Row row = random_row(15);
  const arma::rowvec five(5, arma::fill::ones);
  struct Case {
    std::string name;
    arma::rowvec gamma, dy;
  };
  for (const Case& c : {Case{"gamma", five, row.dy}, Case{"dy", row.gamma, five}}) {
    try {
      layer_norm_backward_row(row.x, c.gamma, c.dy);
      ADD_FAILURE() << "x is (1 × 6) and " << c.name
                    << " is (1 × 5): layer_norm_backward_row must throw std::invalid_argument";
    } catch (const std::invalid_argument& error) {
      const std::string message = error.what();
      for (const std::string& shape : {attn::math::shape_of(row.x), attn::math::shape_of(five)}) {
        EXPECT_NE(message.find(shape), std::string::npos)
            << "with " << c.name << " (1 × 5), the message \"" << message
            << "\" does not name the shape " << shape;
      }
    }
  }
}

// A model that knows nothing gives every one of chapter 10's 35 words the same logit: its loss
// is ln 35, and the chapter's first held-out loss, 3.5593, is within 0.1 of it.
TEST(Exercise10_2, EqualLogitsOver35WordsGiveLn35) {
  const arma::rowvec zeros(35, arma::fill::zeros), sevens(35, arma::fill::value(7.0));
  EXPECT_TRUE(
      near("the loss of 35 logits of 0", cross_entropy_row(zeros, 4), std::log(35.0), 1e-14));
  EXPECT_TRUE(
      near("the loss of 35 logits of 7", cross_entropy_row(sevens, 34), std::log(35.0), 1e-14));
  EXPECT_TRUE(near("the loss of 35 equal logits, to 4 decimals (ln 35 = 3.5553)",
                   cross_entropy_row(zeros, 0), 3.5553, 5e-5));
  EXPECT_TRUE(near("the chapter's first held-out loss against 35 equal logits' (within 0.1)",
                   cross_entropy_row(zeros, 0), 3.5593, 0.1));
}

// Logits near 1000 overflow e^z; shifted by the largest they give the same, finite loss.
TEST(Exercise10_2, LargeLogitsStayFinite) {
  const arma::rowvec large{1000.0, 999.0, 998.0}, small{2.0, 1.0, 0.0};
  const double loss_large = cross_entropy_row(large, 1);
  EXPECT_TRUE(std::isfinite(loss_large))
      << "the loss of [1000 999 998] for target 1 is " << loss_large
      << "; take the largest logit out before the exponential";
  EXPECT_TRUE(near("the loss of [1000 999 998], target 1 (the same as of [2 1 0])", loss_large,
                   cross_entropy_row(small, 1), 1e-13));
  EXPECT_TRUE(near("the loss of [2 1 0], target 1", cross_entropy_row(small, 1),
                   std::log(std::exp(1.0) + 1.0 + std::exp(-1.0)), 1e-14));
}

// One row of attn::math::cross_entropy, for every target of a random row of 35 logits.
TEST(Exercise10_2, EqualsTheLibrarysCrossEntropy) {
  attn::numpy::Generator rng = attn::numpy::default_rng(35);
  const arma::rowvec logits = 3.0 * rng.normal(1, 35);
  for (arma::uword t = 0; t < logits.n_elem; ++t) {
    const double expected = attn::math::cross_entropy(logits, arma::uvec{t}).loss;
    EXPECT_TRUE(near("the loss for target " + std::to_string(t), cross_entropy_row(logits, t),
                     expected, 1e-14));
  }
}

// A target past the last word is refused, not read from outside the row.
TEST(Exercise10_2, ATargetOutsideTheRowIsRefused) {
  const arma::rowvec logits{0.5, -1.0, 2.0};
  EXPECT_THROW(cross_entropy_row(logits, 3), std::out_of_range)
      << "logits has 3 columns (0, 1, 2), so target 3 must throw std::out_of_range";
  EXPECT_THROW(cross_entropy_row(logits, 100), std::out_of_range)
      << "logits has 3 columns, so target 100 must throw std::out_of_range";
}
