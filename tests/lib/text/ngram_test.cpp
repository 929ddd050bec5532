// Byte n-gram models with interpolated Kneser-Ney smoothing (attn/text/ngram.hpp): a bigram model
// worked by hand, distributions that sum to 1 everywhere, and agreement with the direct counting
// of tests/data/generate_ngram_fixtures.py.
#include <attn/math/validate.hpp>
#include <attn/text/ngram.hpp>

#include <gtest/gtest.h>

#include "bad_input.hpp"
#include "fixture_blocks.hpp"

#include <cmath>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

/// tests/data/ngram_sample.txt, split at its last blank line: the training text before it and
/// the held-out paragraph after it.
std::pair<std::string, std::string> sample() {
  std::ifstream in(std::string(ATTN_TEST_DATA_DIR) + "/ngram_sample.txt", std::ios::binary);
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const std::size_t blank = text.rfind("\n\n");
  if (blank == std::string::npos)
    throw std::runtime_error("ngram_sample.txt: no blank line");
  return {text.substr(0, blank), text.substr(blank + 2)};
}

double sum_over_bytes(const attn::text::NgramModel& model, std::string_view context) {
  double sum = 0.0;
  for (int w = 0; w < 256; ++w)
    sum += model.probability(context, static_cast<unsigned char>(w));
  return sum;
}

// A bigram model (n = 2) trained on "abracadabra", by hand.
//
// Order 2 counts the 10 bigrams: ab 2, br 2, ra 2, ac 1, ca 1, ad 1, da 1. Four are seen once
// and three twice, so D_2 = 4 / (4 + 2·3) = 0.4. The contexts: after a, c(a·) = 4 over
// N1+(a·) = 3 bytes (b c d); after r, c(r·) = 2 over one byte (a).
//
// Order 1 counts, for each byte, the distinct bytes seen before it: a after r, c and d (3); b, c,
// d after a, and r after b (1 each). Total 7, the number of distinct bigrams, over 5 bytes; four
// are seen once and none twice, so D_1 = 4 / 4 = 1, and with P_0 = 1/256:
//   P_1(a) = (3 - 1 + 1·5/256) / 7 = 517/1792,   P_1(b) = (1 - 1 + 5/256) / 7 = 5/1792,
//   and 5/1792 for every byte never seen, z say.
// Then
//   P(b | a) = (2 - 0.4 + 0.4·3·P_1(b)) / 4 = 0.4 + 0.3 · 5/1792,
//   P(a | r) = (2 - 0.4 + 0.4·1·P_1(a)) / 2 = 0.8 + 0.2 · 517/1792,
//   P(z | a) = (0 + 0.4·3·P_1(z)) / 4 = 0.3 · 5/1792,
//   P(a | z) = P_1(a), z never having been a context.
TEST(NgramModel, BigramOnAbracadabraAsWorkedByHand) {
  const attn::text::NgramModel model(2, "abracadabra");
  EXPECT_DOUBLE_EQ(model.discount(1), 1.0);
  EXPECT_DOUBLE_EQ(model.discount(2), 0.4);
  EXPECT_EQ(model.ngram_count(), 5u + 7u);  // the five bytes and the seven distinct bigrams
  EXPECT_NEAR(model.probability("", 'a'), 517.0 / 1792, 1e-15);  // the first byte of a text
  EXPECT_NEAR(model.probability("", 'b'), 5.0 / 1792, 1e-15);
  EXPECT_NEAR(model.probability("", 'z'), 5.0 / 1792, 1e-15);
  EXPECT_NEAR(model.probability("a", 'b'), 0.4 + 0.3 * 5.0 / 1792, 1e-15);
  EXPECT_NEAR(model.probability("r", 'a'), 0.8 + 0.2 * 517.0 / 1792, 1e-15);
  EXPECT_NEAR(model.probability("a", 'z'), 0.3 * 5.0 / 1792, 1e-15);
  EXPECT_NEAR(model.probability("z", 'a'), 517.0 / 1792, 1e-15);
  // Only the last n - 1 = 1 byte of a context is read.
  EXPECT_EQ(model.probability("abracada", 'b'), model.probability("a", 'b'));
  // "rab": the first byte with no context, then one byte of context each.
  const double bits =
      -(std::log2(model.probability("", 'r')) + std::log2(model.probability("r", 'a')) +
        std::log2(model.probability("a", 'b'))) /
      3.0;
  EXPECT_NEAR(model.bits_per_byte("rab"), bits, 1e-15);
  // From byte 1 on: "r" is context only.
  const double from_one =
      -(std::log2(model.probability("r", 'a')) + std::log2(model.probability("a", 'b'))) / 2.0;
  EXPECT_NEAR(model.bits_per_byte("rab", 1), from_one, 1e-15);
}

TEST(NgramModel, ProbabilitiesOfAllBytesSumToOneAfterAnyContext) {
  const std::string training = sample().first;
  // Contexts seen often and rarely, never seen, of bytes never seen, longer than any order reads.
  const std::vector<std::string> contexts = {
      "",   "t",       "th",        "the ",         "the sea", "e s",  "q",
      "\n", "caf\xc3", "ighthouse", "sea, the sea", "zzzz",    "\xff", "\xff\xfe\x01"};
  for (int n = 1; n <= 7; ++n) {
    const attn::text::NgramModel model(n, training);
    for (const std::string& context : contexts) {
      EXPECT_NEAR(sum_over_bytes(model, context), 1.0, 1e-12) << "n = " << n << ", " << context;
      for (int w = 0; w < 256; ++w)
        ASSERT_GT(model.probability(context, static_cast<unsigned char>(w)), 0.0)
            << "n = " << n << ", " << context << ", byte " << w;
    }
  }
}

