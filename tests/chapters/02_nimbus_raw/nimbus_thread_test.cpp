// Chapter 02's designed example: the shapes of the design and the numbers the Module 2.1
// article prints, before rounding.
#include <02_nimbus_raw/nimbus_thread.hpp>
#include <attn/book/grid_text.hpp>
#include <attn/math/attention.hpp>
#include <attn/math/validate.hpp>

#include <gtest/gtest.h>

#include <cmath>

namespace {

using attn::book::token_index;
using attn::ch02::nimbus_thread;

TEST(NimbusThread, ShapesMatchTheDesign) {
  const auto t = nimbus_thread();
  EXPECT_EQ(t.tokens.size(), 6u);
  EXPECT_EQ(attn::math::shape_of(t.embeddings), "(6 × 2)");
  EXPECT_EQ(attn::math::shape_of(t.projections.W_Q), "(2 × 2)");
  EXPECT_NE(arma::det(t.projections.W_V), 0.0) << "W_V must keep all information";
}

TEST(NimbusThread, ReproducesModuleNumbersBeforeRounding) {
  const auto t = nimbus_thread();
  const attn::math::QKV qkv = attn::math::project(t.embeddings, t.projections);
  const arma::uword exp = token_index(t.tokens, "export"), fail = token_index(t.tokens, "fail");
  EXPECT_NEAR(qkv.Q(exp, 0), 0.35, 1e-12);
  EXPECT_NEAR(qkv.Q(exp, 1), 0.22, 1e-12);
  EXPECT_NEAR(arma::dot(qkv.Q.row(exp), qkv.K.row(fail)) / std::sqrt(2.0), 0.504 / std::sqrt(2.0),
              1e-12);
}

}  // namespace
