// Bad numbers, defined behaviour (issue 17), numpy layer: NaN and ±∞ are numbers to numpy, so
// rounding keeps them and printing writes them as numpy does; what numpy would turn into NaN
// everywhere (a scale 10^k that is not a finite double) is an error naming the argument.
#include <attn/numpy/numpy_print.hpp>
#include <attn/numpy/numpy_random.hpp>

#include "bad_input.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace {

using attn_bad_input::kInf;
using attn_bad_input::kNaN;
using attn_bad_input::ThrowsNaming;

TEST(BadInput, NumpyRoundKeepsNaNAndInfinities) {
  EXPECT_TRUE(std::isnan(attn::numpy::round(kNaN, 2)));
  EXPECT_EQ(attn::numpy::round(kInf, 3), kInf);
  EXPECT_EQ(attn::numpy::round(-kInf, 0), -kInf);
  const arma::mat r = attn::numpy::round(arma::mat{{kNaN, -kInf, 0.125}}, 2);
  EXPECT_TRUE(std::isnan(r(0, 0)));
  EXPECT_EQ(r(0, 1), -kInf);
  EXPECT_EQ(r(0, 2), 0.12);
  EXPECT_TRUE(attn::numpy::round(arma::mat(0, 3), 2).is_empty());
}

TEST(BadInput, NumpyRoundNamesDecimalsOutOfRange) {
  // 10^400 is not a double: every result would have been inf / inf = NaN.
  EXPECT_TRUE(
      ThrowsNaming<std::invalid_argument>([] { attn::numpy::round(1.5, 400); }, "decimals = 400"));
  EXPECT_TRUE(
      ThrowsNaming<std::invalid_argument>([] { attn::numpy::round(1.5, -1); }, "decimals = -1"));
  EXPECT_TRUE(ThrowsNaming<std::invalid_argument>(
      [] {
        attn::numpy::round(arma::mat{{1.0, 2.0}}, 309);
      },
      "decimals = 309"));
  EXPECT_EQ(attn::numpy::round(1.5, 308), 1.5);  // the largest accepted
}

TEST(BadInput, NumpyPrintsNaNAndInfinitiesAsNumpyDoes) {
  // What numpy 1.24 prints for np.array([nan, 1.]), [inf, -inf, 1.5] and [nan].
  EXPECT_EQ(attn::numpy::array_str(arma::rowvec{kNaN, 1.0}), "[nan  1.]");
  EXPECT_EQ(attn::numpy::array_str(arma::rowvec{kInf, -kInf, 1.5}), "[ inf -inf  1.5]");
  EXPECT_EQ(attn::numpy::array_str(arma::rowvec{kNaN}), "[nan]");
  EXPECT_EQ(attn::numpy::matrix_str(arma::mat{{kNaN, 1.0}, {0.5, -kInf}}),
            "[[ nan  1. ]\n [ 0.5 -inf]]");
}

TEST(BadInput, NumpyPrintsEmptyArraysAsBrackets) {
  EXPECT_EQ(attn::numpy::array_str(arma::rowvec()), "[]");
  EXPECT_EQ(attn::numpy::matrix_str(arma::mat(0, 3)), "[]");
  EXPECT_EQ(attn::numpy::shape_str(arma::mat(0, 3)), "(0, 3)");
}

TEST(BadInput, NumpyNormalOfNoEntriesDrawsNothing) {
  attn::numpy::Generator rng = attn::numpy::default_rng(7);
  const arma::mat none = rng.normal(0, 3);
  EXPECT_EQ(none.n_rows, 0u);
  EXPECT_EQ(none.n_cols, 3u);
  attn::numpy::Generator fresh = attn::numpy::default_rng(7);
  EXPECT_EQ(rng.next_uint64(), fresh.next_uint64());  // the stream did not move
  EXPECT_TRUE(rng.normal(2, 2).is_finite());
  EXPECT_TRUE(attn::numpy::SeedSequence(1).generate_state_u64(0).empty());
}

TEST(BadInput, NumpySeedTextThatIsNotANumberIsQuoted) {
  EXPECT_TRUE(
      ThrowsNaming<std::invalid_argument>([] { attn::numpy::default_rng("nan"); }, "\"nan\""));
  EXPECT_TRUE(
      ThrowsNaming<std::invalid_argument>([] { attn::numpy::default_rng("-inf"); }, "\"-inf\""));
  EXPECT_TRUE(ThrowsNaming<std::invalid_argument>(
      [] { static_cast<void>(attn::numpy::SeedSequence(std::string())); }, "empty string"));
}

}  // namespace
