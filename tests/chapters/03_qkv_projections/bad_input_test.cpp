// Bad input to chapter 03's token walk: its page data is made from finite numbers only.
#include <02_nimbus_raw/nimbus_thread.hpp>
#include <03_qkv_projections/walkthrough.hpp>
#include <attn/math/attention.hpp>
#include <attn/math/validate.hpp>

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

TEST(BadInput, TokenWalkRejectsNonFiniteNumbers) {
  const attn::ch02::NimbusThread t = attn::ch02::nimbus_thread();
  const attn::math::QKV qkv = attn::math::project(t.embeddings, t.projections);
  attn::math::Attention a = attn::math::scaled_dot_product_attention(qkv.Q, qkv.K, qkv.V);
  a.weights(1, 2) = kNaN;  // would have been written out as "nan"
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { attn::ch03::token_walk(t.tokens, t.embeddings, t.projections, a, 1); },
      "attention.weights"));
  a = attn::math::scaled_dot_product_attention(qkv.Q, qkv.K, qkv.V);
  arma::mat X = t.embeddings;
  X(0, 1) = kInf;
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { attn::ch03::token_walks(t.tokens, X, t.projections, a); },
      "X has a non-finite entry inf"));
  a.output.shed_row(5);  // used to be read past its end
  EXPECT_TRUE(ThrowsNaming<attn::math::ShapeError>(
      [&] { attn::ch03::walk_through(t.tokens, t.embeddings, t.projections, a, 5); },
      "output (5 × 2)"));
}

}  // namespace
