// Chapter 11's compressors (chapters/11_small_gpt/compressors.hpp), run as programs every Debian
// system has: cat, cp, head, printf and sh stand in for xz and zpaq, so that the sizes are known.
// Arguments reach the program as they are, with no shell; input goes through a pipe or a file;
// a program that fails, is stopped by a signal or stops reading is reported, and a missing one
// skipped, without ending the process.
#include <11_small_gpt/compressors.hpp>

#include "bad_input.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace {

namespace ch11 = attn::ch11;
using attn_bad_input::ThrowsNaming;
using ch11::CompressorError;

// A program found on PATH, as the chapter finds xz.
std::string program(const std::string& name) {
  const std::string path = ch11::find_program({name});
  EXPECT_FALSE(path.empty()) << name << " is not on PATH";
  return path;
}

// Bytes enough to fill a pipe's buffer many times over.
std::string megabyte() {
  std::string bytes;
  for (int k = 0; bytes.size() < (1u << 20); ++k)
    bytes += "line " + std::to_string(k) + "\n";
  return bytes;
}

TEST(FindProgram, TakesTheFirstNameFoundOnPath) {
  EXPECT_EQ(ch11::find_program({"attn-no-such-program"}), "");
  const std::string sh = ch11::find_program({"attn-no-such-program", "sh"});
  EXPECT_EQ(std::filesystem::path(sh).filename(), "sh");
  EXPECT_EQ(ch11::find_program({"/bin/sh"}), "/bin/sh") << "a name with a / is a path";
  EXPECT_EQ(ch11::find_program({"/attn/no/such/program"}), "");
}

TEST(CompressedSize, CountsWhatTheProgramWritesFromAPipe) {
  const ch11::Compressor cat{.label = "cat", .programs = {"cat"}};
  const std::string bytes = megabyte();
  EXPECT_EQ(ch11::compressed_size(cat, program("cat"), bytes), bytes.size());
  EXPECT_EQ(ch11::compressed_size(cat, program("cat"), ""), 0u);
}

TEST(CompressedSize, GivesAFileForInputAndMeasuresAFileForOutput) {
  const std::string bytes = megabyte();
  const ch11::Compressor from_file{.label = "cat", .arguments = {ch11::kInputFile}};
  EXPECT_EQ(ch11::compressed_size(from_file, program("cat"), bytes), bytes.size());
  const ch11::Compressor to_file{
      .label = "cp", .arguments = {ch11::kInputFile, ch11::kOutputFile}, .output_name = "copy"};
  EXPECT_EQ(ch11::compressed_size(to_file, program("cp"), bytes), bytes.size());
}

TEST(CompressedSize, PassesArgumentsAsTheyAreWithoutAShell) {
  const std::string literal = "a; echo $(id) `id` > x | y && z * \"q\"";
  const ch11::Compressor printf_literal{.label = "printf", .arguments = {"%s", literal}};
  EXPECT_EQ(ch11::compressed_size(printf_literal, program("printf"), ""), literal.size());
}

TEST(CompressedSize, ReportsAProgramThatReadsNoneOfAShortInput) {
  // printf reads nothing, and its 3 bytes of input fit in the pipe: it is reported however fast
  // it ends, before or after they are written.
  const ch11::Compressor printf_ok{.label = "printf", .arguments = {"ok"}};
  for (int attempt = 0; attempt < 20; ++attempt)
    EXPECT_TRUE(ThrowsNaming<CompressorError>(
        [&] { ch11::compressed_size(printf_ok, program("printf"), "abc"); },
        "stopped reading its input before the end of the 3 bytes"));
}

TEST(CompressedSize, RunsWithAnEnvironmentOfPathAlone) {
  // xz reads XZ_OPT before its arguments: the chapter's settings must be the ones it runs with.
  ::setenv("XZ_OPT", "-0", 1);
  const ch11::Compressor env{.label = "env", .programs = {"env"}};
  const std::string path = std::getenv("PATH");
  EXPECT_EQ(ch11::compressed_size(env, program("env"), ""), ("PATH=" + path + "\n").size());
  ::unsetenv("XZ_OPT");
}

TEST(CompressedSize, ReportsAProgramThatStopsReadingAndSurvivesIt) {
  // head exits 0 after 10 bytes: its 10 bytes of output would be the size of part of the text.
  // The rest, two megabytes, cannot go into the pipe: writing them must neither wait forever
  // nor end this process.
  const ch11::Compressor head{.label = "head", .arguments = {"-c", "10"}};
  const std::string text = megabyte() + megabyte();
  EXPECT_TRUE(ThrowsNaming<CompressorError>(
      [&] { ch11::compressed_size(head, program("head"), text); },
      fmt::format("head ({}) stopped reading its input before the end of the {} bytes",
                  program("head"), text.size())));
}

