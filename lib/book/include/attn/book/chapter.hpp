/// \file
/// \brief What every chapter executable shares: its command line, its plotter, its checks,
///        and one place that turns errors into messages and exit codes.
///
/// A chapter's `main` is one call to run_chapter() with the chapter's story. Exit codes:
/// 0 when every article number matches, 1 when one does not (or the computation failed),
/// 2 for a bad command line (the usage is printed).
#pragma once

#include "attn/book/article_check.hpp"
#include "attn/book/plot.hpp"

#include <functional>
#include <iosfwd>
#include <optional>
#include <stdexcept>
#include <string>

namespace CLI {
class App;  // CLI11's parser; a chapter that adds options includes <CLI/CLI.hpp> itself
}

/// \brief The book layer: what makes a program a chapter (runner, article checks, tables, figures).
namespace attn::book {

/// \brief The name and one-line summary a chapter shows in `--help`.
struct ChapterInfo {
  std::string executable;  ///< `"ch01_raw_attention"`.
  std::string summary;     ///< one sentence on what the chapter shows.
  /// true when stdout must be exactly what an article's program prints, so the table of
  /// checks goes to stderr instead.
  bool checks_on_stderr = false;
  /// What the chapter's numbers are checked against, as its report names it: `"the article"`,
  /// or the reference implementation of a chapter beyond the articles (`"numpy"`).
  std::string reference = "the article";
};

/// \brief A command-line value that the story could only judge once it had built what it needs
///        (chapter 11's `--checkpoint`, which must belong to the run the corpus and tokenizer
///        make). Thrown before anything is trained or written; run_chapter() prints it as the
///        parser prints a bad command line, on stderr with the usage, and exits with 2.
class CommandLineError : public std::invalid_argument {
 public:
  /// \brief \param option the option, `--checkpoint`. \param problem what is wrong with it.
  CommandLineError(const std::string& option, const std::string& problem)
      : std::invalid_argument(option + ": " + problem) {}
};

/// \brief What a chapter's story is handed: where to print, what to check, how to draw.
struct Chapter {
  std::ostream& out;      ///< the story and its numbers (stdout).
  ArticleChecks& checks;  ///< the article's numbers, checked as the story goes.
  Plotter& plots;         ///< the chapter's figures.
  /// Diagnostics that are not part of the story, such as figures that vary with the machine's
  /// rounding (stderr); the golden tests compare stdout only.
  std::ostream& log;
};

/// \brief A chapter's own command-line options, added to the shared ones.
using ChapterOptions = std::function<void(CLI::App&)>;
/// \brief A chapter's body: computes, prints, checks and plots.
using Story = std::function<void(Chapter&)>;

/// \brief The first half of run_chapter(): the shared options and the chapter's own, parsed.
///
/// `--help` prints the usage on stdout; a bad command line (an unknown flag, a missing value, a
/// value the chapter's own checks refuse) prints the error and the usage on stderr. No command
/// line makes it throw: the fuzz harness tests/fuzz/chapter_command_lines.cpp feeds every
/// chapter's options arbitrary ones.
/// \param argc,argv the command line. \param info name and summary for `--help`.
/// \param options adds the chapter's own options (may be empty).
/// \param[out] plots where and how the figures are drawn, as the command line says.
/// \return the exit code when the program stops here (0 after `--help`, 2 after a bad command
///         line), or no value when the story is to be told.
std::optional<int> parse_command_line(int argc, const char* const* argv, const ChapterInfo& info,
                                      const ChapterOptions& options, PlotOptions& plots);

/// \brief Runs one chapter: parses the command line, tells the story, reports the checks.
///
/// Every chapter accepts `--help`, `--no-plots`, `--plots DIR` (default: the build's `plots/`
/// folder, wherever the program is started from; never the committed snapshot) and
/// `--plots-in-terminal`. Exceptions from the story are
/// caught and reported on stderr; none escapes. A CommandLineError ends the run as a bad
/// command line does (exit 2, with the usage); any other, as a failed run (exit 1).
/// \param argc,argv the command line. \param info name and summary for `--help`.
/// \param options adds the chapter's own options (may be empty).
/// \param story the chapter's body.
/// \return the process exit code: 0, 1 or 2 as described above.
int run_chapter(int argc, char** argv, const ChapterInfo& info, const ChapterOptions& options,
                const Story& story);

/// \brief run_chapter() for a chapter with no options of its own.
/// \param argc,argv the command line. \param info name and summary for `--help`.
/// \param story the chapter's body.
/// \return the process exit code.
int run_chapter(int argc, char** argv, const ChapterInfo& info, const Story& story);

}  // namespace attn::book
