// Chapter 11's exercises: one merge of BPE training, held to hand-worked pieces and to the
// library's train_bpe() merge by merge; and top-p filtering, held to hand-worked distributions
// and to the library's next_token_distribution().
#include "11_small_gpt.hpp"

#include "exercise_checks.hpp"

#include <attn/math/sampling.hpp>
#include <attn/numpy/numpy_random.hpp>
#include <attn/text/bpe.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

using attn::text::Merge;
using attn::text::TokenId;
using attn_exercise::near;
using namespace attn::exercises;

namespace {

// ---- Exercise 11.1 ----

std::vector<TokenId> bytes_of(std::string_view text) {
  std::vector<TokenId> tokens;
  for (const char c : text)
    tokens.push_back(static_cast<unsigned char>(c));
  return tokens;
}

// A token for a message: its id, and its bytes where the tokenizer knows it.
std::string named(TokenId id, const attn::text::BpeTokenizer* tokenizer = nullptr) {
  std::string name = std::to_string(id);
  if (id < attn::text::kByteTokens)
    name += " \"" + attn::text::printable(std::string(1, static_cast<char>(id))) + "\"";
  else if (tokenizer != nullptr && id < tokenizer->vocab_size())
    name += " \"" + attn::text::printable(tokenizer->token_bytes(id)) + "\"";
  return name;
}

std::string named(const std::optional<Merge>& pair,
                  const attn::text::BpeTokenizer* tokenizer = nullptr) {
  if (!pair)
    return "std::nullopt";
  return "(" + named(pair->left, tokenizer) + ", " + named(pair->right, tokenizer) + ")";
}

std::string named(const std::vector<TokenId>& tokens) {
  std::string text = "(";
  for (std::size_t i = 0; i < tokens.size(); ++i)
    text += (i == 0 ? "" : ", ") + std::to_string(tokens[i]);
  return text + ")";
}

// Passes if bpe_merge_step chose `expected` and left every piece with the tokens `after`.
::testing::AssertionResult step_gives(std::vector<CountedPiece> pieces, TokenId new_id,
                                      const std::optional<Merge>& expected,
                                      const std::vector<std::vector<TokenId>>& after) {
  const std::vector<CountedPiece> before = pieces;
  const std::optional<Merge> chosen = bpe_merge_step(pieces, new_id);
  if (chosen != expected)
    return ::testing::AssertionFailure()
           << "the step chose " << named(chosen) << ", expected " << named(expected);
  if (pieces.size() != after.size())
    return ::testing::AssertionFailure() << "the step left " << pieces.size() << " pieces of the "
                                         << after.size() << " it was given";
  for (std::size_t i = 0; i < after.size(); ++i) {
    if (pieces[i].tokens != after[i])
      return ::testing::AssertionFailure()
             << "piece " << i << ", " << named(before[i].tokens) << ", became "
             << named(pieces[i].tokens) << ", expected " << named(after[i]);
    if (pieces[i].count != before[i].count)
      return ::testing::AssertionFailure() << "the count of piece " << i << " changed from "
                                           << before[i].count << " to " << pieces[i].count;
  }
  return ::testing::AssertionSuccess();
}

// The distinct pieces of `text` as bytes, with their counts, as train_bpe() starts.
std::vector<CountedPiece> pieces_of(std::string_view text, std::vector<std::string>& names) {
  std::map<std::string_view, std::size_t> counts;
  for (const std::string_view piece : attn::text::pretokenize(text))
    ++counts[piece];
  std::vector<CountedPiece> pieces;
  names.clear();
  for (const auto& [piece, count] : counts) {
    pieces.push_back({bytes_of(piece), count});
    names.emplace_back(piece);
  }
  return pieces;
}

// Runs bpe_merge_step from the bytes of `text` until it returns std::nullopt, and holds every
// pair to the merge train_bpe() learns at the same rank, up to `vocab_size` tokens; then every
// piece's tokens to the trained tokenizer's encoding of it.
void train_like_the_library(std::string_view text, std::size_t vocab_size,
                            const std::string& label) {
  const attn::text::BpeTokenizer bpe = attn::text::train_bpe(text, vocab_size);
  const std::vector<Merge>& merges = bpe.merges();
  std::vector<std::string> names;
  std::vector<CountedPiece> pieces = pieces_of(text, names);
  for (std::size_t k = 0; k <= merges.size(); ++k) {
    if (k == merges.size() && bpe.vocab_size() == vocab_size)
      break;  // the library stopped at the vocabulary asked for, not for want of pairs
    const auto id = static_cast<TokenId>(attn::text::kByteTokens + k);
    const std::optional<Merge> chosen = bpe_merge_step(pieces, id);
    const std::optional<Merge> expected =
        k < merges.size() ? std::optional<Merge>(merges[k]) : std::nullopt;
    ASSERT_TRUE(chosen == expected)
        << label << ": merge " << k << " (new token " << id << "): your step chose "
        << named(chosen, &bpe) << ", train_bpe() learned " << named(expected, &bpe)
        << (k < merges.size() ? "" : ", as no piece has two tokens left");
  }
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    ASSERT_TRUE(pieces[i].tokens == bpe.encode(names[i]))
        << label << ": after " << merges.size() << " merges the piece \""
        << attn::text::printable(names[i]) << "\" is " << named(pieces[i].tokens)
        << ", and the trained tokenizer encodes it as " << named(bpe.encode(names[i]));
  }
}

