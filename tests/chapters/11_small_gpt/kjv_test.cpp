// Chapter 11's corpus (chapters/11_small_gpt/kjv.hpp): unlzw() decodes the streams of Unix
// compress that tests/data/generate_lzw_fixtures.py wrote (and gzip -dc decoded) byte for byte,
// refuses a code past its dictionary, and reads Debian's bible.data into the 31,102 verses the
// chapter splits into its training and held-out parts.
#include <11_small_gpt/kjv.hpp>
#include <attn/math/validate.hpp>

#include "bad_input.hpp"
#include "tiny_gpt.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace ch11 = attn::ch11;
using attn_bad_input::ThrowsNaming;
using gpt_test::read_file;
using gpt_test::TempDir;
using gpt_test::write_file;

using Bytes = std::vector<unsigned char>;

Bytes from_hex(const std::string& hex) {
  Bytes out;
  if (hex == "-")  // the fixture's empty field
    return out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<unsigned char>(std::stoul(hex.substr(i, 2), nullptr, 16)));
  return out;
}

std::string as_text(const Bytes& bytes) {
  return {bytes.begin(), bytes.end()};
}

struct LzwCase {
  std::string name;
  std::vector<unsigned> widths;
  Bytes text;
  Bytes stream;
};

// tests/data/lzw_streams.txt: per case `case NAME`, `widths ...`, `text HEX`, `stream HEX`.
std::vector<LzwCase> lzw_cases() {
  std::ifstream in(std::string(ATTN_TEST_DATA_DIR) + "/lzw_streams.txt");
  EXPECT_TRUE(in) << "cannot read tests/data/lzw_streams.txt";
  std::vector<LzwCase> cases;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("case ", 0) == 0) {
      cases.push_back({line.substr(5), {}, {}, {}});
    } else if (line.rfind("widths ", 0) == 0 && !cases.empty()) {
      std::istringstream words(line.substr(7));
      for (unsigned w; words >> w;)
        cases.back().widths.push_back(w);
    } else if (line.rfind("text ", 0) == 0 && !cases.empty()) {
      cases.back().text = from_hex(line.substr(5));
    } else if (line.rfind("stream ", 0) == 0 && !cases.empty()) {
      cases.back().stream = from_hex(line.substr(7));
    }
  }
  return cases;
}

// Codes packed as compress writes them, for streams no encoder would write (a code past the
// dictionary) and one too long for the fixture (a full dictionary): LSB first, each at the
// width the decoder reads it at (9 bits, one more whenever its next free entry no longer fits,
// up to 16), the group of eight codes padded to its n_bits bytes at each width change and after
// each clear. Checked against the Python encoder's `every_byte` stream below.
Bytes pack_codes(const std::vector<unsigned>& codes) {
  Bytes out;
  std::size_t bit = 0, group_start = 0;
  unsigned width = 9;
  unsigned next_free = 257;
  bool adds = false;  // the first code of a stream, and the first after a clear, add no entry
  const auto pad_group = [&] {
    const std::size_t group_bits = 8 * width;
    bit = group_start + (bit - group_start + group_bits - 1) / group_bits * group_bits;
    group_start = bit;
    out.resize(bit / 8, 0);
  };
  for (const unsigned code : codes) {
    if (width < 16 && next_free > (1u << width) - 1) {
      pad_group();
      ++width;
    }
    for (unsigned k = 0; k < width; ++k, ++bit) {
      if (bit / 8 >= out.size())
        out.push_back(0);
      out[bit / 8] |= static_cast<unsigned char>(((code >> k) & 1u) << (bit % 8));
    }
    if (code == 256) {
      pad_group();
      width = 9;
      next_free = 257;
      adds = false;
      continue;
    }
    if (adds && next_free < (1u << 16))
      ++next_free;
    adds = true;
  }
  return out;
}

std::string unlzw(const Bytes& stream) {
  return ch11::unlzw(stream);
}

