#include "attn/book/article_check.hpp"

#include "attn/math/validate.hpp"
#include "attn/numpy/numpy_print.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cmath>
#include <ostream>
#include <sstream>
#include <string_view>
#include <utility>

namespace attn::book {

ArticleChecks::ArticleChecks(std::string reference)
    : reference_(std::move(reference)),
      label_(reference_.rfind("the ", 0) == 0 ? reference_.substr(4) : reference_) {}

void ArticleChecks::number(const std::string& quantity, double article, int decimals, double ours) {
  // Both sides rounded the way np.round rounds, compared as numbers (so -0.00 equals 0.00).
  const bool passed = numpy::round(ours, decimals) == numpy::round(article, decimals);
  record_number(quantity, article, ours, passed, fmt::format("{:.{}f}", article, decimals),
                fmt::format("{:.{}f}", ours, decimals + 3));
}

void ArticleChecks::approximately(const std::string& quantity, double article, double tolerance,
                                  double ours) {
  record_number(quantity, article, ours, std::fabs(ours - article) <= tolerance,
                fmt::format("about {:.2f} (±{:.2f})", article, tolerance),
                fmt::format("{:.4f}", ours));
}

void ArticleChecks::record_number(const std::string& quantity, double article, double ours,
                                  bool passed, std::string article_text, std::string ours_text) {
  const bool finite = std::isfinite(ours);  // NaN or infinity never matches
  if (finite)
    largest_difference_ = std::max(largest_difference_, std::fabs(ours - article));
  ++numeric_checks_;
  checks_.push_back({quantity, std::move(article_text), std::move(ours_text), finite && passed});
}

void ArticleChecks::numbers(const std::string& quantity, const std::vector<std::string>& labels,
                            const std::vector<double>& article, int decimals,
                            const arma::mat& ours) {
  if (labels.size() != article.size() || article.size() != ours.n_elem)
    throw math::ShapeError(fmt::format("checking {}: {} labels, {} article numbers, ours is {}",
                                       quantity, labels.size(), article.size(),
                                       math::shape_of(ours)));
  for (std::size_t i = 0; i < article.size(); ++i)
    number(fmt::format("{}[{}]", quantity, labels[i]), article[i], decimals, ours(i));
}

void ArticleChecks::line(const std::string& quantity, const std::string& article,
                         const std::string& ours) {
  checks_.push_back({quantity, '"' + article + '"', '"' + ours + '"', article == ours});
}

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

}  // namespace

void ArticleChecks::block(const std::string& quantity, const std::string& article,
                          const std::string& ours) {
  const std::vector<std::string> theirs = lines_of(article), mine = lines_of(ours);
  for (std::size_t i = 0; i < theirs.size(); ++i)
    line(fmt::format("{} line {}", quantity, i + 1), theirs[i],
         i < mine.size() ? mine[i] : "(missing)");
  line(fmt::format("{}: nothing after line {}", quantity, theirs.size()),
       std::to_string(theirs.size()), std::to_string(mine.size()));
}

void ArticleChecks::claim(const std::string& statement, bool holds) {
  checks_.push_back({statement, "", "", holds});
}

bool ArticleChecks::all_passed() const {
  return std::all_of(checks_.begin(), checks_.end(), [](const Check& c) { return c.passed; });
}

int ArticleChecks::report(std::ostream& out, std::ostream& err) const {
  std::size_t width = 0;
  for (const Check& c : checks_)
    if (!c.is_claim())
      width = std::max(width, c.quantity.size());
  fmt::print(out, "\nchecks against {}\n", reference_);
  if (checks_.empty()) {
    fmt::print(out, "  none: {} printed no numbers for this run\n", reference_);
    return 0;
  }
  for (const Check& c : checks_) {
    const std::string_view verdict = c.passed ? "OK" : "NOT OK";
    if (c.is_claim())  // the statement is the whole story
      fmt::print(out, "  {:<6}  claim: {}\n", verdict, c.quantity);
    else
      fmt::print(out, "  {:<6}  {:<{}}  {} {}, ours {}\n", verdict, c.quantity, width, label_,
                 c.article, c.ours);
  }
  const auto failed =
      std::count_if(checks_.begin(), checks_.end(), [](const Check& c) { return !c.passed; });
  if (numeric_checks_ > 0)
    fmt::print(out, "  largest |ours - {}| over {} number{}: {:.4f}\n", label_, numeric_checks_,
               numeric_checks_ == 1 ? "" : "s", largest_difference_);
  // The verdict says how many checks hold a figure of the reference and how many are claims,
  // which the program states and checks on its own.
  const auto claims =
      std::count_if(checks_.begin(), checks_.end(), [](const Check& c) { return c.is_claim(); });
  const auto figures = static_cast<std::ptrdiff_t>(checks_.size()) - claims;
  std::string kinds =
      fmt::format("{} against {}, {} claim{}", figures, reference_, claims, claims == 1 ? "" : "s");
  if (claims == 0)
    kinds = "all against " + reference_;
  if (figures == 0)
    kinds = "all claims";
  fmt::print(out, "{} of {} checks pass ({})\n", checks_.size() - failed, checks_.size(), kinds);
  if (failed == 0)
    return 0;
  const Check& first =
      *std::find_if(checks_.begin(), checks_.end(), [](const Check& c) { return !c.passed; });
  if (first.is_claim())
    fmt::print(err, "MISMATCH: {}'s claim \"{}\" does not hold for us", reference_, first.quantity);
  else
    fmt::print(err, "MISMATCH: {}: {} has {}, we have {}", first.quantity, reference_,
               first.article, first.ours);
  fmt::print(err, " ({} check(s) failed)\n", failed);
  return 1;
}

}  // namespace attn::book