// ---- Exercise 11.2 ----

// Passes if top_p_filter(q, p) is `expected` within `tolerance`, and keeps exactly the tokens
// `expected` keeps (a token dropped is exactly 0).
::testing::AssertionResult filter_gives(const arma::rowvec& q, double p,
                                        const arma::rowvec& expected, double tolerance,
                                        const std::string& label) {
  const arma::rowvec actual = top_p_filter(q, p);
  std::ostringstream what;
  what.precision(17);
  what << label << ": top_p_filter(q, p = " << p << ")";
  if (actual.n_elem == expected.n_elem) {
    for (arma::uword i = 0; i < actual.n_elem; ++i) {
      if ((actual(i) == 0.0) != (expected(i) == 0.0))
        return ::testing::AssertionFailure()
               << what.str() << " " << (actual(i) == 0.0 ? "dropped" : "kept") << " token " << i
               << " (q = " << q(i) << "), which the rule " << (actual(i) == 0.0 ? "keeps" : "drops")
               << " (entry " << i << " is " << actual(i) << ", expected " << expected(i) << ")";
    }
  }
  return near(what.str(), actual, expected, tolerance);
}

}  // namespace

// Hugging Face's course example: the pieces hug, pug, pun, bun, hugs, 10, 5, 12, 4 and 5 times.
// (u, g) is counted 20 times, more than (p, u), 17, and every other pair.
TEST(Exercise11_1, TheCourseExampleMergesUG) {
  const TokenId h = 'h', u = 'u', g = 'g', p = 'p', n = 'n', b = 'b', s = 's';
  const std::vector<CountedPiece> pieces = {
      {bytes_of("hug"), 10}, {bytes_of("pug"), 5},  {bytes_of("pun"), 12},
      {bytes_of("bun"), 4},  {bytes_of("hugs"), 5},
  };
  EXPECT_TRUE(step_gives(pieces, 256, Merge{u, g},
                         {{h, 256}, {p, 256}, {p, u, n}, {b, u, n}, {h, 256, s}}));
  // With pug once instead of 5 times, (u, g) falls to 16 and (p, u) to 13, and (u, n)'s 16 ties
  // it: of the two, (u, g) has the same left id and the smaller right id ('g' is 103, 'n' 110).
  std::vector<CountedPiece> fewer = pieces;
  fewer[1].count = 1;
  EXPECT_TRUE(
      step_gives(fewer, 256, Merge{u, g}, {{h, 256}, {p, 256}, {p, u, n}, {b, u, n}, {h, 256, s}}));
  // With bun 9 times instead of 4, (u, n) is counted 21 times and wins, against (u, g)'s 20.
  std::vector<CountedPiece> more_bun = pieces;
  more_bun[3].count = 9;
  EXPECT_TRUE(step_gives(more_bun, 300, Merge{u, n},
                         {{h, u, g}, {p, u, g}, {p, 300}, {b, 300}, {h, u, g, s}}));
}

