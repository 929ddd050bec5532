#include <attn/book/article_check.hpp>
#include <attn/math/validate.hpp>

#include <gtest/gtest.h>

#include <limits>
#include <sstream>

namespace {

struct Report {
  int code;
  std::string out, err;
};

Report report_of(const attn::book::ArticleChecks& checks) {
  std::ostringstream out, err;
  const int code = checks.report(out, err);
  return {code, out.str(), err.str()};
}

TEST(ArticleChecks, ANumberMatchesWhenItRoundsToThePrintedDigits) {
  attn::book::ArticleChecks checks;
  checks.number("weights[money]", 0.21, 2, 0.2052);  // rounds to 0.21
  checks.number("z_bank[x]", 0.734, 3, 0.73442);
  EXPECT_TRUE(checks.all_passed());
  const Report r = report_of(checks);
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("2 of 2 checks pass"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "");
}

TEST(ArticleChecks, AnOffByOneInTheLastDigitFailsAndIsNamed) {
  attn::book::ArticleChecks checks;
  checks.number("weights[money]", 0.21, 2, 0.2052);
  checks.number("weights[bank]", 0.46, 2, 0.4640);
  checks.number("weights[river]", 0.34, 2, 0.3449);
  checks.number("z_bank[y]", 0.441, 3, 0.4425);  // rounds to 0.442
  const Report r = report_of(checks);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("NOT OK  z_bank[y]"), std::string::npos) << r.out;
  EXPECT_EQ(r.err.rfind("MISMATCH: z_bank[y]: the article has 0.441, we have 0.44250", 0), 0u)
      << r.err;
}

TEST(ArticleChecks, TheToleranceIsTheArticlesRounding) {
  attn::book::ArticleChecks checks;
  checks.number("in", 0.46, 2, 0.46499);
  checks.number("out", 0.46, 2, 0.45499);
  EXPECT_FALSE(checks.all_passed());
  const Report r = report_of(checks);
  EXPECT_NE(r.err.find("MISMATCH: out"), std::string::npos) << r.err;
}

TEST(ArticleChecks, AboutMeansWithinTheGivenTolerance) {
  attn::book::ArticleChecks checks;
  checks.approximately("it -> cat", 0.60, 0.05, 0.6123);
  EXPECT_TRUE(checks.all_passed());
  checks.approximately("it -> cat", 0.60, 0.05, 0.6501);
  const Report r = report_of(checks);
  EXPECT_NE(r.err.find("MISMATCH: it -> cat: the article has about 0.60 (±0.05), we have 0.6501"),
            std::string::npos)
      << r.err;
}

TEST(ArticleChecks, RoundingIsNumpysOnBothSides) {
  attn::book::ArticleChecks checks;
  checks.number("tiny negative", 0.0, 2, -0.001);  // rounds to -0.00, which is 0.00
  checks.number("a tie", 0.005, 2, 0.005);         // np.round: both round to even, 0.00
  EXPECT_TRUE(checks.all_passed());
}

TEST(ArticleChecks, NaNNeverMatches) {
  attn::book::ArticleChecks checks;
  checks.number("x", 0.0, 2, std::numeric_limits<double>::quiet_NaN());
  EXPECT_FALSE(checks.all_passed());
}

TEST(ArticleChecks, LinesMustMatchByteForByte) {
  attn::book::ArticleChecks checks;
  checks.line("printed scores", "scores   [0.2 1.  0.7]", "scores   [0.2 1.  0.7]");
  EXPECT_TRUE(checks.all_passed());
  checks.line("printed weights", "weights  [0.21 0.46 0.34]", "weights  [0.21 0.46 0.34] ");
  EXPECT_FALSE(checks.all_passed());
}

TEST(ArticleChecks, AFalseClaimFails) {
  attn::book::ArticleChecks checks;
  checks.claim("the score grid is symmetric", false);
  const Report r = report_of(checks);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("the score grid is symmetric"), std::string::npos);
}

TEST(ArticleChecks, RowsCheckEveryEntryWithItsLabel) {
  attn::book::ArticleChecks checks;
  checks.numbers("scores", {"money", "bank", "river"}, {0.2, 1.0, 0.7}, 2,
                 arma::rowvec{0.2, 1.0, 0.71});
  const Report r = report_of(checks);
  EXPECT_NE(r.err.find("MISMATCH: scores[river]"), std::string::npos) << r.err;
  EXPECT_THROW(checks.numbers("scores", {"a"}, {0.2, 1.0}, 2, arma::rowvec{0.2, 1.0}),
               attn::math::ShapeError);
}

TEST(ArticleChecks, ABlockIsCheckedLineByLineAndNothingMayFollow) {
  attn::book::ArticleChecks same, changed, longer;
  same.block("printed", "a\nb\n", "a\nb\n");
  EXPECT_EQ(report_of(same).code, 0);
  EXPECT_NE(report_of(same).out.find("3 of 3 checks pass"), std::string::npos);
  changed.block("printed", "a\nb\n", "a\nc\n");
  const Report r = report_of(changed);
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "MISMATCH: printed line 2: the article has \"b\", we have \"c\" (1 check(s) failed)\n");
  longer.block("printed", "a\n", "a\nextra\n");
  EXPECT_EQ(report_of(longer).code, 1);
}

TEST(ArticleChecks, ARunWithNothingToCheckSaysSoAndPasses) {
  const Report r = report_of(attn::book::ArticleChecks{});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out,
            "\nchecks against the article\n  none: the article printed no numbers for this run\n");
}

TEST(ArticleChecks, NameTheReferenceTheyCompareAgainst) {
  attn::book::ArticleChecks checks("numpy");
  checks.number("PE[1, 2]", 0.8415, 4, 0.84147098);
  checks.number("PE[2, 1]", -0.4161, 4, -0.41);
  const Report r = report_of(checks);
  EXPECT_NE(r.out.find("checks against numpy\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("numpy 0.8415, ours"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 of 2 checks pass (all against numpy)\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.err,
            "MISMATCH: PE[2, 1]: numpy has -0.4161, we have -0.4100000 (1 check(s) failed)\n");
  const Report article = report_of(attn::book::ArticleChecks{});
  EXPECT_NE(article.out.find("none: the article printed no numbers"), std::string::npos)
      << article.out;
}

TEST(ArticleChecks, TheVerdictTellsFiguresFromClaims) {
  attn::book::ArticleChecks mixed("numpy");
  mixed.number("PE[1, 2]", 0.8415, 4, 0.84147098);
  mixed.claim("rows sum to 1", true);
  mixed.claim("the grid is symmetric", false);
  EXPECT_NE(report_of(mixed).out.find("2 of 3 checks pass (1 against numpy, 2 claims)\n"),
            std::string::npos)
      << report_of(mixed).out;
  attn::book::ArticleChecks claims_only("PyTorch");
  claims_only.claim("every weight above the diagonal is 0", true);
  EXPECT_NE(report_of(claims_only).out.find("1 of 1 checks pass (all claims)\n"), std::string::npos)
      << report_of(claims_only).out;
}

}  // namespace
