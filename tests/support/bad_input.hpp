// What the BadInput tests of every layer share (bad_input_*_test.cpp): the values that break
// arithmetic, and an assertion that an exception names what was wrong.
#pragma once

#include <gtest/gtest.h>

#include <exception>
#include <limits>
#include <string>

namespace attn_bad_input {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

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