TEST(NgramModel, ProbabilitiesSumToOneAfterEveryContextOfRandomTexts) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> byte(0, 5), length(1, 60), order(1, 6);
  const auto text = [&](int size) {
    std::string s;
    for (int i = 0; i < size; ++i)
      s += static_cast<char>('a' + byte(rng));
    return s;
  };
  for (int trial = 0; trial < 40; ++trial) {
    const std::string training = text(length(rng));
    const attn::text::NgramModel model(order(rng), training);
    for (std::size_t i = 0; i <= training.size(); ++i)  // every context the text holds
      EXPECT_NEAR(sum_over_bytes(model, training.substr(0, i)), 1.0, 1e-12)
          << training << " after " << i << " bytes";
    EXPECT_NEAR(sum_over_bytes(model, text(8)), 1.0, 1e-12) << training;
  }
}

TEST(NgramModel, ATrainingTextShorterThanTheOrderStillGivesADistribution) {
  const attn::text::NgramModel model(5, "ab");  // no 5-gram at all: every context passes P_1 on
  for (const std::string_view context : {"", "a", "xa", "xyza", "b"})
    EXPECT_NEAR(sum_over_bytes(model, context), 1.0, 1e-12) << context;
  EXPECT_LE(model.bits_per_byte("abba"), 8.0);
}

TEST(NgramModel, OnRepetitiveTextBitsPerByteFallWithTheOrder) {
  std::string text;
  for (int i = 0; i < 40; ++i)
    text += "the cat sat on the mat; the rat ate the oat. ";
  double previous = 8.0;  // the uniform distribution's
  for (int n = 1; n <= 5; ++n) {
    const double bits = attn::text::NgramModel(n, text).bits_per_byte(text);
    EXPECT_LT(bits, previous) << "n = " << n;
    previous = bits;
  }
  // Four bytes of context predict every byte but the one after "the ", which is c, m, r or o:
  // 2 bits, four times in each 45 bytes. Close to that is the least a model can spend.
  EXPECT_LT(previous, 8.0 / 45.0 + 0.05);
}

TEST(NgramModel, MatchesTheDirectCountingOfThePythonReference) {
  const auto blocks = attn_test::fixture_blocks("ngram_fixtures.txt");
  const auto [training, held_out] = sample();
  // The queries of tests/data/generate_ngram_fixtures.py, in its order.
  const std::vector<std::pair<std::string, unsigned char>> queries = {
      {"", 'e'},   {"th", 'e'},   {"the s", 'e'}, {" the", 0xFF},
      {"zq", 'x'}, {"caf", 0xC3}, {"e s", 'h'},   {"\n", 't'}};
  const auto near = [](double actual, double expected) {
    return std::abs(actual - expected) <= 1e-12 * std::abs(expected);
  };
  for (int n = 1; n <= 5; ++n) {
    const attn::text::NgramModel model(n, training);
    const std::string suffix = " n=" + std::to_string(n);
    const arma::mat& discounts = blocks.at("discounts" + suffix);
    ASSERT_EQ(discounts.n_cols, static_cast<arma::uword>(n));
    for (int k = 1; k <= n; ++k)
      EXPECT_TRUE(near(model.discount(k), discounts(0, k - 1))) << "D_" << k << suffix;
    EXPECT_TRUE(
        near(model.bits_per_byte(training), blocks.at("bits per byte training" + suffix)(0, 0)))
        << suffix;
    EXPECT_TRUE(
        near(model.bits_per_byte(held_out), blocks.at("bits per byte held-out" + suffix)(0, 0)))
        << suffix;
    const arma::mat& expected = blocks.at("probabilities" + suffix);
    ASSERT_EQ(expected.n_cols, queries.size());
    for (std::size_t q = 0; q < queries.size(); ++q)
      EXPECT_TRUE(near(model.probability(queries[q].first, queries[q].second), expected(0, q)))
          << "query " << q << suffix << ": "
          << model.probability(queries[q].first, queries[q].second) << " against "
          << expected(0, q);
  }
}

TEST(NgramModel, RefusesAnOrderBelowOneAndEmptyTexts) {
  using attn_bad_input::ThrowsNaming;
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>([] { attn::text::NgramModel(0, "abc"); },
                                                   "the order must be at least 1, not 0"));
  EXPECT_TRUE(
      ThrowsNaming<attn::math::InputError>([] { attn::text::NgramModel(-2, "abc"); }, "not -2"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>([] { attn::text::NgramModel(3, ""); },
                                                   "the training text is empty"));
  const attn::text::NgramModel model(3, "abc");
  EXPECT_TRUE(
      ThrowsNaming<attn::math::InputError>([&] { model.bits_per_byte(""); }, "the text is empty"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>([&] { model.bits_per_byte("ab", 2); },
                                                   "from byte 2 of a text of 2 bytes"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>([&] { model.discount(0); }, "order 0"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>([&] { model.discount(4); }, "between 1 and 3"));
}

}  // namespace