constexpr std::uint64_t fnv1a(const std::string& bytes) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (const char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

// Debian's bible.data, decoded once for every test that reads it.
const std::string& bible() {
  static const std::string text = ch11::read_bible(ch11::kBiblePath);
  return text;
}

const std::vector<ch11::Verse>& verses() {
  static const std::vector<ch11::Verse> all = ch11::parse_verses(bible());
  return all;
}

TEST(Unlzw, DecodesEveryStreamOfThePythonEncoder) {
  const std::vector<LzwCase> cases = lzw_cases();
  ASSERT_EQ(cases.size(), 10u);
  std::set<unsigned> widths;
  for (const LzwCase& c : cases) {
    EXPECT_EQ(unlzw(c.stream), as_text(c.text)) << c.name;
    widths.insert(c.widths.begin(), c.widths.end());
  }
  EXPECT_EQ(widths, (std::set<unsigned>{9, 10, 11, 12})) << "the fixture crosses these widths";
}

TEST(Unlzw, DecodesTheCasesTheFixtureIsFor) {
  std::map<std::string, LzwCase> by_name;
  for (LzwCase& c : lzw_cases())
    by_name[c.name] = c;
  EXPECT_EQ(unlzw(by_name.at("empty").stream), "");
  EXPECT_EQ(unlzw(by_name.at("one_byte").stream), "A");
  EXPECT_EQ(unlzw(by_name.at("tobeornot").stream), "TOBEORNOTTOBEORTOBEORNOT");
  EXPECT_EQ(unlzw(by_name.at("kwkwk_run").stream), std::string(40, 'a'));
  EXPECT_EQ(unlzw(by_name.at("kwkwk_pair").stream), "abababababababab");
  EXPECT_EQ(by_name.at("genesis_9_10_11").widths, (std::vector<unsigned>{9, 10, 11}));
  std::string cleared = "abcabcabcabc";
  cleared.append(7, 'a');
  cleared.append("abcabcabc");
  EXPECT_EQ(unlzw(by_name.at("clear_at_9_bits").stream), cleared);
  EXPECT_EQ(by_name.at("clear_at_10_and_11_bits").widths, (std::vector<unsigned>{9, 10, 11}));
}

TEST(Unlzw, TestPackerWritesWhatThePythonEncoderWrites) {
  // `every_byte` repeats no pair of bytes, so each of its 512 codes is one byte.
  for (const LzwCase& c : lzw_cases()) {
    if (c.name == "every_byte") {
      EXPECT_EQ(pack_codes(std::vector<unsigned>(c.text.begin(), c.text.end())), c.stream);
    }
  }
}

TEST(Unlzw, KeepsAFullDictionaryAndClearsIt) {
  // 65,279 one-byte codes fill the dictionary (entries 257 ... 65535), the codes reaching 16
  // bits; entry k is byte k − 257 followed by byte k − 256. Then codes read it whole, add
  // nothing, and a clear starts again at 9 bits, as compress clears a full dictionary.
  std::vector<unsigned> codes;
  std::string text;
  std::uint64_t state = 11;
  for (unsigned j = 0; j < 65279 + 20; ++j) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    codes.push_back(static_cast<unsigned>(state >> 56));
    text.push_back(static_cast<char>(codes.back()));
  }
  const std::string bytes = text;
  for (const unsigned entry : {65535u, 257u, 40000u, 65535u}) {
    codes.push_back(entry);
    text += bytes.substr(entry - 257, 2);
  }
  // After the clear: 257 = "xy", 258 = "yx", 259 = "xyy", and 260, not yet made, is the
  // KwKwK case: "yx" followed by its own first byte.
  codes.insert(codes.end(), {256, 'x', 'y', 257, 258, 260});
  text += "xyxyyxyxy";
  EXPECT_EQ(unlzw(pack_codes(codes)), text);
}

TEST(Unlzw, RefusesACodePastTheDictionary) {
  using attn::math::InputError;
  // 'A' leaves 257 as the next free entry: 258 is past it; 257 is the KwKwK case ("AA").
  EXPECT_TRUE(ThrowsNaming<InputError>(
      [&] {
        unlzw(pack_codes({'A', 258}));
      },
      "code 258 at bit 9"));
  EXPECT_EQ(unlzw(pack_codes({'A', 257})), "AAA");
  // The first code has no string before it to repeat.
  EXPECT_TRUE(ThrowsNaming<InputError>([&] { unlzw(pack_codes({257})); }, "code 257 at bit 0"));
  EXPECT_TRUE(ThrowsNaming<InputError>(
      [&] {
        unlzw(pack_codes({'A', 'B', 256, 257}));
      },
      "code 257"));
  EXPECT_TRUE(ThrowsNaming<InputError>(
      [&] {
        unlzw(pack_codes({'A', 'B', 'C', 511}));
      },
      "past the dictionary"));
  // A stream cut short of a whole code ends before it: nothing is made up.
  EXPECT_EQ(unlzw(Bytes{0x41}), "");
}

