// Chapter 11 on a reader's text (chapters/11_small_gpt/text_file.hpp): the file's problems named
// before anything is read, and the split by position into eight tenths, one and one, at line
// starts where a line starts near enough; the line such a run adds to its checkpoint's
// fingerprint, and where its checkpoint is kept.
#include <11_small_gpt/text_file.hpp>
#include <attn/math/validate.hpp>

#include "bad_input.hpp"
#include "tiny_gpt.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace {

namespace ch11 = attn::ch11;
using attn_bad_input::ThrowsNaming;
using gpt_test::TempDir;
using gpt_test::write_file;

// Ten lines of ten bytes each: "line 0...\n" to "line 9...\n".
std::string ten_lines() {
  std::string text;
  for (int k = 0; k < 10; ++k)
    text += "line " + std::to_string(k) + "...\n";
  return text;
}

TEST(SplitByPosition, CutsAtTheEighthAndNinthTenthsOnLineStarts) {
  const ch11::Corpus c = ch11::split_by_position(ten_lines());
  EXPECT_EQ(c.training, ten_lines().substr(0, 80));
  EXPECT_EQ(c.validation, "line 8...\n");
  EXPECT_EQ(c.test, "line 9...\n");
  EXPECT_EQ(c.training_lines, 8u);
  EXPECT_EQ(c.validation_lines, 1u);
  EXPECT_EQ(c.test_lines, 1u);
}

TEST(SplitByPosition, MovesACutForwardToTheNextLineStart) {
  // 100 bytes; the cuts at bytes 80 and 90 fall inside lines and move to their ends.
  const std::string text = std::string(78, 'a') + "\n" + std::string(5, 'b') + "\n" +
                           std::string(9, 'c') + "\n" + std::string(5, 'd');
  ASSERT_EQ(text.size(), 100u);
  const ch11::Corpus c = ch11::split_by_position(text);
  EXPECT_EQ(c.training, std::string(78, 'a') + "\n" + std::string(5, 'b') + "\n");
  EXPECT_EQ(c.validation, std::string(9, 'c') + "\n");
  EXPECT_EQ(c.test, std::string(5, 'd'));
  EXPECT_EQ(c.test_lines, 1u) << "a last line without its end counts";
  EXPECT_EQ(c.training + c.validation + c.test, text);
}

TEST(SplitByPosition, CutsInsideALineThatRunsPastTheNextTenth) {
  // One line of 100 bytes: no line starts near either cut, so they fall at bytes 80 and 90.
  const std::string text(100, 'x');
  const ch11::Corpus c = ch11::split_by_position(text);
  EXPECT_EQ(c.training.size(), 80u);
  EXPECT_EQ(c.validation.size(), 10u);
  EXPECT_EQ(c.test.size(), 10u);
  const ch11::Corpus none = ch11::split_by_position("");
  EXPECT_TRUE(none.training.empty() && none.validation.empty() && none.test.empty());
}

TEST(CountLines, CountsLineEndsAndALastLineWithoutOne) {
  EXPECT_EQ(ch11::count_lines(""), 0u);
  EXPECT_EQ(ch11::count_lines("a"), 1u);
  EXPECT_EQ(ch11::count_lines("a\n"), 1u);
  EXPECT_EQ(ch11::count_lines("a\n\nb"), 3u);
}

// 129 tokens in a tenth of the text, at 550 bytes for 185 tokens: 129 · 550/185 · 10 = 3835.1...
TEST(TextNeeded, ScalesThePartsRateToTheWholeText) {
  const ch11::TextNeeded needed = ch11::text_needed(129, 550, 185, 1);
  EXPECT_DOUBLE_EQ(needed.bytes_per_token, 550.0 / 185.0);
  EXPECT_EQ(needed.text_bytes, 3836.0);
  EXPECT_EQ(ch11::text_needed(129, 0, 0, 8).text_bytes, 162.0);  // 129 · 1 · 10/8 = 161.25
}

TEST(FirstLine, IsTheFirstLineThatIsNotEmpty) {
  EXPECT_EQ(ch11::first_line("\n\nsecond\nthird\n"), "second");
  EXPECT_EQ(ch11::first_line("no line end"), "no line end");
  EXPECT_EQ(ch11::first_line("\n\n"), "");
  EXPECT_EQ(ch11::first_line(""), "");
}

TEST(TextFile, NamesWhatKeepsAFileFromBeingAText) {
  TempDir dir;
  const std::string missing = dir.file("missing.txt");
  EXPECT_EQ(ch11::text_file_problem(""), "no file named: give the text's path");
  EXPECT_EQ(ch11::text_file_problem(missing), "there is no file " + missing);
  EXPECT_EQ(ch11::text_file_problem(dir.file("")), dir.file("") + " is a folder, not a text file");
  const std::string empty = dir.file("empty.txt");
  write_file(empty, "");
  EXPECT_EQ(ch11::text_file_problem(empty), empty + " is empty: there is nothing to learn from");
  EXPECT_TRUE(
      ThrowsNaming<attn::math::InputError>([&] { ch11::read_text_file(empty); }, "is empty"));
  const std::string text = dir.file("notes.txt");
  write_file(text, std::string("any\0bytes\xff\n", 11));
  EXPECT_EQ(ch11::text_file_problem(text), "");
  EXPECT_EQ(ch11::read_text_file(text), std::string("any\0bytes\xff\n", 11));
}

// The fingerprint's line names the whole text by its size and hash: an edit, even of one byte
// that keeps the size, makes another run.
TEST(TextFingerprint, NamesTheWholeTextBySizeAndHash) {
  // The hash as computed apart (in Python, from FNV-1a's 64-bit offset basis and prime).
  EXPECT_EQ(ch11::text_fingerprint(ten_lines()),
            "text 100 bytes, FNV-1a aa065a5a35237f8a, split by position\n");
  std::string edited = ten_lines();
  edited[0] = 'L';
  EXPECT_NE(ch11::text_fingerprint(edited), ch11::text_fingerprint(ten_lines()));
}

// A reader's text's checkpoint sits beside the Bible's, named after the file, with every byte of
// the name that a shell or a file system might read otherwise turned into '_'.
TEST(TextCheckpoint, SitsBesideTheBiblesNamedAfterTheFile) {
  const std::filesystem::path bible = ATTN_DEFAULT_CHECKPOINT;
  EXPECT_EQ(ch11::text_checkpoint("/some/folder/my notes;v2.txt"),
            (bible.parent_path() / "ch11_small_gpt.text-my_notes_v2.txt.checkpoint").string());
  EXPECT_EQ(ch11::text_checkpoint("GPL-3"),
            (bible.parent_path() / "ch11_small_gpt.text-GPL-3.checkpoint").string());
}

}  // namespace