TEST(CompressedSize, NamesAFailureItsStatusAndWhatItSaid) {
  const ch11::Compressor fails{.label = "failing",
                               .arguments = {"-c", "echo it went wrong >&2; exit 3"}};
  EXPECT_TRUE(ThrowsNaming<CompressorError>(
      [&] { ch11::compressed_size(fails, program("sh"), "x"); },
      "failing (" + program("sh") + ") exited with status 3: it went wrong"));
  const ch11::Compressor killed{.label = "killed", .arguments = {"-c", "kill -TERM $$"}};
  EXPECT_TRUE(ThrowsNaming<CompressorError>(
      [&] { ch11::compressed_size(killed, program("sh"), "x"); }, "stopped by signal 15"));
  const ch11::Compressor no_file{
      .label = "silent", .arguments = {"-c", "true", ch11::kOutputFile}, .output_name = "out"};
  EXPECT_TRUE(ThrowsNaming<CompressorError>(
      [&] { ch11::compressed_size(no_file, program("sh"), ""); }, "wrote no out"));
  EXPECT_TRUE(ThrowsNaming<CompressorError>(
      [&] { ch11::compressed_size(fails, "/attn/no/such/program", "x"); }, "cannot start"));
}

TEST(BitsPerByte, IsEightForAProgramThatCopies) {
  const ch11::Compressor cat{.label = "cat", .programs = {"cat"}};
  const ch11::CompressorRun r = ch11::bits_per_byte(cat, megabyte(), "the test part\n");
  ASSERT_TRUE(r.ran()) << r.problem;
  EXPECT_EQ(r.training_bytes, megabyte().size());
  EXPECT_EQ(r.both_bytes, megabyte().size() + 14);
  EXPECT_EQ(r.bits_per_byte, 8.0);
}

TEST(BitsPerByte, LearnsFromTheTrainingText) {
  // gzip (every Debian system has it) finds the test text inside its 32 KB window when it has
  // just read it as training text: a fraction of a bit per byte, where alone it needs several.
  const ch11::Compressor gzip{.label = "gzip -9", .programs = {"gzip"}, .arguments = {"-9", "-c"}};
  if (ch11::find_program(gzip.programs).empty())
    GTEST_SKIP() << "gzip is not installed";
  std::string text;  // 8000 letters a to p drawn by a linear congruential generator: 4 bits each
  std::uint32_t state = 1;
  while (text.size() < 8000) {
    state = state * 1664525u + 1013904223u;
    text += static_cast<char>('a' + (state >> 28));
  }
  const ch11::CompressorRun seen = ch11::bits_per_byte(gzip, text, text);
  const ch11::CompressorRun unseen = ch11::bits_per_byte(gzip, "", text);
  ASSERT_TRUE(seen.ran() && unseen.ran()) << seen.problem << unseen.problem;
  EXPECT_LT(seen.bits_per_byte, 0.5);
  EXPECT_GT(unseen.bits_per_byte, 4.0);
}

TEST(BitsPerByte, SkipsAProgramThatIsMissingAndReportsOneThatFails) {
  const ch11::Compressor missing{
      .label = "missing", .programs = {"attn-no-such-program"}, .package = "attn-none"};
  const ch11::CompressorRun skipped = ch11::bits_per_byte(missing, "training", "test");
  EXPECT_FALSE(skipped.ran());
  EXPECT_EQ(skipped.program, "");
  EXPECT_NE(skipped.problem.find("not installed"), std::string::npos) << skipped.problem;
  EXPECT_NE(skipped.problem.find("attn-none"), std::string::npos) << skipped.problem;
  const ch11::Compressor fails{
      .label = "failing", .programs = {"sh"}, .arguments = {"-c", "exit 4"}};
  const ch11::CompressorRun failed = ch11::bits_per_byte(fails, "training", "test");
  EXPECT_FALSE(failed.ran());
  EXPECT_NE(failed.problem.find("exited with status 4"), std::string::npos) << failed.problem;
  const ch11::Compressor cat{.label = "cat", .programs = {"cat"}};
  const ch11::CompressorRun nothing = ch11::bits_per_byte(cat, "training", "");
  EXPECT_FALSE(nothing.ran()) << "no bits per byte of no bytes";
  EXPECT_NE(nothing.problem.find("empty"), std::string::npos) << nothing.problem;
}

}  // namespace