TEST(ReadBible, DecodesDebiansFile) {
  const std::string& text = bible();
  EXPECT_EQ(text.size(), 4'404'475u);
  // gzip -dc, window by window (tests/data/generate_lzw_fixtures.py --bible), gives these bytes.
  EXPECT_EQ(fnv1a(text), 0x8d9b385cae8f145cULL);
  const std::string head =
      "Holy Bible, Authorized (King James) Version.  Textfile 930105.\n"
      "Ge1:1 In the beginning God created the heaven and the earth.\n"
      "Ge1:2 And the earth was without form, and void;";
  EXPECT_EQ(text.substr(0, head.size()), head);
  const std::string tail = "Rev22:21 The grace of our Lord Jesus Christ be with you all. Amen.\n";
  ASSERT_GE(text.size(), tail.size());
  EXPECT_EQ(text.substr(text.size() - tail.size()), tail);
}

TEST(ReadBible, NamesThePackageWhenTheFileIsMissing) {
  TempDir dir;
  const std::string missing = dir.file("bible.data");
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>([&] { ch11::read_bible(missing); },
                                                   "cannot read " + missing));
  EXPECT_TRUE(
      ThrowsNaming<attn::math::InputError>([&] { ch11::read_bible(missing); }, "bible-kjv-text"));
}

TEST(ReadBible, RefusesAFileThatIsNotBibleData) {
  TempDir dir;
  const std::string path = dir.file("not_bible.data");
  write_file(path,
             "In the beginning was the word, but not in compress's format.\n"
             "Another line, so that the file is longer than bible.data's header of 92 "
             "bytes, with a window table.\n");
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>([&] { ch11::read_bible(path); },
                                                   path + " does not start as bible-kjv-text's"));
  write_file(path, "");
  EXPECT_TRUE(
      ThrowsNaming<attn::math::InputError>([&] { ch11::read_bible(path); }, "does not start"));

  const std::string real = read_file(ch11::kBiblePath);
  ASSERT_GT(real.size(), 100'000u);
  std::string windows = real;
  windows[91] = 67;  // the window count, big-endian at byte 88: 67, not 68
  write_file(path, windows);
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>([&] { ch11::read_bible(path); },
                                                   "67 windows, where bible-kjv-text has 68"));
  write_file(path, real.substr(0, 100'000));  // the window table points past the end
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>([&] { ch11::read_bible(path); }, "of 100000"));
}

TEST(ParseVerses, ReadsEveryVerseOfTheBible) {
  const std::vector<ch11::Verse>& all = verses();
  ASSERT_EQ(all.size(), 31'102u);
  EXPECT_EQ(all.front().book, "Ge");
  EXPECT_EQ(all.front().chapter, 1);
  EXPECT_EQ(all.front().verse, 1);
  EXPECT_EQ(all.front().text, "In the beginning God created the heaven and the earth.");
  EXPECT_EQ(all.back().book, "Rev");
  EXPECT_EQ(all.back().chapter, 22);
  EXPECT_EQ(all.back().verse, 21);
  EXPECT_EQ(all.back().text, "The grace of our Lord Jesus Christ be with you all. Amen.");
  std::set<std::string> books;
  std::size_t longest_psalm = 0;
  for (const ch11::Verse& v : all) {
    books.insert(v.book);
    if (v.book == "Psa")
      longest_psalm = std::max<std::size_t>(longest_psalm, static_cast<std::size_t>(v.verse));
  }
  EXPECT_EQ(books.size(), 66u);
  EXPECT_EQ(longest_psalm, 176u);  // Psalm 119
  // Every line of the text but the title is a verse.
  const auto lines = static_cast<std::size_t>(std::count(bible().begin(), bible().end(), '\n'));
  EXPECT_EQ(lines, all.size() + 1);
}

TEST(ParseVerses, SplitsALabelIntoBookChapterAndVerse) {
  const std::vector<ch11::Verse> v = ch11::parse_verses(
      "A title line\n1Sam3:10 And the LORD came, and stood\nPs119:176 I have gone astray\n"
      "\nnot a verse: 3:4\nRev22:21 The grace");  // the last line has no line end
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].book, "1Sam");
  EXPECT_EQ(v[0].chapter, 3);
  EXPECT_EQ(v[0].verse, 10);
  EXPECT_EQ(v[0].text, "And the LORD came, and stood");
  EXPECT_EQ(v[1].book, "Ps");
  EXPECT_EQ(v[1].chapter, 119);
  EXPECT_EQ(v[1].verse, 176);
  EXPECT_EQ(v[2].book, "Rev");
  EXPECT_EQ(v[2].text, "The grace");
  EXPECT_TRUE(ch11::parse_verses("").empty());
}

