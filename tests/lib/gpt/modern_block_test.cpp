// Chapter 12's choices in the GPT (TransformerConfig: positions, key/value heads, window, norm,
// MLP, attention biases): for GPT-2's block, each variant alone and several together, every
// gradient against finite differences, the KV-cached decoder against the whole forward pass, the
// parameter count against the shapes, and the cache's bytes against 2 · L · g · d_k · 8 per token.
#include <attn/gpt/checkpoint.hpp>
#include <attn/gpt/decoder.hpp>
#include <attn/gpt/float32_step.hpp>
#include <attn/gpt/forward.hpp>
#include <attn/gpt/variants.hpp>
#include <attn/math/validate.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "fixture_blocks.hpp"
#include "random_gpt.hpp"
#include "tiny_gpt.hpp"

namespace {

namespace gpt = attn::gpt;

// One model of the comparison: GPT-2's block with some choices changed.
struct Choice {
  std::string name;
  gpt::TransformerConfig config;
};

gpt::TransformerConfig gpt2() {
  return {.vocabulary = 7,
          .d_model = 8,
          .heads = 4,  // d_k = 2: one rotary pair per head
          .layers = 2,
          .d_ff = 6,
          .max_length = 6,
          .positions = gpt::Positions::learned,
          .tied_embeddings = true};
}

// Today's block as chapter 12 measures it: every change but the biases'.
const std::vector<gpt::Variant> kToday = {gpt::Variant::rotary, gpt::Variant::grouped_query,
                                          gpt::Variant::sliding_window, gpt::Variant::rms_norm,
                                          gpt::Variant::swiglu};

// GPT-2's block, then every variant of the library's one list (gpt::kEveryVariant) alone, at
// 2 key/value heads and a window of 3, then some together: a variant added to the library is
// checked here without being named.
std::vector<Choice> choices() {
  std::vector<Choice> list{{"gpt2", gpt2()}};
  for (const gpt::Variant v : gpt::kEveryVariant)
    list.push_back({std::string(gpt::to_string(v)), gpt::with(v, gpt2())});
  gpt::TransformerConfig sinusoidal = gpt2();
  sinusoidal.positions = gpt::Positions::sinusoidal;
  list.push_back({"sinusoidal", sinusoidal});
  gpt::TransformerConfig untied_today = gpt::with(kToday, gpt2());
  untied_today.tied_embeddings = false;
  list.push_back({"untied_today", untied_today});
  list.push_back({"today", gpt::with(kToday, gpt2())});
  list.push_back({"today_without_attention_biases",
                  gpt::with(gpt::Variant::no_attention_biases, gpt::with(kToday, gpt2()))});
  return list;
}

class ModernBlock : public ::testing::TestWithParam<Choice> {};

const std::vector<arma::uvec> kSentences{{1, 4, 2, 6, 0, 3, 5}, {3, 3, 5}, {6, 1}};

// Central differences of the loss, entry by entry, against the backward pass: the largest
// difference within 1e-6 of the matrix's largest gradient (plus 1e-9 for the rounding noise of
// the loss, which is what a gradient that is exactly 0, as b_K's without RoPE, shows).
TEST_P(ModernBlock, EveryGradientMatchesFiniteDifferences) {
  gpt::TransformerWeights w = attn_test::random_model(GetParam().config, 311);
  const gpt::PackedBatch batch = gpt::pack_sentences(kSentences);
  gpt::TransformerWeights gradients = gpt::transformer_step(w, batch).gradients;
  const std::vector<gpt::Parameter> grads = gpt::parameters(gradients);
  const std::vector<gpt::Parameter> params = gpt::parameters(w);
  ASSERT_EQ(grads.size(), params.size());
  constexpr double kStep = 1e-5;
  for (std::size_t k = 0; k < params.size(); ++k) {
    ASSERT_EQ(grads[k].name, params[k].name);
    arma::mat& value = *params[k].value;
    const arma::mat& analytic = *grads[k].value;
    arma::mat numeric(arma::size(value));
    for (arma::uword i = 0; i < value.n_elem; ++i) {
      const double original = value(i);
      value(i) = original + kStep;
      const double up = gpt::transformer_step(w, batch).loss;
      value(i) = original - kStep;
      const double down = gpt::transformer_step(w, batch).loss;
      value(i) = original;
      numeric(i) = (up - down) / (2 * kStep);
    }
    EXPECT_LE(arma::abs(numeric - analytic).max(), 1e-6 * arma::abs(analytic).max() + 1e-9)
        << params[k].name << ": largest gradient " << arma::abs(analytic).max();
  }
}

TEST_P(ModernBlock, CachedDecoderEqualsTheWholeForwardPassWithin1e12) {
  const gpt::TransformerWeights w = attn_test::random_model(GetParam().config, 312);
  const arma::uvec text{5, 0, 6, 6, 2, 1};  // max_length tokens: past the window of 3
  EXPECT_LE(gpt::largest_cache_difference(w, text), 1e-12);
}

TEST_P(ModernBlock, ParameterCountIsTheSumOfTheShapes) {
  const gpt::TransformerConfig& c = GetParam().config;
  gpt::TransformerWeights w = attn_test::random_model(c, 313);
  arma::uword total = 0;
  for (const gpt::Parameter& p : gpt::parameters(w))
    total += p.value->n_elem;
  EXPECT_EQ(gpt::parameter_count(c), total);
}

TEST_P(ModernBlock, CacheHoldsTwoLayersTimesKeyValueHeadsTimesDkDoublesPerToken) {
  const gpt::TransformerConfig& c = GetParam().config;
  const gpt::TransformerWeights w = attn_test::random_model(c, 314);
  const arma::uword d_k = c.d_model / c.heads;
  const arma::uword per_token = 2 * c.layers * gpt::key_value_heads(c) * d_k * sizeof(double);
  gpt::Decoder decoder(w);
  for (arma::uword t = 1; t <= c.max_length; ++t) {
    decoder.append(t % c.vocabulary);
    const arma::uword held = c.sliding_window == 0 ? t : std::min(t, c.sliding_window);
    EXPECT_EQ(decoder.cache_bytes(), held * per_token) << "after " << t << " tokens";
  }
}

std::string choice_name(const ::testing::TestParamInfo<Choice>& info) {
  return info.param.name;
}

INSTANTIATE_TEST_SUITE_P(FromGpt2ToToday, ModernBlock, ::testing::ValuesIn(choices()), choice_name);

// Today's block (RoPE, 2 key/value heads for 4 query heads, a window of 3, RMSNorm, SwiGLU, tied
// embeddings) against a model of PyTorch's own modules (tests/data/generate_modern_fixtures.py),
// with attention biases (the fixture's blocks "gpt ...") and without (PyTorch's
// nn.Linear(..., bias=False), Llama's; "gpt_no_biases ...").
gpt::TransformerWeights torch_today(const std::string& prefix, bool attention_biases) {
  const auto at = [&](const std::string& name) {
    return attn_test::fixture_block("torch_modern.txt", prefix + " " + name);
  };
  const arma::mat c = at("config");
  gpt::TransformerWeights w;
  w.config = {.vocabulary = arma::uword(c(0)),
              .d_model = arma::uword(c(1)),
              .heads = arma::uword(c(2)),
              .layers = arma::uword(c(3)),
              .d_ff = arma::uword(c(4)),
              .max_length = arma::uword(c(5)),
              .positions = gpt::Positions::rotary,
              .tied_embeddings = true,
              .kv_heads = arma::uword(c(6)),
              .sliding_window = arma::uword(c(7)),
              .norm = gpt::Norm::rms_norm,
              .mlp = gpt::Mlp::swiglu,
              .attention_biases = attention_biases};
  w.blocks.resize(w.config.layers);
  for (gpt::BlockWeights& b : w.blocks) {
    b.attention.heads = w.config.heads;
    b.attention.kv_heads = w.config.kv_heads;
  }
  for (gpt::Parameter& p : gpt::parameters(w))
    *p.value = at("weight " + p.name);
  return w;
}

void expect_torchs_step(const std::string& prefix, bool attention_biases) {
  const auto at = [&](const std::string& name) {
    return attn_test::fixture_block("torch_modern.txt", prefix + " " + name);
  };
  const gpt::TransformerWeights w = torch_today(prefix, attention_biases);
  const arma::uvec sentence = arma::conv_to<arma::uvec>::from(at("sentence"));
  const gpt::TransformerStep step = gpt::transformer_step(w, gpt::pack_sentences({sentence}));
  EXPECT_NEAR(step.loss, at("loss")(0), 1e-10);
  EXPECT_LE(arma::abs(step.logits - at("logits")).max(), 1e-10);
  gpt::TransformerWeights gradients = step.gradients;
  for (const gpt::Parameter& g : gpt::parameters(gradients)) {
    const arma::mat theirs = at("gradient " + g.name);
    ASSERT_EQ(arma::size(*g.value), arma::size(theirs)) << g.name;
    EXPECT_LE(arma::abs(*g.value - theirs).max(), 1e-10) << g.name;
  }
}

TEST(ModernBlock, TodaysGptEqualsPyTorchWithin1e10) {
  expect_torchs_step("gpt", true);
}

TEST(ModernBlock, TodaysGptWithoutAttentionBiasesEqualsPyTorchWithin1e10) {
  expect_torchs_step("gpt_no_biases", false);
  const gpt::TransformerWeights w = torch_today("gpt_no_biases", false);
  for (const gpt::BlockWeights& b : w.blocks)
    EXPECT_TRUE(b.attention.b_Q.is_empty() && b.attention.b_K.is_empty() &&
                b.attention.b_V.is_empty() && b.attention.b_O.is_empty());
}

// The float32 step on PyTorch's two models, with attention biases and without: PyTorch's
// float64 loss within 1e-5 of itself and each gradient within 1e-4 of its largest entry, the
// tolerances float32_step_test.cpp holds the step to against the reference (b_K's gradient,
// 0 in exact arithmetic, against the largest of all).
TEST(ModernBlock, Float32StepEqualsPyTorchWithAndWithoutAttentionBiases) {
  for (const bool biases : {true, false}) {
    const std::string prefix = biases ? "gpt" : "gpt_no_biases";
    SCOPED_TRACE(prefix);
    const auto at = [&](const std::string& name) {
      return attn_test::fixture_block("torch_modern.txt", prefix + " " + name);
    };
    const gpt::TransformerWeights w = torch_today(prefix, biases);
    const arma::uvec sentence = arma::conv_to<arma::uvec>::from(at("sentence"));
    gpt::Float32Step float32(w.config);
    const gpt::TransformerStep step = float32.run(w, gpt::pack_sentences({sentence}));
    EXPECT_NEAR(step.loss, at("loss")(0), 1e-5 * at("loss")(0));
    gpt::TransformerWeights gradients = step.gradients;
    double largest = 0.0;
    for (const gpt::Parameter& g : gpt::parameters(gradients))
      largest = std::max(largest, arma::abs(at("gradient " + g.name)).max());
    for (const gpt::Parameter& g : gpt::parameters(gradients)) {
      const arma::mat theirs = at("gradient " + g.name);
      ASSERT_EQ(arma::size(*g.value), arma::size(theirs)) << g.name;
      const bool zero_exactly = g.name.ends_with("attention.b_K");
      const double scale = zero_exactly ? largest : arma::abs(theirs).max();
      EXPECT_LE(arma::abs(*g.value - theirs).max(), 1e-4 * scale) << g.name;
    }
  }
}

TEST(ModernBlock, CheckpointsKeepEveryChoiceBitForBit) {
  const gpt_test::TempDir dir;
  const gpt::TrainingSettings settings{.steps = 1, .batch = 1, .evaluate_every = 1, .seed = 3};
  for (const Choice& choice : choices()) {
    SCOPED_TRACE(choice.name);
    const std::string path = dir.file(choice.name + ".ckpt");
    const std::string fingerprint = "the run of " + choice.name + "\n";
    const gpt::TrainingState saved = gpt::start(choice.config, settings);
    gpt::save_checkpoint(path, fingerprint, saved);
    gpt::TrainingState read = gpt::load_checkpoint(path, fingerprint, choice.config, settings);
    gpt::TransformerWeights expected = saved.weights;
    const std::vector<gpt::Parameter> want = gpt::parameters(expected);
    const std::vector<gpt::Parameter> got = gpt::parameters(read.weights);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t k = 0; k < got.size(); ++k) {
      EXPECT_EQ(got[k].name, want[k].name);
      EXPECT_TRUE(arma::approx_equal(*got[k].value, *want[k].value, "absdiff", 0.0))
          << want[k].name;
    }
  }
}

