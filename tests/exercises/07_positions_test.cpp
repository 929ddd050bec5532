// Chapter 07's exercises: RoPE's turn of a pair, with the chapter's q·k scores, and a row of the
// sinusoidal encoding, with the chapter's table and PE[1, 2] for d_model = 512.
#include "07_positions.hpp"

#include "exercise_checks.hpp"

#include <attn/math/positions.hpp>

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>

using attn_exercise::near;
using namespace attn::exercises;

namespace {

arma::rowvec as_row(const std::array<double, 2>& pair) {
  return {pair[0], pair[1]};
}

// Chapter 07's example: d = 2, θ = 1, q = (1, 2) at position m, k = (3, -1) at position n.
double chapter_score(double m, double n) {
  const std::array<double, 2> q = rotate_pair({1.0, 2.0}, m, 1.0);
  const std::array<double, 2> k = rotate_pair({3.0, -1.0}, n, 1.0);
  return q[0] * k[0] + q[1] * k[1];
}

}  // namespace

TEST(Exercise7_1, ChaptersScoresDependOnlyOnTheOffset) {
  // Chapter 07 prints these to 9 decimals: half a unit of the last digit is the tolerance.
  EXPECT_TRUE(near("q·k with q at 5, k at 3", chapter_score(5, 3), -6.781228824, 5e-10));
  EXPECT_TRUE(
      near("q·k with q at 2, k at 0 (the same offset)", chapter_score(2, 0), -6.781228824, 5e-10));
  EXPECT_TRUE(near("q·k with q at 10, k at 8 (the same offset)", chapter_score(10, 8), -6.781228824,
                   5e-10));
  EXPECT_TRUE(near("q·k with q at 3, k at 5 (the opposite offset)", chapter_score(3, 5),
                   5.948935151, 5e-10));
}

TEST(Exercise7_1, TurnsCounterclockwise) {
  // A quarter turn takes (1, 0) to (0, 1); two eighths of a turn take (0, 1) to (-1, 0).
  const double quarter = arma::datum::pi / 2.0;
  EXPECT_TRUE(near("(1, 0) at position 1 with frequency π/2",
                   as_row(rotate_pair({1.0, 0.0}, 1.0, quarter)), arma::rowvec{0.0, 1.0}, 1e-15));
  EXPECT_TRUE(near("(0, 1) at position 2 with frequency π/4",
                   as_row(rotate_pair({0.0, 1.0}, 2.0, quarter / 2.0)), arma::rowvec{-1.0, 0.0},
                   1e-15));
  EXPECT_TRUE(near("(0.3, -0.7) at position 0 (no turn at all)",
                   as_row(rotate_pair({0.3, -0.7}, 0.0, 1.0)), arma::rowvec{0.3, -0.7}, 0.0));
}

TEST(Exercise7_1, AgreesWithTheLibrarysRotary) {
  // attn::math::rotary turns pair i of row r by positions(r) · θ_i: with two columns θ = 1, and
  // with four the second pair (columns 2 and 3) has θ = rotary_frequencies(4)(1).
  const arma::mat X{
      {1.0, 2.0, 0.5, -1.5}, {3.0, -1.0, 2.0, 0.0}, {-0.5, 0.25, -3.0, 1.0}, {0.0, 4.0, 1.0, 1.0}};
  const arma::vec positions{0.0, 1.0, 7.0, 100.5};
  const double theta1 = attn::math::rotary_frequencies(4)(1);
  arma::mat first_pair(X.n_rows, 2), second_pair(X.n_rows, 2);
  for (arma::uword r = 0; r < X.n_rows; ++r) {
    first_pair.row(r) = as_row(rotate_pair({X(r, 0), X(r, 1)}, positions(r), 1.0));
    second_pair.row(r) = as_row(rotate_pair({X(r, 2), X(r, 3)}, positions(r), theta1));
  }
  EXPECT_TRUE(
      near("columns 0 and 1 turned with θ = 1 (row r at position 0, 1, 7, 100.5), "
           "against attn::math::rotary",
           first_pair, attn::math::rotary(X.cols(0, 1), positions), 1e-14));
  EXPECT_TRUE(
      near("columns 2 and 3 turned with θ = rotary_frequencies(4)(1), against "
           "attn::math::rotary of all four columns",
           second_pair, attn::math::rotary(X, positions).cols(2, 3), 1e-14));
}

TEST(Exercise7_1, ATurnKeepsTheLength) {
  // A rotation moves a pair around a circle: its length, √(x0² + x1²), does not change.
  const std::array<double, 2> pair{3.0, -4.0};
  for (const double position : {1.0, 2.5, 17.0, 1000.0}) {
    for (const double frequency : {1.0, 0.1, 1e-4}) {
      const std::array<double, 2> turned = rotate_pair(pair, position, frequency);
      std::ostringstream what;
      what << "the length of (3, -4) turned at position " << position << " with frequency "
           << frequency;
      EXPECT_TRUE(near(what.str(), std::hypot(turned[0], turned[1]), 5.0, 1e-14));
    }
  }
}

TEST(Exercise7_2, ChaptersRoundedTableForFourColumns) {
  // Chapter 07's np.round(PE, 4), d_model = 4, positions 0 to 3: half a unit of the 4th decimal.
  const arma::mat table{{0.0, 1.0, 0.0, 1.0},
                        {0.8415, 0.5403, 0.01, 1.0},
                        {0.9093, -0.4161, 0.02, 0.9998},
                        {0.1411, -0.99, 0.03, 0.9996}};
  for (arma::uword p = 0; p < table.n_rows; ++p) {
    EXPECT_TRUE(near("the row of position " + std::to_string(p) +
                         " (d_model = 4), against chapter 07's rounded table",
                     sinusoidal_row(p, 4), table.row(p), 5e-5));
  }
}

TEST(Exercise7_2, Position1Column2For512Columns) {
  // Chapter 07: "d_model = 512: PE[1, 2] = 0.8218561900175316".
  const arma::rowvec row = sinusoidal_row(1, 512);
  ASSERT_EQ(row.n_elem, 512u) << "the row for d_model = 512 should have 512 entries";
  EXPECT_TRUE(near("PE[1, 2] for d_model = 512", row(2), 0.8218561900175316, 1e-15));
}

TEST(Exercise7_2, MatchesTheLibrarysEncoding) {
  // attn::math::sinusoidal_positions(n, d) holds the rows of positions 0 to n - 1, one per row.
  const arma::uword positions = 20;
  for (const arma::uword d_model : {2u, 6u, 64u, 512u}) {
    arma::mat ours(positions, d_model);
    for (arma::uword p = 0; p < positions; ++p) {
      const arma::rowvec row = sinusoidal_row(p, d_model);
      ASSERT_EQ(row.n_elem, d_model) << "the row of position " << p << " for d_model = " << d_model
                                     << " should have " << d_model << " entries";
      ours.row(p) = row;
    }
    EXPECT_TRUE(near("your rows for positions 0 to 19 (row p is position p), d_model = " +
                         std::to_string(d_model) + ", against attn::math::sinusoidal_positions",
                     ours, attn::math::sinusoidal_positions(positions, d_model), 1e-14));
  }
}

TEST(Exercise7_2, AZeroOrOddWidthIsRefused) {
  EXPECT_THROW(sinusoidal_row(0, 5), std::invalid_argument)
      << "d_model = 5 cannot be split into pairs: sinusoidal_row must throw std::invalid_argument";
  EXPECT_THROW(sinusoidal_row(3, 0), std::invalid_argument)
      << "d_model = 0 has no columns: sinusoidal_row must throw std::invalid_argument";
}
