#include "attn/chapter.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ostream.h>

#include <exception>
#include <iostream>
#include <optional>

#ifndef ATTN_DEFAULT_PLOTS_DIR
#error "ATTN_DEFAULT_PLOTS_DIR must name the build's plots folder"
#endif

namespace attn {

namespace {

// Parses the command line; returns an exit code if the program should stop here.
std::optional<int> parse(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::ParseError& e) {
    fmt::print(std::cerr, "{}: {}\n\n{}", app.get_name(), e.what(), app.help());
    return 2;
  }
  return std::nullopt;
}

}  // namespace

int run_chapter(int argc, char** argv, const ChapterInfo& info, const ChapterOptions& options,
                const Story& story) {
  try {
    CLI::App app(info.summary, info.executable);
    PlotOptions plot_options{true, ATTN_DEFAULT_PLOTS_DIR, false};
    bool no_plots = false;
    app.add_flag("--no-plots", no_plots, "Compute and check only; draw no figures");
    app.add_option("--plots", plot_options.folder, "Folder for the PNG figures")
        ->type_name("DIR")
        ->capture_default_str();
    app.add_flag("--plots-in-terminal", plot_options.in_terminal,
                 "Draw the figures as coloured text on stdout instead of PNG files");
    app.footer(fmt::format("Exit status: 0 when every number matches {}, 1 when one differs,\n"
                           "2 for a bad command line.", info.reference));
    if (options) options(app);
    if (const auto stop = parse(app, argc, argv)) return *stop;
    plot_options.enabled = !no_plots;

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
  } catch (const std::exception& e) {
    fmt::print(std::cerr, "{}: error: {}\n", info.executable, e.what());
    return 1;
  }
}

int run_chapter(int argc, char** argv, const ChapterInfo& info, const Story& story) {
  return run_chapter(argc, argv, info, ChapterOptions{}, story);
}

}  // namespace attn
