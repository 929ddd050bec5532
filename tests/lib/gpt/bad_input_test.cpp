// Bad numbers, defined behaviour (issue 17), for the GPT layer: a model given a NaN, an
// infinity, a weight of the wrong shape or a bad draw throws an exception whose message names
// the weight, or the operand, never a silent NaN.
#include <attn/gpt/forward.hpp>
#include <attn/gpt/model.hpp>
#include <attn/math/validate.hpp>

#include "bad_input.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace {

using attn_bad_input::kInf;
using attn_bad_input::kNaN;
using attn_bad_input::ones;
using attn_bad_input::ThrowsNaming;
using attn_bad_input::tokens;
using attn_bad_input::with;

attn::gpt::TransformerWeights small_model() {
  const attn::gpt::TransformerConfig config{5, 4, 2, 1, 6, 4, attn::gpt::Positions::sinusoidal};
  return attn::gpt::init_transformer(config,
                                     [](arma::uword r, arma::uword c) { return tokens(r, c); });
}

TEST(BadInput, TransformerNamesANonFiniteOrMisshapenWeight) {
  attn::gpt::TransformerWeights w = small_model();
  w.unembedding(1, 2) = kNaN;  // before this check, the logits were silently NaN
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] {
        attn::gpt::transformer_forward(w, arma::uvec{1, 2}, arma::uvec{0});
      },
      "unembedding has"));
  w = small_model();
  w.blocks[0].attention.W_V(0, 0) = -kInf;
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] {
        attn::gpt::sentence_logits(w, arma::uvec{1, 2});
      },
      "blocks.0.attention.W_V"));
  w = small_model();
  w.embedding.shed_row(4);  // token 4 used to be read out of bounds
  EXPECT_TRUE(ThrowsNaming<attn::math::ShapeError>(
      [&] { attn::gpt::transformer_forward(w, arma::uvec{4}, arma::uvec{0}); },
      "embedding is (4 × 4)"));
}

TEST(BadInput, TransformerBackwardChecksItsGradientAndForwardPass) {
  const attn::gpt::TransformerWeights w = small_model();
  const arma::uvec tokens_in{1, 2, 3}, starts{0};
  const attn::gpt::TransformerForward f = attn::gpt::transformer_forward(w, tokens_in, starts);
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] {
        attn::gpt::transformer_backward(w, tokens_in, starts, f, with(ones(3, 5), 2, 4, kNaN));
      },
      "dlogits"));
  EXPECT_TRUE(ThrowsNaming<attn::math::ShapeError>(
      [&] {
        attn::gpt::transformer_backward(w, tokens_in, arma::uvec{0, 1}, f, ones(3, 5));
      },
      "2 sentences, but the forward pass attended over 1"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] {
        attn::gpt::transformer_backward(w, arma::uvec{1, 2, 7}, starts, f, ones(3, 5));
      },
      "token 7 at row 2"));
}

TEST(BadInput, InitTransformerChecksItsDraws) {
  const attn::gpt::TransformerConfig config{5, 4, 2, 1, 6, 4, attn::gpt::Positions::sinusoidal};
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] {
        attn::gpt::init_transformer(config, [](arma::uword r, arma::uword c) {
          return arma::mat(r, c, arma::fill::value(kNaN));
        });
      },
      "standard_normal"));
  EXPECT_TRUE(ThrowsNaming<attn::math::ShapeError>(
      [&] {
        attn::gpt::init_transformer(config, [](arma::uword, arma::uword) { return ones(1, 1); });
      },
      "standard_normal(5, 4) returned (1 × 1)"));
}

}  // namespace
