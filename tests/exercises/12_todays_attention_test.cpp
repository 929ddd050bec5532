// Chapter 12's exercises: the KV cache's bytes, held to today's models worked by hand and to the
// library's decoder token by token; and RMSNorm's backward pass for one row, held to two rows
// worked by hand, to the library, to finite differences and to its orthogonality to x.
#include "12_todays_attention.hpp"

#include "exercise_checks.hpp"

#include <attn/gpt/decoder.hpp>
#include <attn/gpt/model.hpp>
#include <attn/math/layers.hpp>
#include <attn/numpy/numpy_random.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpt = attn::gpt;
using attn_exercise::near;
using namespace attn::exercises;

namespace {

// ---- Exercise 12.1 ----

constexpr std::size_t kKiB = 1024, kMiB = 1024 * kKiB, kGiB = 1024 * kMiB;
constexpr std::size_t kFp16 = 2, kFp32 = 4, kDouble = 8;

// The attention's shape of a model: only what its cache depends on is set.
gpt::TransformerConfig shape(arma::uword layers, arma::uword heads, arma::uword d_model,
                             arma::uword kv_heads = 0, arma::uword window = 0) {
  return {.d_model = d_model,
          .heads = heads,
          .layers = layers,
          .kv_heads = kv_heads,
          .sliding_window = window};
}

// Llama 2 7B, Llama 2 70B and Mistral 7B: their config.json's layers, heads, key/value heads,
// hidden size and (Mistral's) sliding window.
const gpt::TransformerConfig kLlama2_7B = shape(32, 32, 4096);
const gpt::TransformerConfig kLlama2_70B = shape(80, 64, 8192, 8);
const gpt::TransformerConfig kMistral7B = shape(32, 32, 4096, 8, 4096);

// A model's sizes for a message: "L = 2, h = 4, kv_heads = 2, d = 64, window = 16".
std::string sizes(const gpt::TransformerConfig& c) {
  std::ostringstream text;
  text << "L = " << c.layers << ", h = " << c.heads << ", kv_heads = " << c.kv_heads
       << ", d = " << c.d_model << ", window = " << c.sliding_window;
  return text.str();
}

// Passes if kv_cache_bytes(config, tokens, bytes_per_number) is `expected`.
::testing::AssertionResult cache_is(const std::string& model, const gpt::TransformerConfig& config,
                                    std::size_t tokens, std::size_t bytes_per_number,
                                    std::size_t expected) {
  const std::size_t actual = kv_cache_bytes(config, tokens, bytes_per_number);
  if (actual == expected)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << model << " (" << sizes(config) << "), " << tokens << " tokens of " << bytes_per_number
         << "-byte numbers: kv_cache_bytes gave " << actual << " bytes, expected " << expected;
}

// A random small model of any kind: 1 to 4 heads of 2 or 4 numbers, key/value heads dividing
// them (or 0), 1 to 3 layers, a window or none, and any positions, norm and MLP.
gpt::TransformerConfig random_config(attn::numpy::Generator& rng) {
  const auto pick = [&](arma::uword n) {
    return static_cast<arma::uword>(rng.next_uint64() % n);
  };
  const std::vector<arma::uword> head_counts = {1, 2, 4};
  const arma::uword heads = head_counts[pick(3)];
  std::vector<arma::uword> kv_choices = {0};
  for (arma::uword g = 1; g <= heads; ++g)
    if (heads % g == 0)
      kv_choices.push_back(g);
  const arma::uword max_length = 3 + pick(6);
  const std::vector<gpt::Positions> positions = {gpt::Positions::none, gpt::Positions::sinusoidal,
                                                 gpt::Positions::learned, gpt::Positions::rotary};
  gpt::TransformerConfig c{.vocabulary = 5,
                           .d_model = heads * (2 + 2 * pick(2)),
                           .heads = heads,
                           .layers = 1 + pick(3),
                           .d_ff = 4,
                           .max_length = max_length,
                           .positions = positions[pick(4)],
                           .tied_embeddings = pick(2) == 0};
  c.kv_heads = kv_choices[pick(kv_choices.size())];
  c.sliding_window = pick(2) == 0 ? 0 : 1 + pick(max_length + 1);  // up to one past max_length
  c.norm = pick(2) == 0 ? gpt::Norm::layer_norm : gpt::Norm::rms_norm;
  c.mlp = pick(2) == 0 ? gpt::Mlp::gelu : gpt::Mlp::swiglu;
  return c;
}

// ---- Exercise 12.2 ----

// A row to normalise, a gamma and an upstream gradient, all of width 7.
struct Row {
  arma::rowvec x, gamma, dy;
};

Row random_row(std::uint64_t seed) {
  attn::numpy::Generator rng = attn::numpy::default_rng(seed);
  Row row;
  row.x = 2.0 * rng.normal(1, 7) + 0.5;
  row.gamma = 1.0 + 0.3 * rng.normal(1, 7);
  row.dy = rng.normal(1, 7);
  return row;
}

// "eps 1e-05" for a message.
std::string with_eps(double eps) {
  std::ostringstream text;
  text << "eps " << eps;
  return text.str();
}

// L(x) = Σ_j dy_j y_j, with y the library's RMSNorm of x.
double loss(const Row& row, const arma::rowvec& x, double eps) {
  return arma::accu(row.dy % attn::math::rms_norm(x, row.gamma, eps).y);
}

}  // namespace

