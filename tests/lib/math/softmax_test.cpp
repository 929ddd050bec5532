#include <attn/math/softmax.hpp>
#include <attn/math/validate.hpp>

#include <gtest/gtest.h>

#include <limits>

namespace {

const arma::mat kScores = {{0.2, 1.0, 0.7}, {-3.0, 0.0, 3.0}, {5.0, 5.0, 5.0}};

TEST(Softmax, EveryRowSumsToOne) {
  const arma::mat w = attn::math::softmax_rows(kScores);
  for (arma::uword i = 0; i < w.n_rows; ++i)
    EXPECT_NEAR(arma::accu(w.row(i)), 1.0, 1e-15);
  EXPECT_TRUE(arma::all(arma::vectorise(w) > 0.0));
}

TEST(Softmax, KnownValues) {
  const arma::rowvec w = attn::math::softmax(arma::rowvec{0.2, 1.0, 0.7});
  const double z = std::exp(0.2) + std::exp(1.0) + std::exp(0.7);
  EXPECT_NEAR(w(0), std::exp(0.2) / z, 1e-15);
  EXPECT_NEAR(w(1), std::exp(1.0) / z, 1e-15);
  EXPECT_NEAR(w(2), std::exp(0.7) / z, 1e-15);
}

TEST(Softmax, EqualScoresGiveEqualWeights) {
  const arma::rowvec w = attn::math::softmax(arma::rowvec{5.0, 5.0, 5.0, 5.0});
  for (double v : w)
    EXPECT_DOUBLE_EQ(v, 0.25);
}

TEST(Softmax, AddingAConstantToARowChangesNothing) {
  arma::mat shifted = kScores;
  shifted.row(0) += 17.0;
  shifted.row(1) -= 40.0;
  EXPECT_TRUE(arma::approx_equal(attn::math::softmax_rows(shifted),
                                 attn::math::softmax_rows(kScores), "absdiff", 1e-14));
}

TEST(Softmax, LargeMagnitudesStayFinite) {
  const arma::rowvec near_zero = {0.0, 1.0, 2.0};
  for (double offset : {1e3, -1e3, 1e300 / 1e10}) {
    const arma::rowvec w = attn::math::softmax(near_zero + offset);
    ASSERT_TRUE(w.is_finite()) << "offset " << offset;
    if (std::abs(offset) <= 1e3) {
      EXPECT_TRUE(arma::approx_equal(w, attn::math::softmax(near_zero), "absdiff", 1e-12));
    }
  }
}

TEST(Softmax, SoftmaxIsRowWiseNotWholeMatrix) {
  // Each row is its own distribution: a row's weights ignore the other rows entirely.
  const arma::mat w = attn::math::softmax_rows(kScores);
  const arma::rowvec e = arma::exp(kScores.row(1));  // row 1 by hand: [-3, 0, 3]
  EXPECT_TRUE(arma::approx_equal(w.row(1), e / arma::accu(e), "absdiff", 1e-15));
  EXPECT_NEAR(arma::accu(w), static_cast<double>(kScores.n_rows), 1e-14);
}

TEST(Softmax, RejectsNaNAndInfinityNamingTheEntry) {
  arma::mat bad = kScores;
  bad(1, 2) = std::numeric_limits<double>::quiet_NaN();
  try {
    attn::math::softmax_rows(bad);
    FAIL() << "NaN accepted";
  } catch (const attn::math::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("row 1, column 2"), std::string::npos) << e.what();
  }
  bad(1, 2) = std::numeric_limits<double>::infinity();
  EXPECT_THROW(attn::math::softmax_rows(bad), attn::math::InputError);
}

TEST(Softmax, RejectsEmptyInput) {
  EXPECT_THROW(attn::math::softmax_rows(arma::mat(0, 3)), attn::math::InputError);
  EXPECT_THROW(attn::math::softmax(arma::rowvec()), attn::math::InputError);
}

}  // namespace
