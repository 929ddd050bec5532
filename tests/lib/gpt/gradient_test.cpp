// The GPT of chapter 10 (attn/gpt/forward.hpp): every parameter's gradient against
// central finite differences, packing against one sentence at a time, sizes and refusals.
// (Its agreement with PyTorch is checked in torch_test.cpp.)
#include <attn/gpt/decoder.hpp>
#include <attn/gpt/forward.hpp>
#include <attn/math/gradient_check.hpp>
#include <attn/math/validate.hpp>

#include <gtest/gtest.h>

#include "normal_inputs.hpp"
#include "random_gpt.hpp"

#include <cmath>

namespace {

attn::gpt::TransformerConfig small_config() {
  attn::gpt::TransformerConfig c;
  c.vocabulary = 7;
  c.d_model = 4;
  c.heads = 2;
  c.layers = 2;
  c.d_ff = 6;
  c.max_length = 5;
  return c;
}

using attn_test::random_model;

const std::vector<arma::uvec> kSentences{{1, 4, 2, 6, 0}, {3, 3, 5}, {6, 1}};

TEST(Transformer, EveryGradientMatchesFiniteDifferences) {
  for (const attn::gpt::Positions positions :
       {attn::gpt::Positions::sinusoidal, attn::gpt::Positions::none}) {
    attn::gpt::TransformerConfig c = small_config();
    c.positions = positions;
    attn::gpt::TransformerWeights w = random_model(c, 301);
    const attn::gpt::PackedBatch batch = attn::gpt::pack_sentences(kSentences);
    attn::gpt::TransformerStep step = attn::gpt::transformer_step(w, batch);
    std::vector<attn::gpt::Parameter> grads = attn::gpt::parameters(step.gradients);
    std::vector<attn::gpt::Parameter> params = attn::gpt::parameters(w);
    ASSERT_EQ(grads.size(), params.size());
    for (std::size_t k = 0; k < params.size(); ++k) {
      const arma::mat original = *params[k].value;
      const auto loss = [&](const arma::mat& v) {
        *params[k].value = v;
        const double l = attn::gpt::transformer_step(w, batch).loss;
        *params[k].value = original;
        return l;
      };
      const attn::math::GradientCheck check =
          attn::math::check_gradient(loss, original, *grads[k].value);
      EXPECT_LE(check.max_relative_error, 1e-6)
          << params[k].name << " (positions " << attn::gpt::to_string(positions) << "): analytic "
          << check.analytic << ", numeric " << check.numeric;
    }
  }
}

TEST(Transformer, PackedBatchComputesEachSentenceAlone) {
  const attn::gpt::TransformerWeights w = random_model(small_config(), 302);
  const attn::gpt::PackedBatch batch = attn::gpt::pack_sentences(kSentences);
  const arma::mat packed = attn::gpt::transformer_forward(w, batch.tokens, batch.starts).logits;
  for (std::size_t s = 0; s < kSentences.size(); ++s) {
    const arma::uvec inputs = kSentences[s].head(kSentences[s].n_elem - 1);
    const arma::mat alone = attn::gpt::sentence_logits(w, inputs);
    const arma::uword start = batch.starts(s);
    EXPECT_LE(arma::abs(packed.rows(start, start + inputs.n_elem - 1) - alone).max(), 1e-12)
        << "sentence " << s;
  }
}

TEST(Transformer, PackingLaysOutTokensTargetsPositionsAndMask) {
  const attn::gpt::PackedBatch b = attn::gpt::pack_sentences({{1, 4, 2}, {3, 5}});
  EXPECT_TRUE(arma::all(b.tokens == arma::uvec({1, 4, 3})));
  EXPECT_TRUE(arma::all(b.targets == arma::uvec({4, 2, 5})));
  EXPECT_TRUE(arma::all(b.starts == arma::uvec({0, 2})));
  EXPECT_TRUE(arma::all(attn::gpt::positions_in_sentences(3, b.starts) == arma::uvec({0, 1, 0})));
  EXPECT_THROW(attn::gpt::positions_in_sentences(3, {1}), attn::math::InputError);
  EXPECT_THROW(attn::gpt::positions_in_sentences(3, {0, 2, 2}), attn::math::InputError);
  EXPECT_THROW(attn::gpt::positions_in_sentences(3, {0, 3}), attn::math::InputError);
}

TEST(Transformer, ParameterCountIsTheSumOfTheShapes) {
  for (const arma::uword layers : {1u, 2u, 3u}) {
    attn::gpt::TransformerConfig c = small_config();
    c.layers = layers;
    attn::gpt::TransformerWeights w = random_model(c, 303);
    arma::uword total = 0;
    for (const attn::gpt::Parameter& p : attn::gpt::parameters(w))
      total += p.value->n_elem;
    EXPECT_EQ(attn::gpt::parameter_count(c), total);
  }
}

TEST(Transformer, FreshModelPredictsNearlyUniformly) {
  attn::gpt::TransformerConfig c = small_config();
  c.vocabulary = 35;
  c.d_model = 32;
  const attn::gpt::TransformerWeights w = attn_test::fresh_model(c, attn_test::Normals(304));
  const attn::gpt::TransformerStep step =
      attn::gpt::transformer_step(w, attn::gpt::pack_sentences(kSentences));
  EXPECT_NEAR(step.loss, std::log(35.0), 0.1);
}

TEST(Transformer, GreedyDecodingStopsAtTheEndTokenOrTheCount) {
  const attn::gpt::TransformerWeights w = random_model(small_config(), 305);
  const arma::uword room = small_config().max_length - 2;
  const arma::uvec added = attn::gpt::continue_greedily(w, {1, 2}, room, 0).tokens;
  const arma::uvec text = arma::join_cols(arma::uvec{1, 2}, added);
  EXPECT_TRUE(text.n_elem == small_config().max_length || text(text.n_elem - 1) == 0);
  EXPECT_TRUE(arma::all(text.head(2) == arma::uvec({1, 2})));
  for (arma::uword i = 2; i < text.n_elem; ++i) {  // each token is the argmax after its prefix
    const arma::mat logits = attn::gpt::sentence_logits(w, text.head(i));
    EXPECT_EQ(text(i), logits.row(i - 1).index_max()) << "token " << i;
  }
}

TEST(Transformer, RefusesWhatDoesNotFit) {
  const attn::gpt::TransformerWeights w = random_model(small_config(), 306);
  EXPECT_THROW(attn::gpt::transformer_forward(w, {1, 7}, {0}), attn::math::InputError);  // token
  EXPECT_THROW(attn::gpt::transformer_forward(w, arma::uvec(6, arma::fill::ones), {0}),
               attn::math::InputError);  // too long
  EXPECT_NO_THROW(attn::gpt::transformer_forward(w, arma::uvec(6, arma::fill::ones), {0, 3}));
  EXPECT_THROW(attn::gpt::transformer_forward(w, {1, 2}, {1}), attn::math::InputError);  // starts
  EXPECT_THROW(attn::gpt::sentence_logits(w, arma::uvec(6, arma::fill::zeros)),
               attn::math::InputError);
  EXPECT_THROW(attn::gpt::pack_sentences({{1, 2}, {3}}), attn::math::InputError);
  EXPECT_THROW(attn::gpt::pack_sentences({}), attn::math::InputError);
  attn::gpt::TransformerConfig odd = small_config();
  odd.heads = 3;
  EXPECT_THROW(attn::gpt::parameter_count(odd), attn::math::InputError);
  const attn::gpt::TransformerForward f = attn::gpt::transformer_forward(w, {1, 2}, {0});
  EXPECT_THROW(attn::gpt::transformer_backward(w, {1, 2}, {0}, f, arma::mat(2, 6)),
               attn::math::ShapeError);
}

}  // namespace
