// What the BadInput tests of every layer share (bad_input_*_test.cpp): the values that break
// arithmetic, the matrices they are planted in, and an assertion that an exception names what
// was wrong.
#pragma once

#include <gtest/gtest.h>
#include <armadillo>

#include <cmath>
#include <exception>
#include <limits>
#include <string>

namespace attn_bad_input {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

/// An (r × c) matrix of ones.
inline arma::mat ones(arma::uword r, arma::uword c) {
  return arma::mat(r, c, arma::fill::ones);
}

/// `m` with entry (r, c) replaced by `v`.
inline arma::mat with(arma::mat m, arma::uword r, arma::uword c, double v) {
  m(r, c) = v;
  return m;
}

/// A small, well-conditioned (n × d) input: distinct rows, so that no attention weight is
/// exactly uniform and no draw is degenerate.
inline arma::mat tokens(arma::uword n, arma::uword d) {
  arma::mat X(n, d);
  for (arma::uword i = 0; i < n; ++i)
    for (arma::uword j = 0; j < d; ++j)
      X(i, j) = std::sin(1.0 + 0.7 * static_cast<double>(i) + 1.3 * static_cast<double>(j));
  return X;
}

/// Success when `f` throws an `E` (or a class derived from it) whose message contains `text`.
template <class E, class F>
testing::AssertionResult ThrowsNaming(F&& f, const std::string& text) {
  try {
    f();
  } catch (const E& e) {
    if (std::string(e.what()).find(text) != std::string::npos)
      return testing::AssertionSuccess();
    return testing::AssertionFailure()
           << "the message \"" << e.what() << "\" does not name \"" << text << "\"";
  } catch (const std::exception& e) {
    return testing::AssertionFailure() << "another exception was thrown: " << e.what();
  }
  return testing::AssertionFailure() << "nothing was thrown";
}

}  // namespace attn_bad_input