TEST(SplitCorpus, TestsEveryTenthChapterAndValidatesTheFifths) {
  const ch11::Corpus corpus = ch11::split_corpus(verses());
  EXPECT_EQ(corpus.training.size(), 3'429'999u);
  EXPECT_EQ(corpus.training_lines, 25'720u);
  EXPECT_EQ(corpus.validation.size(), 382'091u);
  EXPECT_EQ(corpus.validation_lines, 2'964u);
  EXPECT_EQ(corpus.test.size(), 325'760u);
  EXPECT_EQ(corpus.test_lines, 2'418u);
  // Rebuilt from the verses: test when the chapter is a multiple of 10, validation when it is
  // 5 more than one.
  std::string training, validation, test;
  for (const ch11::Verse& v : verses())
    (v.chapter % 10 == 0 ? test : v.chapter % 10 == 5 ? validation : training) += v.text + "\n";
  EXPECT_EQ(corpus.training, training);
  EXPECT_EQ(corpus.validation, validation);
  EXPECT_EQ(corpus.test, test);
  EXPECT_EQ(std::count(corpus.training.begin(), corpus.training.end(), '\n'), 25'720);
  EXPECT_EQ(std::count(corpus.validation.begin(), corpus.validation.end(), '\n'), 2'964);
  EXPECT_EQ(std::count(corpus.test.begin(), corpus.test.end(), '\n'), 2'418);
}

TEST(SplitCorpus, LongerBooksAreOnEverySide) {
  // A book of fewer than 10 chapters (Ruth, Jonah, the shorter epistles, ...) has no chapter
  // 10 to test; one of fewer than 5 has no chapter 5 to validate either, and only trains.
  std::map<std::string, int> chapters;
  std::set<std::string> tested, validated;
  for (const ch11::Verse& v : verses()) {
    chapters[v.book] = std::max(chapters[v.book], v.chapter);
    if (v.chapter % 10 == 0)
      tested.insert(v.book);
    if (v.chapter % 10 == 5)
      validated.insert(v.book);
  }
  std::set<std::string> ten_or_more, five_or_more;
  for (const auto& [book, last] : chapters) {
    if (last >= 10)
      ten_or_more.insert(book);
    if (last >= 5)
      five_or_more.insert(book);
  }
  EXPECT_EQ(tested, ten_or_more);
  EXPECT_EQ(validated, five_or_more);
  EXPECT_EQ(chapters.size(), 66u);
  EXPECT_EQ(ten_or_more.size(), 36u);
  EXPECT_EQ(five_or_more.size(), 47u);  // and 19 books train only
  EXPECT_EQ(chapters.at("Psa"), 150);
  EXPECT_EQ(chapters.at("1Sm"), 31);  // the file's short names: 1Sm, not 1Sam
}

TEST(SplitCorpus, KeepsTheOrderAndDropsTheLabels) {
  const std::vector<ch11::Verse> v = {{"Ge", 9, 29, "nine"},    {"Ge", 10, 1, "ten"},
                                      {"Ge", 11, 1, "eleven"},  {"Ge", 15, 2, "fifteen"},
                                      {"Ps", 150, 6, "praise"}, {"Ps", 1, 1, "blessed"},
                                      {"Jude", 1, 25, ""}};
  const ch11::Corpus c = ch11::split_corpus(v);
  EXPECT_EQ(c.training, "nine\neleven\nblessed\n\n");
  EXPECT_EQ(c.validation, "fifteen\n");
  EXPECT_EQ(c.test, "ten\npraise\n");
  EXPECT_EQ(c.training_lines, 4u);
  EXPECT_EQ(c.validation_lines, 1u);
  EXPECT_EQ(c.test_lines, 2u);
  const ch11::Corpus none = ch11::split_corpus({});
  EXPECT_TRUE(none.training.empty() && none.validation.empty() && none.test.empty());
}

}  // namespace
