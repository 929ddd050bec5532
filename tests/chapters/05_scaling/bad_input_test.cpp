// sharpness() names a score that is not finite, as the softmax it takes does.
#include <05_scaling/measure.hpp>
#include <attn/math/validate.hpp>

#include "bad_input.hpp"

#include <gtest/gtest.h>

namespace {

using attn_bad_input::kInf;
using attn_bad_input::ThrowsNaming;

TEST(BadInput, SharpnessNamesAnInfiniteScore) {
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] {
        attn::ch05::sharpness(arma::rowvec{kInf, 0.0});
      },
      "softmax input"));
}

}  // namespace