TEST(ModernBlock, FewerKeyValueHeadsShrinkTheCacheByTheirRatio) {
  // d = 8, 4 heads of 2, 2 layers: 2 · 2 · g · 2 · 8 bytes per token.
  for (const auto& [kv_heads, bytes] :
       {std::pair<arma::uword, arma::uword>{0, 256}, {2, 128}, {1, 64}}) {
    gpt::TransformerConfig c = gpt2();
    c.kv_heads = kv_heads;
    const gpt::TransformerWeights w = attn_test::random_model(c, 315);
    gpt::Decoder decoder(w);
    decoder.append(1);
    EXPECT_EQ(decoder.cache_bytes(), bytes) << kv_heads << " key/value heads";
  }
}

TEST(ModernBlock, WindowedCacheStopsGrowingAtTheWindow) {
  gpt::TransformerConfig full = gpt2();
  full.positions = gpt::Positions::rotary;
  full.max_length = 40;
  gpt::TransformerConfig windowed = full;
  windowed.sliding_window = 8;
  const gpt::TransformerWeights w_full = attn_test::random_model(full, 316);
  const gpt::TransformerWeights w_windowed = attn_test::random_model(windowed, 316);
  gpt::Decoder growing(w_full);
  gpt::Decoder flat(w_windowed);
  arma::uword bytes_at_window = 0;
  for (arma::uword t = 1; t <= full.max_length; ++t) {
    growing.append(t % full.vocabulary);
    flat.append(t % full.vocabulary);
    if (t == windowed.sliding_window)
      bytes_at_window = flat.cache_bytes();
  }
  EXPECT_EQ(flat.cache_bytes(), bytes_at_window);
  EXPECT_EQ(growing.cache_bytes(), bytes_at_window * full.max_length / windowed.sliding_window);
}

TEST(ModernBlock, RefusesChoicesThatDoNotFit) {
  gpt::TransformerConfig c = gpt2();
  c.kv_heads = 3;  // 3 does not divide 4
  try {
    gpt::check_config(c);
    FAIL() << "3 key/value heads for 4 heads were accepted";
  } catch (const attn::math::InputError& e) {
    EXPECT_STREQ(e.what(),
                 "transformer: 3 key/value heads cannot be shared by 4 query heads equally");
  }
  c = gpt2();
  c.kv_heads = 8;
  EXPECT_THROW(gpt::check_config(c), attn::math::InputError);
  c = gpt2();
  c.d_model = 12;  // 4 heads of 3: RoPE needs pairs
  c.positions = gpt::Positions::rotary;
  try {
    gpt::check_config(c);
    FAIL() << "rotary positions with d_k = 3 were accepted";
  } catch (const attn::math::InputError& e) {
    EXPECT_STREQ(e.what(),
                 "transformer: rotary positions turn pairs of columns, so d_k = 3 must be even");
  }
}

}  // namespace