// A pair is counted at every position, times its piece's count: `zzz` holds (z, z) twice, so
// it beats (a, b) once though 'a' is the smaller id; and it is replaced left to right.
TEST(Exercise11_1, EveryPositionCountsAndMergesGoLeftToRight) {
  const TokenId z = 'z', a = 'a', b = 'b';
  EXPECT_TRUE(
      step_gives({{bytes_of("zzz"), 1}, {bytes_of("ab"), 1}}, 256, Merge{z, z}, {{256, z}, {a, b}}))
      << "zzz holds (z, z) at positions 0 and 1: twice, against (a, b) once";
  EXPECT_TRUE(step_gives({{bytes_of("zzzz"), 1}, {bytes_of("zzzzz"), 1}}, 256, Merge{z, z},
                         {{256, 256}, {256, 256, z}}))
      << "left to right, zzzz becomes two new tokens and zzzzz two and a z";
  EXPECT_TRUE(
      step_gives({{bytes_of("xy"), 3}, {bytes_of("ab"), 2}}, 256, Merge{'x', 'y'}, {{256}, {a, b}}))
      << "xy, 3 times in the text, holds (x, y) 3 times; ab, twice, holds (a, b) twice";
}

// Pairs counted equally: the smallest left id wins, then the smallest right id, whichever
// piece holds them and wherever in it. Ids past the bytes (earlier merges) follow the same rule.
TEST(Exercise11_1, TiesGoToTheSmallestLeftThenRightId) {
  const TokenId a = 'a', b = 'b', c = 'c';
  EXPECT_TRUE(
      step_gives({{bytes_of("ca"), 1}, {bytes_of("ab"), 1}}, 256, Merge{a, b}, {{c, a}, {256}}))
      << "(c, a) comes first, but (a, b)'s left id is smaller";
  EXPECT_TRUE(
      step_gives({{bytes_of("ac"), 1}, {bytes_of("ab"), 1}}, 256, Merge{a, b}, {{a, c}, {256}}))
      << "(a, c) and (a, b) share their left id; (a, b)'s right id is smaller";
  EXPECT_TRUE(step_gives({{{300, 5, 300}, 2}, {{7, 300, 5}, 2}}, 400, Merge{300, 5},
                         {{400, 300}, {7, 400}}))
      << "(300, 5) is counted 4 times, (5, 300) and (7, 300) twice: the count comes before the ids";
  EXPECT_TRUE(step_gives({{{300, 5}, 2}, {{5, 300}, 2}, {{300, 4}, 2}}, 400, Merge{5, 300},
                         {{300, 5}, {400}, {300, 4}}))
      << "three pairs counted twice each: (5, 300) has the smallest left id";
}

// No piece with two tokens: nothing to merge, std::nullopt, and the pieces are left alone.
TEST(Exercise11_1, NothingToMergeGivesNullopt) {
  EXPECT_TRUE(step_gives({{bytes_of("a"), 3}, {{300}, 1}, {bytes_of("!"), 2}}, 301, std::nullopt,
                         {bytes_of("a"), {300}, bytes_of("!")}));
  EXPECT_TRUE(step_gives({}, 256, std::nullopt, {})) << "no pieces at all";
}

