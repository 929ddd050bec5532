/// \file
/// \brief The one checker every chapter uses to hold its numbers against the article's.
///
/// A number **matches** when ours, rounded to the digits the article printed, gives the
/// article's figure: the tolerance is exactly what the article's rounding leaves open.
/// Printed lines must match byte for byte, and claims (symmetry, "export pulls toward fail")
/// must hold. Every check is echoed; any failure makes the chapter exit non-zero.
///
/// A NaN or an infinity never matches: such a number is a failed check, reported like any
/// other, not an exception, so that the report still names every quantity.
#pragma once

#include <armadillo>

#include <iosfwd>
#include <string>
#include <vector>

namespace attn::book {

/// \brief Collects a chapter's checks against its article and reports them as one verdict.
class ArticleChecks {
 public:
  /// \brief A checker whose report names what the numbers come from.
  /// \param reference `"the article"` for chapters 01 to 06; a reference implementation, such
  ///        as `"numpy"`, for the chapters that go beyond the articles.
  explicit ArticleChecks(std::string reference = "the article");

  /// \brief Checks one number: `ours`, rounded to \p decimals, must equal \p article.
  /// \param quantity what the number is, as the report names it (`"weights[bank]"`).
  /// \param article the article's figure. \param decimals the digits the article printed.
  /// \param ours our computed value. A NaN or an infinity in \p ours or \p article fails.
  /// \throws std::invalid_argument if \p decimals is negative or above 308 (numpy::round()).
  void number(const std::string& quantity, double article, int decimals, double ours);

  /// \brief Checks a number the article gives loosely ("about 0.60"): it matches when
  ///        \f$|ours - article| \le tolerance\f$.
  /// \param quantity what the number is. \param article the article's figure.
  /// \param tolerance how far "about" reaches. \param ours our computed value.
  /// A NaN anywhere, or an infinite \p ours, fails the check.
  void approximately(const std::string& quantity, double article, double tolerance, double ours);

  /// \brief Checks a row of numbers, entry by entry, with one label per entry.
  /// \param quantity the row's name; entries are reported as `quantity[label]`.
  /// \param labels one label per entry. \param article the article's figures.
  /// \param decimals the digits the article printed. \param ours `(1 × n)` or `(n × 1)`.
  /// \throws ShapeError if the three lengths differ (all three are named).
  /// \throws std::invalid_argument as number() does for \p decimals.
  void numbers(const std::string& quantity, const std::vector<std::string>& labels,
               const std::vector<double>& article, int decimals, const arma::mat& ours);

  /// \brief Checks that a line we print is, character for character, the article's.
  /// \param quantity what the line shows. \param article the article's line. \param ours ours.
  void line(const std::string& quantity, const std::string& article, const std::string& ours);

  /// \brief Checks a block of printed lines, line by line: one check per line of the
  ///        article's block (`"<quantity> line 3"`), and one that nothing follows it.
  /// \param quantity what the block is. \param article the article's lines, each ending in
  ///        `'\n'`. \param ours what we printed.
  void block(const std::string& quantity, const std::string& article, const std::string& ours);

  /// \brief Checks a statement the article makes in words ("the grid is symmetric").
  /// \param statement the claim, as the report prints it. \param holds whether it holds for us.
  void claim(const std::string& statement, bool holds);

  /// \brief Prints every check as `OK` / `NOT OK`, the largest numeric difference and the
  ///        verdict to \p out; names the first failure on \p err.
  ///
  /// The verdict counts the checks that pass and says how many compare with a figure of the
  /// reference and how many are claims: "15 of 15 checks pass (10 against numpy, 5 claims)".
  /// \param out where the report goes (a chapter's stdout). \param err where failures go.
  /// \return 0 when every check passed, 1 otherwise: the chapter's exit code.
  int report(std::ostream& out, std::ostream& err) const;

  /// \brief Whether every check so far passed. \return true if none failed.
  bool all_passed() const;

 private:
  struct Check {
    std::string quantity;  // what is checked, or the claim's statement
    std::string article;   // the article's figure or line; empty for a claim
    std::string ours;      // ours, printed with a few more digits than the article's
    bool passed;
    bool is_claim() const { return article.empty(); }  // a statement, with no figure to compare
  };
  void record_number(const std::string& quantity, double article, double ours, bool passed,
                     std::string article_text, std::string ours_text);

  std::string reference_;  // "the article" or "numpy"
  std::string label_;      // its name before a figure: "article", "numpy"
  std::vector<Check> checks_;
  double largest_difference_ = 0.0;
  int numeric_checks_ = 0;
};

}  // namespace attn::book
