// The byte-level BPE tokenizer (attn/text/bpe.hpp): pieces, a training worked by hand, the
// tie-break, GPT-2's order of merging when encoding, bytes that are not text, errors, the
// merges of a plain-Python reference (tests/data/bpe_merges.txt, from
// tests/data/generate_bpe_fixtures.py), and decode(encode(s)) == s for arbitrary bytes.
#include <attn/math/validate.hpp>
#include <attn/text/bpe.hpp>

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "bad_input.hpp"

#include <cstdint>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

using attn::text::BpeTokenizer;
using attn::text::Merge;
using attn::text::TokenId;
using attn_bad_input::ThrowsNaming;
using namespace std::string_literals;

std::vector<std::string> pieces_of(std::string_view text) {
  const std::vector<std::string_view> views = attn::text::pretokenize(text);
  return {views.begin(), views.end()};
}

TEST(Pretokenize, SplitsWordsNumbersAndPunctuationEachWithItsSpace) {
  EXPECT_EQ(pieces_of("Hello, world!"), (std::vector<std::string>{"Hello", ",", " world", "!"}));
  EXPECT_EQ(pieces_of("in 1611, 3.8 MB"),
            (std::vector<std::string>{"in", " 1611", ",", " 3", ".", "8", " MB"}));
  EXPECT_EQ(pieces_of("the miller's ...daughter"),
            (std::vector<std::string>{"the", " miller", "'", "s", " ...", "daughter"}));
  EXPECT_EQ(pieces_of("the LORD's"), (std::vector<std::string>{"the", " LORD", "'", "s"}))
      << "chapter 11's page cuts it in three";
  EXPECT_TRUE(pieces_of("").empty());
}

TEST(Pretokenize, AWhitespaceRunLeavesItsLastSpaceToTheNextWord) {
  EXPECT_EQ(pieces_of("a  b\n\nc"), (std::vector<std::string>{"a", " ", " b", "\n\n", "c"}));
  EXPECT_EQ(pieces_of("a\n b"), (std::vector<std::string>{"a", "\n", " b"}));
  EXPECT_EQ(pieces_of("a \tb"), (std::vector<std::string>{"a", " \t", "b"}));  // ends in a tab
  EXPECT_EQ(pieces_of("a  "), (std::vector<std::string>{"a", "  "}));          // nothing follows
  EXPECT_EQ(pieces_of(" "), (std::vector<std::string>{" "}));
}

TEST(Pretokenize, BytesFrom0x80AreLettersAndControlBytesAreOthers) {
  // "café" is c a f 0xC3 0xA9: one word. 0xFF is not UTF-8, and is a letter all the same.
  EXPECT_EQ(pieces_of("caf\xc3\xa9 \xff!"),
            (std::vector<std::string>{"caf\xc3\xa9", " \xff", "!"}));
  EXPECT_EQ(pieces_of("a\0\x01\x7f b"s), (std::vector<std::string>{"a", "\0\x01\x7f"s, " b"}));
  EXPECT_EQ(pieces_of(" \0"s), (std::vector<std::string>{" \0"s}));
}

TEST(Train, WorksWikipediasExampleByHand) {
  // "aaabdaaabac" is one piece (all letters). Its adjacent pairs: aa aa ab bd da aa aa ab ba ac.
  //   1. aa occurs 4 times: 256 = aa.     tokens: 256 a b d 256 a b a c
  //   2. (256, a) and (a, b) occur twice each; the tie goes to the smaller left id, a = 97:
  //      257 = ab.                        tokens: 256 257 d 256 257 a c
  //   3. (256, 257) occurs twice: 258 = aaab.
  //                                       tokens: 258 d 258 a c
  // Wikipedia's "Byte pair encoding" makes the same three merges (its Z, Y and X).
  const BpeTokenizer bpe = attn::text::train_bpe("aaabdaaabac", 259);
  EXPECT_EQ(bpe.merges(), (std::vector<Merge>{{'a', 'a'}, {'a', 'b'}, {256, 257}}));
  EXPECT_EQ(bpe.vocab_size(), 259u);
  EXPECT_EQ(bpe.token_bytes(258), "aaab");
  EXPECT_EQ(bpe.encode("aaabdaaabac"), (std::vector<TokenId>{258, 'd', 258, 'a', 'c'}));
  EXPECT_EQ(bpe.encode("abaa"), (std::vector<TokenId>{257, 256}));
}