// Random texts of a few letters, spaces, newlines and bytes past 0x7F, trained until no pair is
// left: every step is the library's merge of the same rank, and the last step finds nothing.
TEST(Exercise11_1, EqualsTheLibrarysTrainingOnRandomTexts) {
  const std::string alphabet = "aaabbc  \n\xc3\xa9";
  for (const std::uint64_t seed : {110U, 111U, 112U, 113U, 114U, 115U, 116U, 117U}) {
    attn::numpy::Generator rng = attn::numpy::default_rng(seed);
    std::string text;
    const std::size_t length = 50 + rng.next_uint64() % 250;
    for (std::size_t i = 0; i < length; ++i)
      text += alphabet[rng.next_uint64() % alphabet.size()];
    train_like_the_library(text, attn::text::kByteTokens + 10000,
                           "a random text (seed " + std::to_string(seed) + ")");
  }
}

// The library's sample page of English (tests/data/bpe_sample.txt), to a vocabulary of 512:
// 256 merges, the same as train_bpe()'s in the same order.
TEST(Exercise11_1, EqualsTheLibrarysTrainingOnAPageOfEnglish) {
  std::ifstream file(std::string(ATTN_TEST_DATA_DIR) + "/bpe_sample.txt", std::ios::binary);
  const std::string sample{std::istreambuf_iterator<char>(file), {}};
  ASSERT_GT(sample.size(), 3000U) << "tests/data/bpe_sample.txt is missing";
  train_like_the_library(sample, 512, "tests/data/bpe_sample.txt");
}

// The statement's example: a prefix whose mass is exactly p is complete. Just above 3/4 the
// next token, the first 1/8 by index, joins it.
TEST(Exercise11_2, AMassOfExactlyPIsComplete) {
  const arma::rowvec q{0.125, 0.25, 0.5, 0.125};
  EXPECT_TRUE(filter_gives(q, 0.75, arma::rowvec{0.0, 1.0 / 3, 2.0 / 3, 0.0}, 1e-15,
                           "q = (1/8, 1/4, 1/2, 1/8)"))
      << "1/2 + 1/4 is exactly 3/4: the nucleus is complete, no token crosses p";
  EXPECT_TRUE(filter_gives(q, 0.75 + 1.0 / 64, arma::rowvec{1.0 / 7, 2.0 / 7, 4.0 / 7, 0.0}, 1e-15,
                           "q = (1/8, 1/4, 1/2, 1/8)"))
      << "the mass before the third token, 3/4, is below p: it is kept, and of the two 1/8 the "
         "one with the smaller index comes first";
}

// The row comes back in the tokens' own order, not sorted.
TEST(Exercise11_2, TheRowStaysInTheTokensOrder) {
  const arma::rowvec q{0.1, 0.5, 0.15, 0.25};
  EXPECT_TRUE(filter_gives(q, 0.7, arma::rowvec{0.0, 2.0 / 3, 0.0, 1.0 / 3}, 1e-15,
                           "q = (0.1, 0.5, 0.15, 0.25)"));
  EXPECT_TRUE(filter_gives(q, 0.8, arma::rowvec{0.0, 0.5, 0.15, 0.25} / 0.9, 1e-15,
                           "q = (0.1, 0.5, 0.15, 0.25)"));
}

// The most likely token is always kept, however small p; a token alone keeps all the mass.
TEST(Exercise11_2, TheMostLikelyTokenIsAlwaysKept) {
  const arma::rowvec q{0.2, 0.7, 0.1};
  EXPECT_TRUE(filter_gives(q, 1e-9, arma::rowvec{0.0, 1.0, 0.0}, 1e-15, "q = (0.2, 0.7, 0.1)"));
  EXPECT_TRUE(filter_gives(q, 0.7, arma::rowvec{0.0, 1.0, 0.0}, 1e-15, "q = (0.2, 0.7, 0.1)"))
      << "the most likely token alone has mass 0.7 = p: the nucleus is complete";
  EXPECT_TRUE(filter_gives(arma::rowvec{1.0}, 0.5, arma::rowvec{1.0}, 1e-15, "q = (1)"));
}

