// One token's written-out equation (attn::walk_through) on the Nimbus thread.
#include <attn/examples.hpp>
#include <attn/validate.hpp>
#include <attn/walkthrough.hpp>

#include <gtest/gtest.h>

#include <string>

namespace {

struct Thread {
  attn::examples::NimbusThread t = attn::examples::nimbus_thread();
  attn::QKV qkv = attn::project(t.embeddings, t.projections);
  attn::Attention a = attn::scaled_dot_product_attention(qkv.Q, qkv.K, qkv.V);
};

TEST(WalkThrough, WritesModule21sScoreWithItsArithmetic) {
  const Thread n;
  const arma::uword exp = attn::examples::token_index(n.t.tokens, "export");
  const std::string text = attn::walk_through(n.t.tokens, n.t.embeddings, n.t.projections, n.a, exp);
  EXPECT_NE(text.find("  Q(export) = x(export) W_Q = [1.5 × 0.20 + 0.5 × 0.10, "
                      "1.5 × 0.10 + 0.5 × 0.14] = [0.35, 0.22]\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  Q(export) · K(fail) / √2 = (0.35 × 1.00 + 0.22 × 0.70) / 1.414 = 0.36\n"),
            std::string::npos) << text;
  EXPECT_NE(text.find("  Σ weights = 1.00\n"), std::string::npos) << text;
}

TEST(WalkThrough, EveryTokenHasFourSteps) {
  const Thread n;
  for (arma::uword t = 0; t < n.t.tokens.size(); ++t) {
    const std::string text = attn::walk_through(n.t.tokens, n.t.embeddings, n.t.projections, n.a, t);
    for (const char* step : {"step 1", "step 2", "step 3", "step 4"})
      EXPECT_NE(text.find(step), std::string::npos) << n.t.tokens[t] << " lacks " << step;
  }
}

TEST(WalkThrough, RefusesWhatItCannotWriteOut) {
  const Thread n;
  EXPECT_THROW(attn::walk_through(n.t.tokens, n.t.embeddings, n.t.projections, n.a, 6),
               std::out_of_range);
  attn::Projections wide = n.t.projections;
  wide.W_Q = arma::mat(2, 3, arma::fill::ones);
  try {
    attn::walk_through(n.t.tokens, n.t.embeddings, wide, n.a, 0);
    FAIL() << "a (2 × 3) W_Q was accepted";
  } catch (const attn::ShapeError& e) {
    EXPECT_STREQ(e.what(), "walk_through writes out 2-D examples: W_Q is (2 × 3), not (2 × 2)");
  }
}

}  // namespace