// Llama 2 7B, 70B and Mistral 7B in fp16, one token and a context of 4096, worked by hand.
TEST(Exercise12_1, TodaysModelsByHand) {
  // 2 · 32 layers · 32 key/value heads · 128 · 2 bytes: half a mebibyte a token.
  EXPECT_TRUE(cache_is("Llama 2 7B", kLlama2_7B, 1, kFp16, 524288));
  EXPECT_TRUE(cache_is("Llama 2 7B", kLlama2_7B, 1, kFp16, kMiB / 2));
  EXPECT_TRUE(cache_is("Llama 2 7B", kLlama2_7B, 4096, kFp16, 2 * kGiB));
  // 2 · 80 · 8 · 128 · 2: 320 KiB a token, where 64 key/value heads would take 8 times as much.
  EXPECT_TRUE(cache_is("Llama 2 70B", kLlama2_70B, 1, kFp16, 327680));
  EXPECT_TRUE(cache_is("Llama 2 70B", kLlama2_70B, 1, kFp16, 320 * kKiB));
  EXPECT_TRUE(cache_is("Llama 2 70B", kLlama2_70B, 4096, kFp16, 1280 * kMiB));
  EXPECT_TRUE(
      cache_is("Llama 2 70B with 64 key/value heads", shape(80, 64, 8192, 64), 1, kFp16, 2621440))
      << "kv_heads = 64 = h: ordinary multi-head attention";
  EXPECT_TRUE(cache_is("Llama 2 70B with kv_heads 0", shape(80, 64, 8192, 0), 1, kFp16, 2621440))
      << "kv_heads = 0 means as many key/value heads as heads";
  // 2 · 32 · 8 · 128 · 2: 128 KiB a token, up to the window of 4096.
  EXPECT_TRUE(cache_is("Mistral 7B", kMistral7B, 1, kFp16, 131072));
  EXPECT_TRUE(cache_is("Mistral 7B", kMistral7B, 4096, kFp16, 536870912));
  EXPECT_TRUE(cache_is("Mistral 7B", kMistral7B, 4096, kFp16, 512 * kMiB));
}

// GPT-2 small (12 layers of 12 heads, d = 768, 1024 tokens of context) and chapter 12's own
// models, in doubles as attn::gpt::Decoder keeps them.
TEST(Exercise12_1, Gpt2AndTheChaptersModelsByHand) {
  const gpt::TransformerConfig gpt2_small = shape(12, 12, 768);
  // 2 · 12 · 12 · 64 · 4 bytes in fp32: 72 KiB a token, 72 MiB for a full context.
  EXPECT_TRUE(cache_is("GPT-2 small", gpt2_small, 1, kFp32, 73728));
  EXPECT_TRUE(cache_is("GPT-2 small", gpt2_small, 1024, kFp32, 72 * kMiB));
  EXPECT_TRUE(cache_is("GPT-2 small", gpt2_small, 1024, kFp16, 36 * kMiB));
  EXPECT_TRUE(cache_is("GPT-2 small", gpt2_small, 0, kFp32, 0)) << "nothing decoded, nothing held";
  // The chapter's block: d = 64, 4 heads of 16, 2 layers, a context of 64 tokens.
  gpt::TransformerConfig block = shape(2, 4, 64);
  block.max_length = 64;
  EXPECT_TRUE(cache_is("the chapter's GPT-2 block", block, 1, kDouble, 2048));
  EXPECT_TRUE(cache_is("the chapter's GPT-2 block", block, 64, kDouble, 131072));
  block.kv_heads = 2;
  EXPECT_TRUE(cache_is("the chapter's grouped-query block", block, 1, kDouble, 1024));
  block.kv_heads = 1;
  EXPECT_TRUE(cache_is("the chapter's multi-query block", block, 1, kDouble, 512));
  block.kv_heads = 0;
  block.sliding_window = 16;
  EXPECT_TRUE(cache_is("the chapter's windowed block", block, 10, kDouble, 20480));
  EXPECT_TRUE(cache_is("the chapter's windowed block", block, 64, kDouble, 32768))
      << "a window of 16: after 64 tokens the cache holds 16";
}

