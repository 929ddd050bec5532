#include <attn/book/grid_text.hpp>
#include <attn/math/validate.hpp>

#include <gtest/gtest.h>

namespace {

TEST(GridTable, LaysOutLikeTheArticlesFStrings) {
  const std::vector<std::string> tokens = {"the", "cat"};
  const arma::mat w = {{0.03, 0.97}, {0.555, 0.444}};
  EXPECT_EQ(attn::book::grid_table(tokens, tokens, w),
            "                 the     cat\n"
            "       the      0.03    0.97\n"
            "       cat      0.56    0.44\n");
}

TEST(GridTable, OtherPrecisionsAndNegatives) {
  EXPECT_EQ(attn::book::grid_table({"q"}, {"k1", "k2"}, arma::mat{{-1.25, 3.0}}, 1),
            "                  k1      k2\n"
            "         q      -1.2     3.0\n");
}

TEST(GridTable, PadsLikePythonByCodePoints) {
  // f"{'café':>8}" is four spaces then café: Python counts code points, not bytes.
  EXPECT_EQ(attn::book::grid_table({"café"}, {"naïve"}, arma::mat(1, 1).fill(0.5)),
            "               naïve\n"
            "      café      0.50\n");
}

TEST(GridTable, LongLabelsAreNotCut) {
  EXPECT_EQ(attn::book::grid_table({"supercalifragilistic"}, {"supercalifragilistic"},
                                   arma::mat(1, 1).fill(1.0)),
            "            supercalifragilistic\n"
            "supercalifragilistic      1.00\n");
}

TEST(GridTable, LabelsMustMatchTheGrid) {
  EXPECT_THROW(attn::book::grid_table({"a", "b"}, {"a"}, arma::mat(2, 2, arma::fill::zeros)),
               attn::math::ShapeError);
}

TEST(SplitWords, LikePythonsStrSplit) {
  using V = std::vector<std::string>;
  EXPECT_EQ(attn::book::split_words("the cat  drank\tthe\nmilk "),
            (V{"the", "cat", "drank", "the", "milk"}));
  EXPECT_EQ(attn::book::split_words("   "), V{});
  EXPECT_EQ(attn::book::split_words(""), V{});
  // "a\u00a0b\u3000c".split() == ["a", "b", "c"]; "\x1f" is whitespace to Python too.
  EXPECT_EQ(attn::book::split_words("a\u00a0b\u3000c\x1f"
                                    "d"),
            (V{"a", "b", "c", "d"}));
  EXPECT_EQ(attn::book::split_words("café naïve"), (V{"café", "naïve"}));
}

// Bytes that are not UTF-8 stay in their word and never hide the byte after them. The first
// case is what the fuzzer found (tests/fuzz/corpus/sentence_splitter/): a sequence cut short by
// a newline had read the newline as part of one letter, so a word held a line break.
TEST(SplitWords, MalformedUtf8NeverSwallowsABreak) {
  using V = std::vector<std::string>;
  EXPECT_EQ(attn::book::split_words("\xf6\xac\n\xdd"), (V{"\xf6\xac", "\xdd"}));
  EXPECT_EQ(attn::book::split_words("a\xc2 b"), (V{"a\xc2", "b"}));  // cut short by a space
  EXPECT_EQ(attn::book::split_words("a\x85"
                                    "b\xa0"
                                    "c"),
            V{"a\x85"
              "b\xa0"
              "c"});  // stray bytes, not U+0085
  EXPECT_EQ(attn::book::split_words("a\xe0\x80\xa0"
                                    "b"),
            V{"a\xe0\x80\xa0"
              "b"});  // overlong U+0020
  EXPECT_EQ(attn::book::split_words("a\xed\xa0\x80 b"), (V{"a\xed\xa0\x80", "b"}));  // a surrogate
  EXPECT_EQ(attn::book::split_words("a\xc2\x85"
                                    "b"),
            (V{"a", "b"}));  // U+0085, well formed: a space
}

TEST(Fixed, NeverPrintsMinusZero) {
  EXPECT_EQ(attn::book::fixed(-0.001), "0.00");
  EXPECT_EQ(attn::book::fixed(-0.0), "0.00");
  EXPECT_EQ(attn::book::fixed(-0.005, 3), "-0.005");
  EXPECT_EQ(attn::book::fixed(-1.5, 1), "-1.5");
}

TEST(VectorText, CommaSeparatedWithFixedDecimals) {
  EXPECT_EQ(attn::book::vector_text(arma::rowvec{0.35, 0.22}), "[0.35, 0.22]");
  EXPECT_EQ(attn::book::vector_text(arma::vec{1.5, -0.5}, 1), "[1.5, -0.5]");
  EXPECT_EQ(attn::book::vector_text(arma::rowvec()), "[]");
}

TEST(GridFromTable, ReadsBackWhatGridTableWrote) {
  const std::vector<std::string> tokens = {"the", "cat", "the"};
  const arma::mat grid = {{0.25, 0.5, 0.25}, {0.1, 0.7, 0.2}, {1.0, 0.0, 0.0}};
  EXPECT_TRUE(
      arma::approx_equal(attn::book::grid_from_table(attn::book::grid_table(tokens, tokens, grid)),
                         grid, "absdiff", 0.0));
  EXPECT_THROW(attn::book::grid_from_table("  a  b\n  a  0.5\n"), attn::math::InputError);
}

TEST(CellLabels, KeepRepeatedTokensApart) {
  EXPECT_EQ(attn::book::cell_labels({"the", "cat", "the"}, 2),
            (std::vector<std::string>{"2,0 the→the", "2,1 the→cat", "2,2 the→the"}));
}

TEST(TokenIndex, UnknownTokenListsTheValidOnes) {
  const std::vector<std::string> tokens = {"why", "did", "my", "Nimbus", "export", "fail"};
  EXPECT_EQ(attn::book::token_index(tokens, "Nimbus"), 3u);
  try {
    attn::book::token_index(tokens, "bank");
    FAIL() << "unknown token accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "unknown token \"bank\"; the tokens are: why, did, my, Nimbus, export, fail");
  }
}

}  // namespace
