#include "attn/book/chapter.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>
#include <optional>

#ifndef ATTN_DEFAULT_PLOTS_DIR
#error "ATTN_DEFAULT_PLOTS_DIR must name the build's plots folder"
#endif

namespace attn::book {

namespace {

// The parser with the options every chapter shares and the chapter's own.
void add_options(CLI::App& app, const ChapterInfo& info, const ChapterOptions& options,
                 PlotOptions& plots, bool& no_plots) {
  plots = PlotOptions{true, ATTN_DEFAULT_PLOTS_DIR, false};
  app.add_flag("--no-plots", no_plots, "Compute and check only; draw no figures");
  app.add_option("--plots", plots.folder, "Folder for the PNG figures")
      ->type_name("DIR")
      ->capture_default_str();
  app.add_flag("--plots-in-terminal", plots.in_terminal,
               "Draw the figures as coloured text on stdout instead of PNG files");
  app.footer(
      fmt::format("Exit status: 0 when every number matches {}, 1 when one differs,\n"
                  "2 for a bad command line.",
                  info.reference));
  if (options)
    options(app);
}

}  // namespace

std::optional<int> parse_command_line(int argc, const char* const* argv, const ChapterInfo& info,
                                      const ChapterOptions& options, PlotOptions& plots) {
  CLI::App app(info.summary, info.executable);
  bool no_plots = false;
  add_options(app, info, options, plots, no_plots);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::ParseError& e) {
    fmt::print(std::cerr, "{}: {}\n\n{}", app.get_name(), e.what(), app.help());
    return 2;
  }
  plots.enabled = !no_plots;
  return std::nullopt;
}

int run_chapter(int argc, char** argv, const ChapterInfo& info, const ChapterOptions& options,
                const Story& story) {
  try {
    PlotOptions plot_options;
    if (const auto stop = parse_command_line(argc, argv, info, options, plot_options))
      return *stop;
    Plotter plots(plot_options, std::cout, std::cerr);
    ArticleChecks checks(info.reference);
    Chapter chapter{std::cout, checks, plots, std::cerr};
    story(chapter);
    const int verdict = checks.report(info.checks_on_stderr ? std::cerr : std::cout, std::cerr);
    if (!std::cout.flush()) {  // a full disk or a closed pipe must not look like success
      fmt::print(std::cerr, "{}: error: could not write the output\n", info.executable);
      return 1;
    }
    return verdict;
  } catch (const CommandLineError& e) {
    CLI::App app(info.summary, info.executable);  // for the usage, as the parser prints it
    PlotOptions unused;
    bool no_plots = false;
    add_options(app, info, options, unused, no_plots);
    fmt::print(std::cerr, "{}: {}\n\n{}", info.executable, e.what(), app.help());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(std::cerr, "{}: error: {}\n", info.executable, e.what());
    return 1;
  }
}

int run_chapter(int argc, char** argv, const ChapterInfo& info, const Story& story) {
  return run_chapter(argc, argv, info, ChapterOptions{}, story);
}

}  // namespace attn::book
