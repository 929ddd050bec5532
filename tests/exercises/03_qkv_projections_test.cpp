// Chapter 03's exercises: "export"'s query, key and value, and its walk through attention.
#include "03_qkv_projections.hpp"

#include "exercise_checks.hpp"

#include <02_nimbus_raw/nimbus_thread.hpp>
#include <attn/math/attention.hpp>
#include <attn/math/validate.hpp>

#include <gtest/gtest.h>

using attn_exercise::near;
using namespace attn::exercises;

namespace {
const arma::uword kExport = 4;  // why did my Nimbus export fail
}

// Chapter 03 prints Q(export) = [0.35, 0.22], K(export) = [0.95, 0.50], V(export) = [1.10, 0.75].
TEST(Exercise3_1, ExportsProjectionsAreChapter03s) {
  const auto nimbus = attn::ch02::nimbus_thread();
  const TokenQKV p = project_token(nimbus.embeddings.row(kExport), nimbus.projections);
  EXPECT_TRUE(near("Q(export)", p.q, arma::rowvec{0.35, 0.22}, 0.005));
  EXPECT_TRUE(near("K(export)", p.k, arma::rowvec{0.95, 0.50}, 0.005));
  EXPECT_TRUE(near("V(export)", p.v, arma::rowvec{1.10, 0.75}, 0.005));
}

// Every token's projections are rows of the library's Q = X W_Q, K = X W_K, V = X W_V.
TEST(Exercise3_1, EveryTokenMatchesTheLibrary) {
  const auto nimbus = attn::ch02::nimbus_thread();
  const attn::math::QKV all = attn::math::project(nimbus.embeddings, nimbus.projections);
  for (arma::uword i = 0; i < nimbus.tokens.size(); ++i) {
    const TokenQKV p = project_token(nimbus.embeddings.row(i), nimbus.projections);
    EXPECT_TRUE(near("q(" + nimbus.tokens[i] + ")", p.q, all.Q.row(i), 1e-15));
    EXPECT_TRUE(near("k(" + nimbus.tokens[i] + ")", p.k, all.K.row(i), 1e-15));
    EXPECT_TRUE(near("v(" + nimbus.tokens[i] + ")", p.v, all.V.row(i), 1e-15));
  }
}

// A 3-wide embedding against 2-row projections: the message names both shapes.
TEST(Exercise3_1, AShapeMismatchNamesBothShapes) {
  const auto nimbus = attn::ch02::nimbus_thread();
  const arma::rowvec x{1.5, 0.5, 2.0};
  try {
    project_token(x, nimbus.projections);
    ADD_FAILURE()
        << "x is (1 × 3) and W_Q is (2 × 2): project_token must throw std::invalid_argument";
  } catch (const std::invalid_argument& error) {
    const std::string message = error.what();
    for (const std::string& shape :
         {attn::math::shape_of(x), attn::math::shape_of(nimbus.projections.W_Q)}) {
      EXPECT_NE(message.find(shape), std::string::npos)
          << "the message \"" << message << "\" does not name the shape " << shape;
    }
  }
}

// Chapter 03's walk for "export", one step at a time, so that a wrong step is named.
TEST(Exercise3_2, ExportsWalkIsChapter03s) {
  const auto nimbus = attn::ch02::nimbus_thread();
  const attn::math::QKV all = attn::math::project(nimbus.embeddings, nimbus.projections);
  const OneQuery walk = attend_one(all.Q.row(kExport), all.K, all.V);
  EXPECT_TRUE(near("step 2, the scores Q(export) · K(j) / √2", walk.scores,
                   arma::rowvec{-0.05, -0.14, 0.00, 0.14, 0.31, 0.36}, 0.005));
  EXPECT_TRUE(near("step 3, the weights", walk.weights,
                   arma::rowvec{0.14, 0.13, 0.15, 0.17, 0.20, 0.21}, 0.005));
  EXPECT_TRUE(near("step 4, out(export)", walk.output, arma::rowvec{0.227, 0.675}, 0.0005));
}

// Every token's walk is a row of the library's scaled dot-product attention.
TEST(Exercise3_2, EveryQueryMatchesTheLibrary) {
  const auto nimbus = attn::ch02::nimbus_thread();
  const attn::math::Attention full =
      attn::math::self_attention(nimbus.embeddings, nimbus.projections);
  const attn::math::QKV all = attn::math::project(nimbus.embeddings, nimbus.projections);
  for (arma::uword i = 0; i < nimbus.tokens.size(); ++i) {
    const OneQuery walk = attend_one(all.Q.row(i), all.K, all.V);
    EXPECT_TRUE(near("scores of " + nimbus.tokens[i], walk.scores, full.scores.row(i), 1e-15));
    EXPECT_TRUE(near("weights of " + nimbus.tokens[i], walk.weights, full.weights.row(i), 1e-15));
    EXPECT_TRUE(near("output of " + nimbus.tokens[i], walk.output, full.output.row(i), 1e-15));
  }
}

// Mismatched widths are refused, not multiplied into nonsense.
TEST(Exercise3_2, MismatchedShapesAreRefused) {
  const arma::mat K(6, 2, arma::fill::ones), V(6, 2, arma::fill::ones);
  EXPECT_THROW(attend_one(arma::rowvec{1.0, 2.0, 3.0}, K, V), std::invalid_argument)
      << "q is (1 × 3) but the keys are 2 wide";
  EXPECT_THROW(attend_one(arma::rowvec{1.0, 2.0}, K, arma::mat(5, 2, arma::fill::ones)),
               std::invalid_argument)
      << "6 keys but 5 values";
}
