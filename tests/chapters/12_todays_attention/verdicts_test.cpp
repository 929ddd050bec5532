// Chapter 12's verdicts, recomputed from the runs it prints. The chapter's expected output (the
// book's run, tests/golden/ch12_todays_attention.txt, which its page shows) and its --quick run
// print every run's bits per byte to four decimals; from those numbers alone this test
// recomputes, with attn::stats, every interval, every verdict, the pooled spread, the design's
// smallest detectable difference and the interaction, and holds each printed line to it. So no
// verdict on the page can say more than its interval supports, and a change to the chapter's
// analysis that forgets its printout fails here.
//
// Rounding: every run is printed to 4 decimals (an error of at most 5e-5 each), the results to
// 3 (5e-4); a recomputed number must agree within kPrinted. A verdict is recomputed exactly, and
// must not sit where rounding could turn it: the runs' rounding moves a mean by at most 5e-5, a
// difference by 1e-4, so an interval's end within kMargin of 0 fails, since the printout could
// not then support its word.
#include <12_todays_attention/experiment.hpp>
#include <attn/stats/experiment.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace stats = attn::stats;

const double kPrinted = 1e-3;
const double kMargin = 2e-4;
const double kFamily = 0.95;  // the chapter's family-wise confidence, as it prints it
const double kPower = 0.8;    // and the power of its smallest detectable difference

std::vector<std::string> lines_of(const std::string& file) {
  const std::string path = std::string(ATTN_TEST_DATA_DIR) + "/../golden/" + file;
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error("cannot read " + path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;)
    out.push_back(w);
  return out;
}

// The first line at or after `from` that contains `text`; fails the test if there is none.
std::size_t find(const std::vector<std::string>& lines, const std::string& text,
                 std::size_t from = 0) {
  for (std::size_t i = from; i < lines.size(); ++i)
    if (lines[i].find(text) != std::string::npos)
      return i;
  throw std::runtime_error("no line contains \"" + text + "\"");
}

// A table of runs as print_runs() prints it: the line "  seed  name name ...", a row per seed
// (a run's bits per byte in each column that has one, the columns filled from the left), then
// "  mean ...". Returns each column's runs, by name, in the order of the rows.
struct Runs {
  std::vector<std::string> names;
  std::map<std::string, arma::vec> bits;
  std::map<std::string, double> printed_mean;
};

Runs read_runs(const std::vector<std::string>& lines, std::size_t header) {
  Runs runs;
  const std::vector<std::string> head = words(lines.at(header));
  EXPECT_EQ(head.at(0), "seed");
  runs.names.assign(head.begin() + 1, head.end());
  std::map<std::string, std::vector<double>> columns;
  std::size_t i = header + 1;
  for (; words(lines.at(i)).at(0) != "mean"; ++i) {
    const std::vector<std::string> row = words(lines[i]);
    for (std::size_t c = 1; c < row.size(); ++c)
      columns[runs.names.at(c - 1)].push_back(std::stod(row[c]));
  }
  const std::vector<std::string> means = words(lines[i]);
  for (std::size_t c = 0; c < runs.names.size(); ++c) {
    runs.bits[runs.names[c]] = arma::vec(columns[runs.names[c]]);
    runs.printed_mean[runs.names[c]] = std::stod(means.at(c + 1));
  }
  return runs;
}

// A verdict line: a label of up to 32 characters, the change, "[low, high]", the verdict.
struct VerdictLine {
  std::string label;
  double change = 0.0;
  double low = 0.0;
  double high = 0.0;
  std::string verdict;
};

VerdictLine read_verdict(const std::string& line) {
  VerdictLine v;
  const std::size_t open = line.find('[');
  const std::size_t comma = line.find(',', open);
  const std::size_t close = line.find(']', comma);
  if (open == std::string::npos || comma == std::string::npos || close == std::string::npos)
    throw std::runtime_error("not a verdict line: " + line);
  const std::vector<std::string> before = words(line.substr(0, open));
  v.change = std::stod(before.back());
  v.label = line.substr(2, 32);
  v.label.erase(v.label.find_last_not_of(' ') + 1);
  v.low = std::stod(line.substr(open + 1, comma - open - 1));
  v.high = std::stod(line.substr(comma + 1, close - comma - 1));
  v.verdict = line.substr(line.find_first_not_of(' ', close + 1));
  return v;
}

// The printed line agrees with the interval recomputed from the printed runs, and its verdict
// is the one that interval supports, with room to spare for the rounding.
void expect_verdict(const std::string& line, const stats::Difference& d) {
  SCOPED_TRACE(line);
  const VerdictLine printed = read_verdict(line);
  EXPECT_NEAR(printed.change, d.estimate, kPrinted);
  EXPECT_NEAR(printed.low, d.low, kPrinted);
  EXPECT_NEAR(printed.high, d.high, kPrinted);
  EXPECT_EQ(printed.verdict, attn::ch12::verdict(d));
  EXPECT_GT(std::min(std::abs(d.low), std::abs(d.high)), kMargin)
      << "an end of the interval is so near 0 that the printed runs cannot settle the verdict";
}

// The comparison of the table's columns (the first the baseline) with each verdict line printed
// from line `verdicts` on, one per change in the columns' order.
stats::AgainstBaseline expect_comparison(const std::vector<std::string>& lines, const Runs& runs,
                                         std::size_t verdicts) {
  std::vector<arma::vec> changes;
  for (std::size_t c = 1; c < runs.names.size(); ++c)
    changes.push_back(runs.bits.at(runs.names[c]));
  const stats::AgainstBaseline result =
      stats::against_baseline(runs.bits.at(runs.names[0]), changes, kFamily);
  for (std::size_t c = 0; c < changes.size(); ++c)
    expect_verdict(lines.at(verdicts + c), result.differences[c]);
  return result;
}

