// The GPT grown for chapter 11 (attn/gpt/model.hpp, forward.hpp): tied embeddings, learned
// positions and dropout, each with its gradients against central finite differences, and the
// KV-cached decoder (decoder.hpp) against the whole forward pass.
#include <attn/gpt/decoder.hpp>
#include <attn/gpt/forward.hpp>
#include <attn/math/gradient_check.hpp>
#include <attn/math/layers.hpp>
#include <attn/math/validate.hpp>

#include <gtest/gtest.h>

#include "bad_input.hpp"
#include "normal_inputs.hpp"
#include "random_gpt.hpp"

#include <cmath>
#include <random>

namespace {

// Chapter 11's kind of model, small: tied embeddings and learned positions.
attn::gpt::TransformerConfig gpt_config() {
  attn::gpt::TransformerConfig c;
  c.vocabulary = 9;
  c.d_model = 6;
  c.heads = 2;
  c.layers = 2;
  c.d_ff = 8;
  c.max_length = 6;
  c.positions = attn::gpt::Positions::learned;
  c.tied_embeddings = true;
  return c;
}

using attn_test::random_model;

const std::vector<arma::uvec> kSentences{{1, 4, 2, 6, 0, 8}, {3, 3, 5}, {6, 1}};

// The same uniform draws every time it is made: dropout's masks repeat, so the loss is a
// function of the weights alone and finite differences apply.
struct RepeatableDraws {
  std::uint64_t seed;
  attn::math::UniformDraws make() const {
    return [engine = std::mt19937_64(seed)]() mutable {
      return std::uniform_real_distribution<double>(0.0, 1.0)(engine);
    };
  }
};

// Finite differences of a loss near 2 with a step of 1e-5 are good to about 1e-10.
constexpr double kNoise = 1e-9;

void expect_gradients_match(attn::gpt::TransformerWeights& w, const attn::gpt::PackedBatch& batch,
                            const RepeatableDraws* draws, const char* what) {
  const auto step = [&] {
    if (draws == nullptr)
      return attn::gpt::transformer_step(w, batch);
    const attn::math::UniformDraws uniform = draws->make();
    return attn::gpt::transformer_step(w, batch, uniform);
  };
  attn::gpt::TransformerStep analytic = step();
  std::vector<attn::gpt::Parameter> grads = attn::gpt::parameters(analytic.gradients);
  std::vector<attn::gpt::Parameter> params = attn::gpt::parameters(w);
  ASSERT_EQ(grads.size(), params.size());
  for (std::size_t k = 0; k < params.size(); ++k) {
    const arma::mat original = *params[k].value;
    const auto loss = [&](const arma::mat& v) {
      *params[k].value = v;
      const double l = step().loss;
      *params[k].value = original;
      return l;
    };
    const attn::math::GradientCheck check =
        attn::math::check_gradient(loss, original, *grads[k].value);
    // A gradient that is exactly zero (b_K's: a bias added to every key shifts a row of scores
    // by one constant, which softmax ignores) is measured as rounding noise, about
    // ε·L/(2h) ≈ 1e-10: that is allowed absolutely, everything else relatively.
    const bool within_noise = std::abs(check.analytic - check.numeric) <= kNoise;
    EXPECT_TRUE(check.max_relative_error <= 1e-6 || within_noise)
        << what << ", " << params[k].name << ": analytic " << check.analytic << ", numeric "
        << check.numeric;
  }
}

TEST(Gpt, TiedEmbeddingsAndLearnedPositionsHaveExactGradients) {
  attn::gpt::TransformerWeights w = random_model(gpt_config(), 401);
  expect_gradients_match(w, attn::gpt::pack_sentences(kSentences), nullptr, "tied, learned");
}

TEST(Gpt, GradientsThroughDropoutUseTheForwardPassMasks) {
  attn::gpt::TransformerConfig c = gpt_config();
  c.dropout = 0.3;
  attn::gpt::TransformerWeights w = random_model(c, 402);
  const RepeatableDraws draws{7};
  expect_gradients_match(w, attn::gpt::pack_sentences(kSentences), &draws, "dropout 0.3");
}

TEST(Gpt, TiedModelHasNoOutputMatrixAndCountsItsParameters) {
  for (const bool tied : {false, true})
    for (const bool learned : {false, true}) {
      attn::gpt::TransformerConfig c = gpt_config();
      c.tied_embeddings = tied;
      c.positions = learned ? attn::gpt::Positions::learned : attn::gpt::Positions::sinusoidal;
      attn::gpt::TransformerWeights w = random_model(c, 403);
      arma::uword total = 0;
      bool has_output = false, has_positions = false;
      for (const attn::gpt::Parameter& p : attn::gpt::parameters(w)) {
        total += p.value->n_elem;
        has_output = has_output || p.name == "unembedding";
        has_positions = has_positions || p.name == "position_embedding";
      }
      EXPECT_EQ(attn::gpt::parameter_count(c), total) << "tied " << tied << ", learned " << learned;
      EXPECT_EQ(has_output, !tied);
      EXPECT_EQ(has_positions, learned);
    }
}

TEST(Gpt, TiedLogitsAreTheFinalStateAgainstEachEmbeddingRow) {
  const attn::gpt::TransformerWeights w = random_model(gpt_config(), 404);
  const attn::gpt::TransformerForward f = attn::gpt::transformer_forward(w, {2, 7, 1}, {0});
  for (arma::uword i = 0; i < 3; ++i)
    for (arma::uword token = 0; token < 9; ++token)
      EXPECT_NEAR(f.logits(i, token), arma::dot(f.ln_f.y().row(i), w.embedding.row(token)), 1e-13);
}

TEST(Gpt, FreshTiedModelPredictsNearlyUniformly) {
  attn::gpt::TransformerConfig c = gpt_config();
  c.vocabulary = 300;
  c.d_model = 32;
  const attn::gpt::TransformerWeights w = attn_test::fresh_model(c, attn_test::Normals(405));
  const attn::gpt::TransformerStep step =
      attn::gpt::transformer_step(w, attn::gpt::pack_sentences(kSentences));
  EXPECT_NEAR(step.loss, std::log(300.0), 0.05);
}

TEST(Dropout, KeepsEachEntryWithProbabilityOneMinusPAndScalesIt) {
  const double p = 0.25;
  const RepeatableDraws draws{11};
  const attn::math::UniformDraws uniform = draws.make();
  const arma::mat x(200, 300, arma::fill::ones);
  const attn::math::Dropout d = attn::math::dropout(x, p, uniform);
  const arma::uword kept = arma::accu(d.keep != 0.0);
  const double n = static_cast<double>(x.n_elem);
  // The kept count is binomial(n, 0.75): its standard deviation is sqrt(n · 0.75 · 0.25) = 75.
  EXPECT_NEAR(static_cast<double>(kept), 0.75 * n, 5 * 75.0);
  EXPECT_TRUE(arma::all(arma::vectorise((d.keep == 0.0) + (d.keep == 1.0 / (1.0 - p))) == 1));
  EXPECT_TRUE(arma::approx_equal(d.y, x % d.keep, "absdiff", 0.0));
  EXPECT_NEAR(arma::mean(arma::vectorise(d.y)), 1.0, 0.02);  // the expectation is kept
}

TEST(Dropout, DropsExactlyWhereTheDrawIsBelowTheRate) {
  const std::vector<double> u{0.1, 0.5, 0.29, 0.3, 0.99, 0.0};  // column by column
  std::size_t next = 0;
  const attn::math::UniformDraws uniform = [&] {
    return u[next++];
  };
  const attn::math::Dropout d = attn::math::dropout(arma::mat{{1, 2, 3}, {4, 5, 6}}, 0.3, uniform);
  const double s = 1.0 / 0.7;
  // Column-major order: entries (0,0), (1,0), (0,1), (1,1), (0,2), (1,2).
  EXPECT_TRUE(arma::approx_equal(d.keep, arma::mat{{0, 0, s}, {s, s, 0}}, "absdiff", 1e-15));
  EXPECT_EQ(next, 6u);
}

TEST(Dropout, RateZeroIsTheIdentityAndBadRatesAreRefused) {
  const attn::math::UniformDraws never = []() -> double {
    ADD_FAILURE() << "no draw should be taken at rate 0";
    return 0.5;
  };
  const arma::mat x{{1, -2}, {3, 4}};
  EXPECT_TRUE(arma::approx_equal(attn::math::dropout(x, 0.0, never).y, x, "absdiff", 0.0));
  const attn::math::UniformDraws half = [] {
    return 0.5;
  };
  EXPECT_TRUE(attn_bad_input::ThrowsNaming<attn::math::InputError>(
      [&] { attn::math::dropout(x, 1.0, half); }, "outside [0, 1)"));
  EXPECT_TRUE(attn_bad_input::ThrowsNaming<attn::math::InputError>(
      [&] { attn::math::dropout(x, std::nan(""), half); }, "outside [0, 1)"));
  const attn::math::UniformDraws bad = [] {
    return 1.0;
  };
  EXPECT_TRUE(attn_bad_input::ThrowsNaming<attn::math::InputError>(
      [&] { attn::math::dropout(x, 0.5, bad); }, "a draw of 1 is outside [0, 1)"));
  attn::gpt::TransformerConfig c = gpt_config();
  c.dropout = -0.1;
  EXPECT_TRUE(attn_bad_input::ThrowsNaming<attn::math::InputError>(
      [&] { attn::gpt::parameter_count(c); }, "dropout rate -0.1"));
}

TEST(Gpt, EvaluationIgnoresDropout) {
  attn::gpt::TransformerConfig c = gpt_config();
  c.dropout = 0.5;
  const attn::gpt::TransformerWeights w = random_model(c, 406);
  attn::gpt::TransformerWeights same = w;
  same.config.dropout = 0.0;
  const arma::uvec tokens{3, 1, 4, 1, 5};
  EXPECT_TRUE(arma::approx_equal(attn::gpt::sentence_logits(w, tokens),
                                 attn::gpt::sentence_logits(same, tokens), "absdiff", 0.0));
}

// Each token's logits from the cache equal the last row of a forward pass over its prefix
// (largest_cache_difference(), the check the chapters make too).
TEST(Decoder, EqualsTheWholeForwardPassWithin1e12) {
  for (const bool tied : {false, true}) {
    attn::gpt::TransformerConfig c = gpt_config();
    c.tied_embeddings = tied;
    c.positions = tied ? attn::gpt::Positions::learned : attn::gpt::Positions::sinusoidal;
    const attn::gpt::TransformerWeights w = random_model(c, 407);
    const arma::uvec text{5, 0, 8, 8, 2, 7};
    EXPECT_LE(attn::gpt::largest_cache_difference(w, text), 1e-12) << "tied " << tied;
  }
}

TEST(Decoder, RefusesATokenPastTheContextOrOutsideTheVocabulary) {
  const attn::gpt::TransformerWeights w = random_model(gpt_config(), 408);
  attn::gpt::Decoder decoder(w);
  EXPECT_TRUE(attn_bad_input::ThrowsNaming<attn::math::InputError>(
      [&] { decoder.append(9); }, "token 9 is outside a vocabulary of 9"));
  for (arma::uword t = 0; t < 6; ++t)
    decoder.append(t);
  EXPECT_TRUE(attn_bad_input::ThrowsNaming<attn::math::InputError>([&] { decoder.append(1); },
                                                                   "the model's whole context"));
}

}  // namespace
