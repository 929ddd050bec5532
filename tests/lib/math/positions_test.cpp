// Positions (attn::math::sinusoidal_positions, attn::math::rotary): equal to numpy's on its
// fixtures (tests/data/generate_position_fixtures.py), their defining properties over random
// shapes, their gradients against finite differences, and their errors.
#include <attn/math/attention.hpp>
#include <attn/math/backward.hpp>
#include <attn/math/gradient_check.hpp>
#include <attn/math/positions.hpp>
#include <attn/math/validate.hpp>

#include <gtest/gtest.h>

#include "fixture_blocks.hpp"
#include "normal_inputs.hpp"

#include <algorithm>
#include <map>
#include <string>

namespace {

// numpy's sine, cosine and power may differ from C's in the last bit. An angle a known to its
// last bit moves sin(a) by about a · 2⁻⁵², so the tolerance grows with the largest angle.
double tolerance_for(double largest_angle, double largest_entry = 1.0) {
  return 1e-15 * (1.0 + largest_angle) * std::max(1.0, largest_entry);
}
constexpr double kTolerance = 1e-6;  // finite differences against the analytic gradient

// The blocks of tests/data/numpy_positions.txt, by name.
std::map<std::string, arma::mat> numpy_blocks() {
  return attn_test::fixture_blocks("numpy_positions.txt");
}

TEST(SinusoidalPositions, EqualNumpysOnEveryFixture) {
  const auto blocks = numpy_blocks();
  int cases = 0;
  for (const auto& [name, expected] : blocks) {
    if (name.rfind("sinusoidal", 0) != 0)
      continue;
    ++cases;
    const arma::mat PE = attn::math::sinusoidal_positions(expected.n_rows, expected.n_cols);
    EXPECT_LE(arma::abs(PE - expected).max(), tolerance_for(expected.n_rows)) << name;
  }
  EXPECT_EQ(cases, 5) << "tests/data/numpy_positions.txt is missing or incomplete";
}

TEST(SinusoidalPositions, ArePairsOfSineAndCosine) {
  const arma::mat PE = attn::math::sinusoidal_positions(3, 6);
  EXPECT_DOUBLE_EQ(PE(2, 0), std::sin(2.0));
  EXPECT_DOUBLE_EQ(PE(2, 1), std::cos(2.0));
  EXPECT_DOUBLE_EQ(PE(2, 4), std::sin(2.0 / std::pow(10000.0, 4.0 / 6.0)));
  // sin² + cos² = 1 in every pair, at every position.
  const arma::mat PE2 = attn::math::sinusoidal_positions(40, 16);
  for (arma::uword i = 0; i < 8; ++i)
    EXPECT_LE(
        arma::abs(arma::square(PE2.col(2 * i)) + arma::square(PE2.col(2 * i + 1)) - 1.0).max(),
        1e-15);
}

TEST(SinusoidalPositions, ShiftIsARotationForEveryWidth) {
  for (arma::uword d : {2u, 4u, 16u, 64u, 512u})
    EXPECT_LE(attn::math::largest_shift_error(100, 20, d), 1e-12) << "d = " << d;
}

TEST(SinusoidalPositions, SimilarityDependsOnTheShiftOnly) {
  for (arma::uword d : {2u, 8u, 128u}) {
    const arma::rowvec at0 = attn::math::sinusoidal_similarity(0, 30, d);
    EXPECT_NEAR(at0(0), d / 2.0, 1e-12);  // PE(p)·PE(p) = Σ (sin² + cos²) = d / 2
    for (arma::uword p : {1u, 17u, 90u})
      EXPECT_LE(arma::abs(attn::math::sinusoidal_similarity(p, 30, d) - at0).max(), 1e-11)
          << d << " " << p;
  }
}

TEST(Rotary, EqualsNumpysInBothLayouts) {
  const auto blocks = numpy_blocks();
  int cases = 0;
  for (const auto& [name, X] : blocks) {
    if (name.rfind("input ", 0) != 0)
      continue;
    const std::string shape = name.substr(6);
    const arma::vec positions = blocks.at("positions " + shape).row(0).t();
    const double tolerance = tolerance_for(positions.max(), arma::abs(X).max());
    EXPECT_LE(arma::abs(attn::math::rotary(X, positions) - blocks.at("rotary interleaved " + shape))
                  .max(),
              tolerance)
        << shape;
    EXPECT_LE(arma::abs(attn::math::rotary(X, positions, attn::math::RotaryLayout::halves) -
                        blocks.at("rotary halves " + shape))
                  .max(),
              tolerance)
        << shape;
    ++cases;
  }
  EXPECT_EQ(cases, 4) << "tests/data/numpy_positions.txt is missing or incomplete";
}

TEST(Rotary, WorkedExampleDependsOnTheOffsetAndItsSign) {
  const arma::rowvec q = {1.0, 2.0}, k = {3.0, -1.0};
  const auto score = [&](double m, double n) {
    return arma::dot(attn::math::rotary(q, arma::vec{m}), attn::math::rotary(k, arma::vec{n}));
  };
  for (const auto& [m, n] : {std::pair{5.0, 3.0}, {2.0, 0.0}, {10.0, 8.0}})
    EXPECT_NEAR(score(m, n), -6.781228824, 5e-10) << m << ", " << n;
  EXPECT_NEAR(score(3.0, 5.0), 5.948935151, 5e-10);
  // The same four scores from numpy (tests/data/generate_position_fixtures.py), which is where
  // chapter 07's check table says they come from.
  const auto blocks = numpy_blocks();
  const auto found = blocks.find("rope worked example (m, n) = (5, 3) (2, 0) (10, 8) (3, 5)");
  ASSERT_NE(found, blocks.end()) << "tests/data/numpy_positions.txt has no worked RoPE example";
  const arma::rowvec numpy = found->second;
  const arma::rowvec ours = {score(5, 3), score(2, 0), score(10, 8), score(3, 5)};
  EXPECT_LE(arma::abs(ours - numpy).max(), 1e-12) << "ours " << ours << "numpy " << numpy;
  EXPECT_NEAR(numpy(0), -6.781228824, 5e-10);
  EXPECT_NEAR(numpy(3), 5.948935151, 5e-10);
}

// Over random shapes: the halves layout is the interleaved one with its columns reordered, so
// the rotated rows are a permutation of each other and the scores are equal; and every score
// depends on the two positions only through their offset.
class RotaryShapes : public ::testing::TestWithParam<std::tuple<int, int, int>> {};

TEST_P(RotaryShapes, LayoutsArePermutationsOfEachOther) {
  const auto [n, m, d] = GetParam();
  const attn_test::Normals draw(static_cast<std::uint64_t>(n * 100 + m * 10 + d));
  const arma::mat Q = draw.normal(n, d), K = draw.normal(m, d);
  const arma::vec qp = arma::randi<arma::vec>(n, arma::distr_param(0, 500));
  const arma::vec kp = arma::randi<arma::vec>(m, arma::distr_param(0, 500));
  const arma::uvec order = attn::math::halves_from_interleaved(d);
  EXPECT_TRUE(
      arma::approx_equal(attn::math::rotary(Q.cols(order), qp, attn::math::RotaryLayout::halves),
                         attn::math::rotary(Q, qp).cols(order), "absdiff", 0.0));
  EXPECT_LE(attn::math::rotary_layout_error(Q, K, qp, kp), 1e-13);
}

TEST_P(RotaryShapes, ScoresDependOnTheOffsetOnly) {
  const auto [n, m, d] = GetParam();
  const attn_test::Normals draw(static_cast<std::uint64_t>(n * 7 + m * 3 + d));
  const arma::mat Q = draw.normal(n, d), K = draw.normal(n, d);
  const arma::vec at = arma::randi<arma::vec>(n, arma::distr_param(0, 300));
  for (double shift : {1.0, 13.0, 250.0})
    EXPECT_LE(attn::math::rotary_shift_error(Q, K, at, shift), 1e-11);
  (void)m;
}

TEST_P(RotaryShapes, RotationKeepsLengthsAndUndoesWithItsBackward) {
  const auto [n, m, d] = GetParam();
  const attn_test::Normals draw(static_cast<std::uint64_t>(n + m + d));
  const arma::mat X = draw.normal(n, d);
  const arma::vec at = arma::randi<arma::vec>(n, arma::distr_param(0, 1000));
  const arma::mat Y = attn::math::rotary(X, at);
  EXPECT_LE(arma::abs(arma::sum(arma::square(Y), 1) - arma::sum(arma::square(X), 1)).max(), 1e-12);
  EXPECT_LE(arma::abs(attn::math::rotary_backward(Y, at) - X).max(), 1e-12);
  (void)m;
}

INSTANTIATE_TEST_SUITE_P(Shapes, RotaryShapes,
                         ::testing::Values(std::make_tuple(1, 1, 2), std::make_tuple(5, 5, 4),
                                           std::make_tuple(3, 7, 8), std::make_tuple(6, 2, 64),
                                           std::make_tuple(2, 9, 128)));

// A scalar loss of attention's output, L = Σ Z ∘ R, for the gradient checks.
double loss(const attn::math::Attention& a, const arma::mat& R) {
  return arma::accu(a.output % R);
}

TEST(PositionGradients, AddedPositionsPassTheGradientThrough) {
  const attn_test::Normals draw(11);
  const arma::mat X = draw.normal(4, 6), R = draw.normal(4, 3);
  const attn::math::Projections W{draw.normal(6, 3), draw.normal(6, 3), draw.normal(6, 3)};
  const arma::mat PE = attn::math::sinusoidal_positions(4, 6);
  // ∂L/∂X = ∂L/∂(X + PE): the encodings are constants.
  const arma::mat dX = attn::math::self_attention_backward(X + PE, W, R).dX;
  const auto check = attn::math::check_gradient(
      [&](const arma::mat& x) { return loss(attn::math::self_attention(x + PE, W), R); }, X, dX);
  EXPECT_LT(check.max_relative_error, kTolerance) << "entry " << check.worst_entry;
}

TEST(PositionGradients, RotaryBackwardMatchesFiniteDifferences) {
  const attn_test::Normals draw(12);
  const arma::mat Q = draw.normal(5, 4), K = draw.normal(5, 4), V = draw.normal(5, 3),
                  R = draw.normal(5, 3);
  const arma::vec at = {0.0, 1.0, 2.0, 7.0, 30.0};
  const double c = attn::math::score_scale(4);
  const auto forward = [&](const arma::mat& q, const arma::mat& k) {
    return attn::math::attend(attn::math::rotary(q, at), attn::math::rotary(k, at), V, c);
  };
  const attn::math::Attention a = forward(Q, K);
  const attn::math::AttentionGradients g =
      attn::math::attend_backward(attn::math::rotary(Q, at), attn::math::rotary(K, at), V, a, R, c);
  //! [rotary-gradient]
  // RoPE's backward: the gradient of the rotated rows, rotated back.
  const arma::mat dQ = attn::math::rotary_backward(g.dQ, at);
  const arma::mat dK = attn::math::rotary_backward(g.dK, at);
  //! [rotary-gradient]
  const auto q_check =
      attn::math::check_gradient([&](const arma::mat& q) { return loss(forward(q, K), R); }, Q, dQ);
  const auto k_check =
      attn::math::check_gradient([&](const arma::mat& k) { return loss(forward(Q, k), R); }, K, dK);
  EXPECT_LT(q_check.max_relative_error, kTolerance) << "dQ entry " << q_check.worst_entry;
  EXPECT_LT(k_check.max_relative_error, kTolerance) << "dK entry " << k_check.worst_entry;
  for (auto layout : {attn::math::RotaryLayout::interleaved, attn::math::RotaryLayout::halves}) {
    const arma::mat Rq = draw.normal(5, 4);  // ⟨rotary(X), R⟩ = ⟨X, rotary_backward(R)⟩
    EXPECT_NEAR(arma::accu(attn::math::rotary(Q, at, layout) % Rq),
                arma::accu(Q % attn::math::rotary_backward(Rq, at, layout)), 1e-12);
  }
}

TEST(PositionErrors, SayWhatIsWrong) {
  const auto message = [](const auto& call) {
    try {
      call();
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message([] { attn::math::sinusoidal_positions(4, 5); }),
            "sinusoidal_positions: the width d = 5 must be even and positive, since the columns "
            "are used in pairs");
  EXPECT_THROW(attn::math::sinusoidal_positions(4, 0), attn::math::InputError);
  EXPECT_THROW(attn::math::sinusoidal_positions(0, 4), attn::math::InputError);
  EXPECT_THROW(attn::math::sinusoidal_positions(4, 4, 1.0), attn::math::InputError);
  EXPECT_THROW(attn::math::rotary(arma::mat(2, 3, arma::fill::ones), arma::vec{0.0, 1.0}),
               attn::math::InputError);
  EXPECT_EQ(message([] {
              attn::math::rotary(arma::mat(2, 2, arma::fill::ones), arma::vec{0.0, -1.0});
            }),
            "rotary: position -1 of row 1 is not a position (positions are finite and at least 0)");
  EXPECT_THROW(
      attn::math::rotary(arma::mat(2, 2, arma::fill::ones), arma::vec{0.0, arma::datum::nan}),
      attn::math::InputError);
  EXPECT_EQ(message([] {
              attn::math::rotary(arma::mat(3, 2, arma::fill::ones), arma::vec{0.0, 1.0});
            }),
            "rotary: 2 positions for X (3 × 2), which needs one per row");
  arma::mat with_nan(2, 2, arma::fill::ones);
  with_nan(1, 0) = arma::datum::inf;
  EXPECT_THROW(attn::math::rotary(with_nan, arma::vec{0.0, 1.0}), attn::math::InputError);
  EXPECT_THROW(
      attn::math::rotary_layout_error(arma::mat(2, 4), arma::mat(2, 6), arma::vec(2), arma::vec(2)),
      attn::math::ShapeError);
  EXPECT_THROW(attn::math::halves_from_interleaved(7), attn::math::InputError);
}

}  // namespace