void expect_means(const Runs& runs) {
  for (const auto& [name, bits] : runs.bits)
    EXPECT_NEAR(runs.printed_mean.at(name), arma::mean(bits), 1e-4) << name;
}

// The number printed just before `after` on line `line`, as "0.0141 bits per byte".
double number_before(const std::string& line, const std::string& after) {
  const std::vector<std::string> w = words(line.substr(0, line.find(after)));
  return std::stod(w.back());
}

void expect_chapter_verdicts(const std::string& file) {
  SCOPED_TRACE(file);
  const std::vector<std::string> lines = lines_of(file);

  // The comparison at the chapter's rate.
  const std::size_t table = find(lines, "a row per seed:") + 1;
  const Runs runs = read_runs(lines, table);
  ASSERT_EQ(runs.names.size(), 9u);
  expect_means(runs);
  const std::size_t spread_line = find(lines, "bits per byte (", table);
  const std::size_t verdicts = find(lines, "verdict", spread_line) + 1;
  const stats::AgainstBaseline main = expect_comparison(lines, runs, verdicts);
  EXPECT_NEAR(number_before(lines[spread_line], "bits per byte ("), main.spread.sd, 1e-4);

  // The same verdicts with each row's own spread (Welch), at the same correction.
  std::vector<std::string> differ;
  for (std::size_t c = 1; c < runs.names.size(); ++c) {
    const stats::Difference own = stats::welch(runs.bits.at(runs.names[c]),
                                               runs.bits.at(runs.names[0]), main.each_confidence);
    if (stats::finding(own) != stats::finding(main.differences[c - 1]))
      differ.push_back(runs.names[c] + " (" + attn::ch12::verdict(own) + ")");
  }
  const std::string welch_line = lines.at(find(lines, "Welch's intervals", verdicts));
  const std::string said = welch_line.substr(welch_line.find("): ") + 3);
  if (differ.empty()) {
    EXPECT_EQ(said, "the same verdicts.");
  } else {
    std::string listed;
    for (const std::string& d : differ)
      listed += (listed.empty() ? "" : ", ") + d;
    EXPECT_EQ(said, "other verdicts for " + listed + ".");
  }

  // The design's smallest detectable difference at the measured spread.
  const std::size_t design_line = find(lines, "these intervals find", verdicts);
  const stats::Design design{.changes = 8,
                             .change_seeds = runs.bits.at("rope").n_elem,
                             .baseline_seeds = runs.bits.at("gpt2").n_elem,
                             .family_confidence = kFamily,
                             .power = kPower};
  EXPECT_NEAR(number_before(lines.at(design_line + 1), "bits per byte"),
              stats::design_minimum_detectable_effect(design, main.spread.sd), kPrinted);

  // Today's changes together minus each alone: rope, gqa, window, rmsnorm, swiglu and today.
  const std::vector<std::string> todays = {"rope", "gqa", "window", "rmsnorm", "swiglu"};
  std::vector<stats::Summary> groups = {stats::summarise(runs.bits.at("gpt2"))};
  std::vector<double> weights = {4.0};
  for (const std::string& name : todays) {
    groups.push_back(stats::summarise(runs.bits.at(name)));
    weights.push_back(-1.0);
  }
  groups.push_back(stats::summarise(runs.bits.at("today")));
  weights.push_back(1.0);
  const stats::Difference together = stats::contrast(groups, weights, main.spread, kFamily);
  const std::string sum_line = lines.at(find(lines, "Together minus the sum:", verdicts));
  EXPECT_NEAR(number_before(sum_line, ", "), together.estimate, kPrinted) << sum_line;
  const std::size_t open = sum_line.find('[');
  EXPECT_NEAR(std::stod(sum_line.substr(open + 1)), together.low, kPrinted) << sum_line;
  EXPECT_NEAR(std::stod(sum_line.substr(sum_line.find(',', open) + 1)), together.high, kPrinted)
      << sum_line;
  const std::string together_said = sum_line.substr(sum_line.find("]: ") + 3);
  switch (stats::finding(together)) {
    case stats::Finding::lower:
      EXPECT_EQ(together_said, "they gain more together.");
      break;
    case stats::Finding::higher:
      EXPECT_EQ(together_said, "they gain less together.");
      break;
    case stats::Finding::not_detectable:
      EXPECT_EQ(together_said, "not detectable at this size.");
      break;
  }

  // The learning-rate check, compared as the main comparison is.
  const std::size_t rate_table = find(lines, "The learning-rate check:", verdicts) + 2;
  const Runs rate_runs = read_runs(lines, rate_table);
  ASSERT_EQ(rate_runs.names.size(), 5u);
  expect_means(rate_runs);
  const std::size_t rate_verdicts = find(lines, "verdict", rate_table) + 1;
  expect_comparison(lines, rate_runs, rate_verdicts);
}

TEST(Verdicts, TheBooksRunSaysNoMoreThanItsIntervals) {
  expect_chapter_verdicts("ch12_todays_attention.txt");
}

TEST(Verdicts, TheQuickRunsToo) {
  expect_chapter_verdicts("ch12_todays_attention.quick.txt");
}

}  // namespace
