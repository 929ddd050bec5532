// What the exercises' tests share: comparisons whose failure message says what is wrong (which
// entry, what it is, what it should be, and within what), not just that something failed, and
// the finite differences that several gradients are checked against.
#pragma once

#include <attn/math/validate.hpp>

#include <gtest/gtest.h>
#include <armadillo>

#include <cmath>
#include <functional>
#include <sstream>
#include <string>

namespace attn_exercise {

/// Passes if \p actual has \p expected's shape and every entry is within \p tolerance of it;
/// otherwise names \p what, the first entry that differs, both values and the tolerance.
inline ::testing::AssertionResult near(const std::string& what, const arma::mat& actual,
                                       const arma::mat& expected, double tolerance) {
  if (actual.n_rows != expected.n_rows || actual.n_cols != expected.n_cols) {
    return ::testing::AssertionFailure() << what << " has shape " << attn::math::shape_of(actual)
                                         << ", expected " << attn::math::shape_of(expected);
  }
  for (arma::uword i = 0; i < actual.n_rows; ++i) {
    for (arma::uword j = 0; j < actual.n_cols; ++j) {
      const double a = actual(i, j), e = expected(i, j);
      const bool same_infinity = std::isinf(a) && a == e;
      if (!same_infinity && !(std::abs(a - e) <= tolerance)) {
        std::ostringstream entry;
        entry.precision(10);
        entry << what << (actual.n_rows == 1 ? "" : " row " + std::to_string(i) + ",") << " entry "
              << j << " is " << a << ", expected " << e << " (within " << tolerance << ")";
        return ::testing::AssertionFailure() << entry.str();
      }
    }
  }
  return ::testing::AssertionSuccess();
}

/// near() for one number.
inline ::testing::AssertionResult near(const std::string& what, double actual, double expected,
                                       double tolerance) {
  return near(what, arma::mat{arma::rowvec{actual}}, arma::mat{arma::rowvec{expected}}, tolerance);
}

/// The central differences \f$(f(x + h e_j) - f(x - h e_j)) / 2h\f$ of a scalar function
/// \p f of a row, entry by entry: the gradient an answer's analytic one is held to.
inline arma::rowvec central_differences(const std::function<double(const arma::rowvec&)>& f,
                                        const arma::rowvec& x, double h) {
  arma::rowvec slope(x.n_elem);
  for (arma::uword j = 0; j < x.n_elem; ++j) {
    arma::rowvec up = x, down = x;
    up(j) += h;
    down(j) -= h;
    slope(j) = (f(up) - f(down)) / (2 * h);
  }
  return slope;
}

}  // namespace attn_exercise