// The window caps the tokens held, not what each costs: the cache grows by the same bytes a
// token up to w tokens, and not at all after.
TEST(Exercise12_1, TheWindowCapsTheTokensHeld) {
  for (const std::size_t tokens : {0U, 1U, 100U, 4095U, 4096U, 4097U, 8192U, 32768U}) {
    const std::size_t held = tokens < 4096 ? tokens : 4096;
    EXPECT_TRUE(cache_is("Mistral 7B", kMistral7B, tokens, kFp16, held * 131072));
    EXPECT_TRUE(cache_is("Mistral 7B without its window", shape(32, 32, 4096, 8), tokens, kFp16,
                         tokens * 131072));
  }
  EXPECT_TRUE(
      cache_is("Mistral 7B without its window", shape(32, 32, 4096, 8), 32768, kFp16, 4 * kGiB));
  EXPECT_TRUE(cache_is("a window of 1", shape(1, 1, 2, 0, 1), 7, kDouble, 32))
      << "1 layer, 1 head of 2 numbers, a window of 1: one key and one value of 2 doubles";
}

// Positions, norm, MLP, vocabulary and context length change nothing in the cache: the same
// attention shape gives the same bytes whatever they are.
TEST(Exercise12_1, OnlyTheAttentionsShapeCounts) {
  gpt::TransformerConfig plain = shape(3, 4, 16, 2, 5);
  gpt::TransformerConfig today = plain;
  today.vocabulary = 1024;
  today.max_length = 3;  // fewer than the tokens asked about: not checked
  today.positions = gpt::Positions::rotary;
  today.norm = gpt::Norm::rms_norm;
  today.mlp = gpt::Mlp::swiglu;
  today.d_ff = 12;
  today.tied_embeddings = true;
  for (const std::size_t tokens : {1U, 4U, 9U}) {
    const std::size_t expected = 2 * 3 * 2 * 4 * 8 * (tokens < 5 ? tokens : 5);
    EXPECT_TRUE(
        cache_is("3 layers, 4 heads sharing 2 key/value heads", plain, tokens, kDouble, expected));
    EXPECT_TRUE(cache_is("the same with rotary positions, RMSNorm and SwiGLU", today, tokens,
                         kDouble, expected));
  }
}

// Random small models of every kind, decoded token by token by the library's decoder: after every
// token, your count in doubles equals the bytes its caches hold.
TEST(Exercise12_1, EqualsTheDecodersCacheBytes) {
  attn::numpy::Generator rng = attn::numpy::default_rng(12);
  for (int trial = 0; trial < 40; ++trial) {
    const gpt::TransformerConfig c = random_config(rng);
    const gpt::TransformerWeights w = gpt::init_transformer(
        c, [&](arma::uword rows, arma::uword cols) { return rng.normal(rows, cols); });
    gpt::Decoder decoder(w);
    for (arma::uword t = 1; t <= c.max_length; ++t) {
      decoder.append((3 * t + 1) % c.vocabulary);
      ASSERT_TRUE(cache_is("trial " + std::to_string(trial) + ", positions " +
                               std::string(gpt::to_string(c.positions)),
                           c, t, kDouble, decoder.cache_bytes()))
          << "attn::gpt::Decoder::cache_bytes() after " << t << " tokens";
    }
  }
}

// Sizes the model cannot have are refused: heads that do not divide d, key/value heads that do
// not divide the heads, no heads at all, and numbers of no bytes.
TEST(Exercise12_1, SizesThatDoNotFitAreRefused) {
  struct Case {
    std::string why;
    gpt::TransformerConfig config;
    std::size_t bytes_per_number;
  };
  const std::vector<Case> cases = {
      {"4 heads cannot share d = 10", shape(2, 4, 10), kFp16},
      {"no heads", shape(2, 0, 8), kFp16},
      {"3 key/value heads cannot be shared by 4 heads equally", shape(2, 4, 8, 3), kFp16},
      {"8 key/value heads for 4 heads", shape(2, 4, 8, 8), kFp16},
      {"a number of 0 bytes", shape(2, 4, 8), 0},
  };
  for (const Case& c : cases) {
    EXPECT_THROW(kv_cache_bytes(c.config, 5, c.bytes_per_number), std::invalid_argument)
        << c.why << " (" << sizes(c.config) << ", " << c.bytes_per_number
        << " bytes a number): kv_cache_bytes must throw std::invalid_argument";
  }
}

