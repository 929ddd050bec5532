// Fuzzes every chapter's command line: the options all chapters share and each chapter's own,
// with the checks behind them (a token of the sentence, a seed numpy's SeedSequence takes, a
// sentence with a word, a prompt of known words), through the library's parser.
//
// Each chapter's main.cpp is compiled into this program unchanged, with two names swapped by
// the preprocessor (tests/fuzz/CMakeLists.txt): its `main` becomes chapter_NN_main, and its call
// to attn::book::run_chapter() becomes a call to attn::book::parse_only() below, which parses the
// command line exactly as run_chapter() does and then returns instead of telling the story. The
// table of chapters, attn::fuzz::kChapters, is generated from the chapters registered with
// add_chapter() (chapter_programs.hpp.in).
//
// Input: the first byte picks the chapter; the rest is the arguments, separated by newlines or
// NUL bytes. The promise checked: every command line ends in exit code 0 (--help, or a command
// line the story would run with) or 2 (a bad one), and nothing throws, crashes or leaks.
#include <attn/book/chapter.hpp>

#include "chapter_programs.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace attn::book {

// What a chapter's call to run_chapter() becomes here: the command line, parsed; no story.
int parse_only(int argc, char** argv, const ChapterInfo& info, const ChapterOptions& options,
               const Story& /*story*/) {
  PlotOptions plots;
  return parse_command_line(argc, argv, info, options, plots).value_or(0);
}

int parse_only(int argc, char** argv, const ChapterInfo& info, const Story& story) {
  return parse_only(argc, argv, info, ChapterOptions{}, story);
}

}  // namespace attn::book

namespace {

using attn::fuzz::ChapterProgram;
using attn::fuzz::kChapters;

// The usage and error messages go nowhere while fuzzing: printing them would be most of the
// time spent. They are put back when the program ends.
struct Silence {
  std::ostringstream sink;
  std::streambuf* out = std::cout.rdbuf(sink.rdbuf());
  std::streambuf* err = std::cerr.rdbuf(sink.rdbuf());
  ~Silence() {
    std::cout.rdbuf(out);
    std::cerr.rdbuf(err);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0)
    return 0;
  const ChapterProgram& chapter = kChapters[data[0] % kChapters.size()];
  std::vector<std::string> args{chapter.name, ""};
  for (std::size_t i = 1; i < size; ++i) {
    if (data[i] == '\n' || data[i] == '\0') {
      args.emplace_back();
    } else {
      args.back().push_back(static_cast<char>(data[i]));
    }
  }
  if (size == 1)
    args.pop_back();  // no arguments at all
  std::vector<char*> argv;
  for (std::string& arg : args)
    argv.push_back(arg.data());
  argv.push_back(nullptr);

  int code = 0;
  {
    Silence silence;
    code = chapter.main(static_cast<int>(args.size()), argv.data());
  }
  if (code != 0 && code != 2) {
    std::fprintf(stderr, "%s: exit code %d for a command line (expected 0 or 2)\n", chapter.name,
                 code);
    std::abort();
  }
  return 0;
}
