#include <attn/math/validate.hpp>

#include <gtest/gtest.h>

#include <limits>

namespace {

TEST(Validate, ShapesAreWrittenRowsFirst) {
  EXPECT_EQ(attn::math::shape_of(arma::mat(3, 2)), "(3 × 2)");
  EXPECT_EQ(attn::math::shape_of(arma::rowvec(4)), "(1 × 4)");
}

TEST(Validate, FiniteCheckNamesTheOperandAndEntry) {
  arma::mat m(2, 2, arma::fill::zeros);
  m(0, 1) = -std::numeric_limits<double>::infinity();
  try {
    attn::math::require_finite("W_Q", m);
    FAIL() << "infinity accepted";
  } catch (const attn::math::InputError& e) {
    EXPECT_STREQ(e.what(),
                 "W_Q has a non-finite entry -inf at row 0, column 1: attention is "
                 "defined on finite numbers only");
  }
  EXPECT_NO_THROW(attn::math::require_finite("ok", arma::mat(2, 2, arma::fill::ones)));
}

TEST(Validate, EmptyIsRejected) {
  EXPECT_THROW(attn::math::require_nonempty("E", arma::mat(0, 2)), attn::math::InputError);
  EXPECT_NO_THROW(attn::math::require_nonempty("E", arma::mat(1, 1)));
}

TEST(Validate, MultipliableNeedsInnerDimensionsToAgree) {
  EXPECT_NO_THROW(
      attn::math::require_multipliable("A B", "A", arma::mat(2, 3), "B", arma::mat(3, 5)));
  EXPECT_THROW(attn::math::require_multipliable("A B", "A", arma::mat(2, 3), "B", arma::mat(2, 3)),
               attn::math::ShapeError);
}

}  // namespace
