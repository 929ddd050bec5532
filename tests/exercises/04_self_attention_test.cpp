// Chapter 04's exercises: numpy's uniform double, and the article's grid of weights.
#include "04_self_attention.hpp"

#include "exercise_checks.hpp"

#include <04_self_attention/random_sentence.hpp>
#include <attn/math/attention.hpp>
#include <attn/numpy/numpy_random.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

using attn_exercise::near;
using namespace attn::exercises;

// The same raw draws through your function and through rng.random() give the same doubles.
TEST(Exercise4_1, EqualsRngRandomBitForBit) {
  auto raw = attn::numpy::default_rng(0);
  auto reference = attn::numpy::default_rng(0);
  for (int draw = 0; draw < 1000; ++draw) {
    const std::uint64_t bits = raw.next_uint64();
    const double expected = reference.random();
    const double ours = uniform_from_bits(bits);
    ASSERT_EQ(ours, expected) << "draw " << draw << ": bits 0x" << std::hex << bits << std::dec
                              << " give " << ours << ", rng.random() gives " << expected;
  }
}

// The ends of the range: 0 maps to 0, and the largest word stays below 1.
TEST(Exercise4_1, TheEndsOfTheRange) {
  EXPECT_EQ(uniform_from_bits(0), 0.0) << "0 must give 0";
  const double top = uniform_from_bits(std::numeric_limits<std::uint64_t>::max());
  EXPECT_LT(top, 1.0) << "the largest 64-bit word must give a number below 1";
  EXPECT_EQ(top, 1.0 - std::ldexp(1.0, -53)) << "the largest word gives 1 - 2^-53";
}

// The article's grid (printed to two digits) and the library's (every digit).
TEST(Exercise4_2, TheGridIsTheArticles) {
  const auto sentence = attn::ch04::random_sentence("0", "the cat drank the milk");
  const arma::mat weights = self_attention_weights(sentence.X, sentence.W);
  const arma::mat article{{0.03, 0.32, 0.12, 0.51, 0.02},
                          {0.56, 0.13, 0.05, 0.02, 0.24},
                          {0.45, 0.31, 0.02, 0.08, 0.14},
                          {0.08, 0.15, 0.50, 0.16, 0.11},
                          {0.02, 0.38, 0.20, 0.39, 0.02}};
  EXPECT_TRUE(near("the weights, to the article's two digits", weights, article, 0.005));
  EXPECT_TRUE(near("the weights", weights,
                   attn::math::self_attention(sentence.X, sentence.W).weights, 1e-14));
}

// Another seed and sentence: rows still sum to 1 and agree with the library.
TEST(Exercise4_2, AnySentenceMatchesTheLibrary) {
  const auto sentence = attn::ch04::random_sentence("7", "the dog chased the ball");
  const arma::mat weights = self_attention_weights(sentence.X, sentence.W);
  EXPECT_TRUE(near("the row sums", arma::mat(arma::sum(weights, 1)),
                   arma::mat(arma::ones(weights.n_rows, 1)), 1e-12));
  EXPECT_TRUE(near("the weights (seed 7)", weights,
                   attn::math::self_attention(sentence.X, sentence.W).weights, 1e-14));
}