// Equal probabilities are ranked by index (a stable sort), not in whatever order a sort leaves.
TEST(Exercise11_2, TiesGoToTheLowerIndices) {
  const arma::rowvec uniform(32, arma::fill::value(1.0 / 32));
  arma::rowvec first_eight(32, arma::fill::zeros);
  first_eight.head(8).fill(1.0 / 8);
  EXPECT_TRUE(filter_gives(uniform, 0.25, first_eight, 1e-15, "32 tokens of 1/32"))
      << "8 tokens of 1/32 make exactly 1/4: tokens 0 to 7";
  // 1/64 and 3/64 in turn: 11 tokens of 3/64 reach 1/2 (33/64), the first 11 by index.
  arma::rowvec alternating(32), eleven(32, arma::fill::zeros);
  for (arma::uword i = 0; i < 32; ++i)
    alternating(i) = i % 2 == 0 ? 1.0 / 64 : 3.0 / 64;
  for (arma::uword i = 1; i <= 21; i += 2)
    eleven(i) = 1.0 / 11;
  EXPECT_TRUE(filter_gives(alternating, 0.5, eleven, 1e-15, "1/64 and 3/64 in turn"))
      << "the nucleus is the 3/64 tokens 1, 3, ..., 21";
}

// p = 1 keeps every token: the distribution comes back as it was.
TEST(Exercise11_2, POfOneKeepsEveryToken) {
  attn::numpy::Generator rng = attn::numpy::default_rng(1);
  const arma::rowvec q = attn::math::next_token_distribution(2.0 * rng.normal(1, 40));
  EXPECT_TRUE(filter_gives(q, 1.0, q, 1e-15, "40 random probabilities"));
  const arma::rowvec exact{0.5, 0.25, 0.125, 0.125};
  EXPECT_TRUE(filter_gives(exact, 1.0, exact, 0.0, "q = (1/2, 1/4, 1/8, 1/8)"));
}

// A p outside (0, 1] is refused: p = 0 would keep no token and leave nothing to renormalise.
TEST(Exercise11_2, APOutsideZeroToOneIsRefused) {
  const arma::rowvec q{0.5, 0.3, 0.2};
  for (const double p : {0.0, -0.5, 1.5, std::numeric_limits<double>::quiet_NaN(),
                         std::numeric_limits<double>::infinity()}) {
    EXPECT_THROW(top_p_filter(q, p), std::invalid_argument)
        << "p = " << p << " is not in (0, 1]: top_p_filter must throw std::invalid_argument";
  }
}

// attn::math::next_token_distribution with top_p = p is the softmax at a temperature, cut by top-k,
// then filtered by top-p: your filter on the first two must give the same row.
TEST(Exercise11_2, EqualsTheLibrarysTopP) {
  attn::numpy::Generator rng = attn::numpy::default_rng(112);
  for (int trial = 0; trial < 400; ++trial) {
    const auto V = static_cast<arma::uword>(1 + rng.next_uint64() % 60);
    const arma::rowvec logits = 3.0 * rng.normal(1, V);
    attn::math::SamplingOptions options;
    options.temperature = 0.5 + rng.random() * 1.5;
    options.top_k = trial % 3 == 0 ? static_cast<arma::uword>(rng.next_uint64() % (V + 2)) : 0;
    const arma::rowvec q = attn::math::next_token_distribution(logits, options);
    options.top_p = 1.0 - rng.random();  // in (0, 1]
    const arma::rowvec expected = attn::math::next_token_distribution(logits, options);
    std::ostringstream label;
    label << "trial " << trial << " (V = " << V << ", temperature " << options.temperature
          << ", top_k " << options.top_k << ")";
    ASSERT_TRUE(filter_gives(q, options.top_p, expected, 1e-14, label.str()));
  }
}
