// Bad input to chapter 04's random sentence: a setup it cannot draw is named.
#include <04_self_attention/random_sentence.hpp>

#include "bad_input.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>

namespace {

using attn_bad_input::kInf;
using attn_bad_input::kNaN;
using attn_bad_input::ThrowsNaming;

TEST(BadInput, RandomSentenceNamesABadSetup) {
  EXPECT_TRUE(ThrowsNaming<std::invalid_argument>(
      [] {
        attn::ch04::random_sentence("1", "a b", {8, 4, 4, kNaN});
      },
      "weight_scale = nan"));
  EXPECT_TRUE(ThrowsNaming<std::invalid_argument>(
      [] {
        attn::ch04::random_sentence("1", "a b", {8, 0, 4, 0.5});
      },
      "d_k = 0"));
}

}  // namespace