// x = (1, 7), gamma = 1, dy = (1, 0), eps = 0: r = 5, and dL/dx = (49/250, −7/250) (the
// statement's example). x = (2, 2, 2, 2), gamma = (1, 2, 3, 4), dy = 1, eps = 5: r = √(4 + 5) = 3,
// the mean of x ⊙ g is 5, and dL/dx = g/3 − 2 · 5/27 = (−1, 8, 17, 26)/27: eps is in r³ too.
TEST(Exercise12_2, TwoRowsByHand) {
  EXPECT_TRUE(near("dL/dx for x = (1, 7), gamma = (1, 1), dy = (1, 0), eps = 0",
                   rms_norm_backward_row({1.0, 7.0}, {1.0, 1.0}, {1.0, 0.0}, 0.0),
                   arma::rowvec{49.0 / 250, -7.0 / 250}, 1e-14));
  EXPECT_TRUE(near(
      "dL/dx for x = (2, 2, 2, 2), gamma = (1, 2, 3, 4), dy = (1, 1, 1, 1), eps = 5",
      rms_norm_backward_row({2.0, 2.0, 2.0, 2.0}, {1.0, 2.0, 3.0, 4.0}, {1.0, 1.0, 1.0, 1.0}, 5.0),
      arma::rowvec{-1.0, 8.0, 17.0, 26.0} / 27, 1e-14));
}

// The library's backward pass on a one-row matrix gives the same row, with Llama's eps and with a
// large one.
TEST(Exercise12_2, EqualsTheLibrarysBackwardPass) {
  for (const std::uint64_t seed : {120U, 121U, 122U}) {
    const Row row = random_row(seed);
    for (const double eps : {1e-5, 1.0}) {
      const attn::math::RmsNorm forward = attn::math::rms_norm(row.x, row.gamma, eps);
      const arma::mat expected = attn::math::rms_norm_backward(forward, row.gamma, row.dy).dx;
      EXPECT_TRUE(near("dL/dx (seed " + std::to_string(seed) + ", " + with_eps(eps) + ")",
                       rms_norm_backward_row(row.x, row.gamma, row.dy, eps), expected, 1e-13));
    }
  }
}

// Central finite differences, (L(x + h e_j) − L(x − h e_j)) / 2h, entry by entry; and the
// default eps is Llama 2's 1e-5.
TEST(Exercise12_2, AgreesWithFiniteDifferences) {
  const Row row = random_row(123);
  for (const double eps : {1e-5, 0.5}) {
    const arma::rowvec numeric = attn_exercise::central_differences(
        [&](const arma::rowvec& x) { return loss(row, x, eps); }, row.x, 1e-5);
    EXPECT_TRUE(near("dL/dx against finite differences, " + with_eps(eps),
                     rms_norm_backward_row(row.x, row.gamma, row.dy, eps), numeric, 1e-7));
  }
  const arma::rowvec numeric = attn_exercise::central_differences(
      [&](const arma::rowvec& x) { return loss(row, x, 1e-5); }, row.x, 1e-5);
  EXPECT_TRUE(near("dL/dx with the default eps against finite differences with eps 1e-5",
                   rms_norm_backward_row(row.x, row.gamma, row.dy), numeric, 1e-7));
}

// With eps = 0, y(c x) = y(x) for any c > 0: L does not change along x, so the gradient has no
// component along it, x · dL/dx = 0. With eps > 0 it has one, d · eps · mean(x ⊙ g) / r³, which
// vanishes as eps does.
TEST(Exercise12_2, WithoutEpsTheGradientIsOrthogonalToX) {
  for (const std::uint64_t seed : {124U, 125U}) {
    const Row row = random_row(seed);
    const arma::rowvec dx = rms_norm_backward_row(row.x, row.gamma, row.dy, 0.0);
    EXPECT_TRUE(near("x · dL/dx with eps = 0 (seed " + std::to_string(seed) + ")",
                     arma::dot(row.x, dx), 0.0, 1e-13))
        << "scaling x does not change RMSNorm's output when eps = 0";
    const double eps = 0.25;
    const double d = static_cast<double>(row.x.n_elem);
    const double r = std::sqrt(arma::accu(row.x % row.x) / d + eps);
    const double xg_mean = arma::accu(row.x % row.gamma % row.dy) / d;
    EXPECT_TRUE(near("x · dL/dx with eps = 0.25 (seed " + std::to_string(seed) + ")",
                     arma::dot(row.x, rms_norm_backward_row(row.x, row.gamma, row.dy, eps)),
                     d * eps * xg_mean / (r * r * r), 1e-13));
  }
}

// gamma or dy of the wrong width is refused.
TEST(Exercise12_2, AShapeMismatchIsRefused) {
  const Row row = random_row(126);
  const arma::rowvec five(5, arma::fill::ones);
  EXPECT_THROW(rms_norm_backward_row(row.x, five, row.dy), std::invalid_argument)
      << "x is (1 × 7) and gamma (1 × 5): rms_norm_backward_row must throw std::invalid_argument";
  EXPECT_THROW(rms_norm_backward_row(row.x, row.gamma, five), std::invalid_argument)
      << "x is (1 × 7) and dy (1 × 5): rms_norm_backward_row must throw std::invalid_argument";
}