TEST(Train, StopsWhenEveryPieceIsOneToken) {
  // Going on from the worked example, every pair occurs once and the smallest left id wins:
  // (a, c) = 259, (d, 258) = 260, (258, 260) = 261, (261, 259) = 262, the whole piece.
  const BpeTokenizer bpe = attn::text::train_bpe("aaabdaaabac", 1000);
  EXPECT_EQ(bpe.vocab_size(), 263u);
  EXPECT_EQ(bpe.merges().back(), (Merge{261, 259}));
  EXPECT_EQ(bpe.encode("aaabdaaabac"), (std::vector<TokenId>{262}));
  EXPECT_TRUE(attn::text::train_bpe("a\nb.c", 300).merges().empty());  // pieces of one byte
}

TEST(Train, TiesGoToTheSmallestLeftIdThenTheSmallestRightId) {
  // Pieces "ab", " cd", " ce": (a, b), (c, d), (c, e) once each, ( , c) twice.
  //   1. ( , c) = 256.  2. (a, b) = 257 (97 < 256).  3. (256, d) = 258, before (256, e) = 259.
  const BpeTokenizer bpe = attn::text::train_bpe("ab cd ce", 260);
  EXPECT_EQ(bpe.merges(), (std::vector<Merge>{{' ', 'c'}, {'a', 'b'}, {256, 'd'}, {256, 'e'}}));
}

TEST(Train, CountsEachPieceAsOftenAsItOccursAndNeverMergesAcrossPieces) {
  // " to" three times outweighs "ot" twice, and (t, " ") never counts: a space starts a piece.
  const BpeTokenizer bpe = attn::text::train_bpe("ot ot to to to", 258);
  EXPECT_EQ(bpe.merges(), (std::vector<Merge>{{' ', 't'}, {256, 'o'}}));
  EXPECT_EQ(bpe.encode("to to"), (std::vector<TokenId>{'t', 'o', 257}));
}

TEST(Train, AVocabularyOfTheBytesAloneHasNoMerges) {
  const BpeTokenizer bpe = attn::text::train_bpe("some text", 256);
  EXPECT_TRUE(bpe.merges().empty());
  EXPECT_EQ(bpe.encode("hi!"), (std::vector<TokenId>{'h', 'i', '!'}));
}

TEST(Encode, AppliesTheMergeOfLowestRankFirstNotLeftToRight) {
  // (b, c) ranks before (a, b): "abc" is a + bc, although "ab" comes first in the text.
  const BpeTokenizer bpe({{'b', 'c'}, {'a', 'b'}});
  EXPECT_EQ(bpe.encode("abc"), (std::vector<TokenId>{'a', 256}));
  EXPECT_EQ(bpe.encode("abab"), (std::vector<TokenId>{257, 257}));
  EXPECT_EQ(bpe.encode("aaa"), (std::vector<TokenId>{'a', 'a', 'a'}));
  EXPECT_TRUE(bpe.encode("").empty());
}

TEST(Encode, RoundTripsBytesThatAreNotText) {
  const BpeTokenizer bpe = attn::text::train_bpe("the cat, the hat\n\xff\xfe\0\0 the end"s, 300);
  for (const std::string& s : {"\xff\xfe\xc3 \xc3\xa9\x80"s, "\0\0\0 the\0end"s,
                               "\x01\x02\x1b[31m\x7f\r\n\t\v\f"s, "the \xe2\x82 cat"s, " "s, ""s}) {
    EXPECT_EQ(bpe.decode(bpe.encode(s)), s) << attn::text::printable(s);
  }
  std::string every_byte;
  for (int b = 0; b < 256; ++b)
    every_byte += static_cast<char>(b);
  EXPECT_EQ(bpe.decode(bpe.encode(every_byte)), every_byte);
}

