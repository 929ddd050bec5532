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
  const attn::examples::NimbusThread t = attn::examples::nimbus_thread();
  const attn::QKV qkv = attn::project(t.embeddings, t.projections);
  attn::Attention a = attn::scaled_dot_product_attention(qkv.Q, qkv.K, qkv.V);
  a.weights(1, 2) = kNaN;  // would have been written out as "nan"
  EXPECT_TRUE(ThrowsNaming<attn::InputError>(
      [&] { attn::token_walk(t.tokens, t.embeddings, t.projections, a, 1); }, "attention.weights"));
  a = attn::scaled_dot_product_attention(qkv.Q, qkv.K, qkv.V);
  arma::mat X = t.embeddings;
  X(0, 1) = kInf;
  EXPECT_TRUE(ThrowsNaming<attn::InputError>(
      [&] { attn::token_walks(t.tokens, X, t.projections, a); }, "X has a non-finite entry inf"));
  a.output.shed_row(5);  // used to be read past its end
  EXPECT_TRUE(ThrowsNaming<attn::ShapeError>(
      [&] { attn::walk_through(t.tokens, t.embeddings, t.projections, a, 5); }, "output (5 × 2)"));
}

}  // namespace
