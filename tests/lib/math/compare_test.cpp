// relative_gap(), the one number the tests hold a fast or streaming result to.
#include <attn/math/compare.hpp>
#include <attn/math/validate.hpp>

#include <gtest/gtest.h>

namespace {

TEST(RelativeGap, RelativeToTheReferencesLargestEntry) {
  EXPECT_DOUBLE_EQ(attn::math::relative_gap(arma::mat{{1.0, 2.0}}, arma::mat{{1.0, 2.5}}),
                   0.5 / 2.5);
  EXPECT_DOUBLE_EQ(attn::math::relative_gap(arma::mat{{0.1, 0.0}}, arma::mat{{0.3, 0.0}}),
                   0.2);  // absolute
  EXPECT_THROW(attn::math::relative_gap(arma::mat(2, 2), arma::mat(2, 3)), attn::math::ShapeError);
}

}  // namespace