TEST(Printable, WritesBytesAsPythonWritesThem) {
  EXPECT_EQ(attn::text::printable(" the"), " the");
  EXPECT_EQ(attn::text::printable("a\\b\t\n\r\"'"), "a\\\\b\\t\\n\\r\"'");
  EXPECT_EQ(attn::text::printable("\0\x1b\x7f\xc3\xa9"s), "\\x00\\x1b\\x7f\\xc3\\xa9");
}

TEST(BadInput, TrainingNamesAnEmptyTextAndAVocabularyBelowTheBytes) {
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>([] { attn::text::train_bpe("", 300); },
                                                   "the training text is empty"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>([] { attn::text::train_bpe("text", 255); },
                                                   "vocab_size = 255"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] { attn::text::train_bpe("text", std::size_t{1} << 32); }, "vocab_size = 4294967296"));
}

TEST(BadInput, DecodeNamesAnIdOutsideTheVocabulary) {
  const BpeTokenizer bpe({{'a', 'b'}});
  EXPECT_EQ(bpe.decode(std::vector<TokenId>{256, 'c'}), "abc");
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] {
        bpe.decode(std::vector<TokenId>{'a', 257});
      },
      "token 257 at position 1 is outside the vocabulary of 257 tokens"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { bpe.token_bytes(300); }, "token 300 is outside the vocabulary of 257 tokens"));
}

TEST(BadInput, MergesMustUseTokensAlreadyMadeAndNotRepeat) {
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] {
        BpeTokenizer({{'a', 'b'}, {257, 'c'}});
      },
      "merge 1 (257, 99) uses a token not yet made: it may use ids 0 to 256"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] {
        BpeTokenizer({{'a', 'b'}, {'a', 'b'}});
      },
      "merge 1 (97, 98) repeats merge 0"));
}

// tests/data/bpe_merges.txt, read back.
struct Reference {
  std::size_t vocab_size = 0;
  std::vector<Merge> merges;
  std::vector<std::string> printed;  // each merge's bytes, as printable() writes them
  std::string text;
  std::vector<std::string> pieces;
  std::vector<TokenId> ids;
};

std::string from_hex(const std::string& hex) {
  std::string bytes;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    bytes += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return bytes;
}

Reference read_reference() {
  std::ifstream file(std::string(ATTN_TEST_DATA_DIR) + "/bpe_merges.txt");
  Reference r;
  std::string line;
  while (std::getline(file, line)) {
    std::istringstream in(line);
    std::string key, word;
    in >> key;
    if (key == "vocab_size") {
      in >> r.vocab_size;
    } else if (key == "merge") {
      TokenId id = 0;
      Merge m;
      in >> id >> m.left >> m.right;
      EXPECT_EQ(id, attn::text::kByteTokens + r.merges.size());
      r.merges.push_back(m);
      const std::size_t open = line.find('"'), close = line.rfind('"');
      r.printed.push_back(line.substr(open + 1, close - open - 1));
    } else if (key == "text") {
      in >> word;
      r.text = from_hex(word);
    } else if (key == "pieces") {
      while (in >> word)
        r.pieces.push_back(from_hex(word));
    } else if (key == "ids") {
      for (TokenId id = 0; in >> id;)
        r.ids.push_back(id);
    }
  }
  return r;
}

TEST(Reference, TrainingOnTheSampleLearnsPythonsMergesInItsOrder) {
  const Reference reference = read_reference();
  ASSERT_EQ(reference.vocab_size, 512u);
  ASSERT_EQ(reference.merges.size(), 256u);
  std::ifstream file(std::string(ATTN_TEST_DATA_DIR) + "/bpe_sample.txt", std::ios::binary);
  const std::string sample{std::istreambuf_iterator<char>(file), {}};
  ASSERT_GT(sample.size(), 3000u);

  const BpeTokenizer bpe = attn::text::train_bpe(sample, reference.vocab_size);
  ASSERT_EQ(bpe.vocab_size(), reference.vocab_size);
  for (std::size_t k = 0; k < reference.merges.size(); ++k) {
    ASSERT_EQ(bpe.merges()[k], reference.merges[k]) << "merge " << k;
    const auto id = static_cast<TokenId>(attn::text::kByteTokens + k);
    EXPECT_EQ(attn::text::printable(bpe.token_bytes(id)), reference.printed[k]) << "token " << id;
  }
  EXPECT_EQ(pieces_of(reference.text), reference.pieces);
  EXPECT_EQ(bpe.encode(reference.text), reference.ids);
  EXPECT_EQ(bpe.decode(reference.ids), reference.text);
}

// Bytes for a property: mostly a few letters and spaces, so that merges happen, and any byte.
rc::Gen<std::string> some_bytes() {
  const auto byte = rc::gen::weightedOneOf<char>({
      {4, rc::gen::element('a', 'b', 'c', ' ')},
      {1, rc::gen::element('\n', '.', '1', '\0', '\xff', '\xc3', '\xa9')},
      {1, rc::gen::arbitrary<char>()},
  });
  return rc::gen::container<std::string>(byte);
}

}  // namespace

RC_GTEST_PROP(BpeProperties, DecodeOfEncodeIsTheText, ()) {
  const std::string training = *rc::gen::nonEmpty(some_bytes());
  const auto vocab_size = *rc::gen::inRange<std::size_t>(256, 320);
  const BpeTokenizer bpe = attn::text::train_bpe(training, vocab_size);
  RC_ASSERT(bpe.vocab_size() <= vocab_size);
  RC_ASSERT(bpe.decode(bpe.encode(training)) == training);
  const std::string s = *some_bytes();
  const std::vector<TokenId> ids = bpe.encode(s);
  RC_ASSERT(ids.size() <= s.size());
  RC_ASSERT(bpe.decode(ids) == s);
}

RC_GTEST_PROP(BpeProperties, PiecesAreTheTextAndEncodeEachOnItsOwn, ()) {
  const BpeTokenizer bpe = attn::text::train_bpe(*rc::gen::nonEmpty(some_bytes()), 300);
  const std::string s = *some_bytes();
  std::string joined;
  std::vector<TokenId> piece_by_piece;
  for (const std::string_view piece : attn::text::pretokenize(s)) {
    RC_ASSERT(!piece.empty());
    joined += piece;
    const std::vector<TokenId> ids = bpe.encode(piece);
    piece_by_piece.insert(piece_by_piece.end(), ids.begin(), ids.end());
  }
  RC_ASSERT(joined == s);
  RC_ASSERT(bpe.encode(s) == piece_by_piece);
}

RC_GTEST_PROP(BpeProperties, EachMergedTokenIsItsTwoTokensEndToEnd, ()) {
  const BpeTokenizer bpe = attn::text::train_bpe(*rc::gen::nonEmpty(some_bytes()), 320);
  const BpeTokenizer again(bpe.merges());  // a tokenizer is its merges
  for (std::size_t k = 0; k < bpe.merges().size(); ++k) {
    const Merge m = bpe.merges()[k];
    const auto id = static_cast<TokenId>(attn::text::kByteTokens + k);
    RC_ASSERT(bpe.token_bytes(id) == bpe.token_bytes(m.left) + bpe.token_bytes(m.right));
    RC_ASSERT(again.token_bytes(id) == bpe.token_bytes(id));
  }
}
