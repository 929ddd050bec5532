// Chapter 01: attention on raw embeddings, "money bank river".
//
// "bank" compares itself with every token by a dot product, turns the scores into weights with
// softmax, and blends the embeddings with those weights. Then every token takes a turn asking.
// The book's page for this chapter is chapters/01_raw_attention/chapter.md; it quotes the
// regions marked //! [name] below.

#include "money_bank_river.hpp"

#include <attn/book/chapter.hpp>
#include <attn/book/grid_text.hpp>
#include <attn/book/palette.hpp>
#include <attn/math/attention.hpp>
#include <attn/numpy/numpy_print.hpp>

#include <fmt/ostream.h>

#include <string>
#include <vector>

namespace {

// Article 004's embeddings, shared with the tests (money_bank_river.cpp, beside this file).
const attn::ch01::MoneyBankRiver kText = attn::ch01::money_bank_river();
const std::vector<std::string>& kTokens = kText.tokens;
const arma::mat& kEmbeddings = kText.embeddings;  // E: (3 × 2)
const arma::uword kBank = kText.bank;

//! [article-numbers]
// What article 004 prints and states, quoted exactly. The printed lines come from
// np.round(scores, 2), np.round(weights, 2) and np.round(z_bank, 3).
const std::string kArticleScores = "scores   [0.2 1.  0.7]";
const std::string kArticleWeights = "weights  [0.21 0.46 0.34]";
const std::string kArticleBlend = "z_bank   [0.734 0.441]";
const std::vector<double> kScores = {0.2, 1.0, 0.7};      // to 2 decimals
const std::vector<double> kWeights = {0.21, 0.46, 0.34};  // to 2 decimals
const std::vector<double> kBlend = {0.734, 0.441};        // to 3 decimals
//! [article-numbers]

// `print(label, np.round(values, decimals))` in Python: the label, a space, numpy's array.
std::string python_print(const std::string& label, const arma::mat& values, int decimals) {
  return label + " " + attn::numpy::array_str(attn::numpy::round(values, decimals));
}

void bank_asks(attn::book::Chapter& ch) {
  //! [bank-asks]
  const attn::math::Attention bank = attn::math::raw_attention_for(kEmbeddings, kBank);
  // bank.scores  (1 × 3): e_bank · e_j for every token j
  // bank.weights (1 × 3): softmax of those scores
  // bank.output  (1 × 2): z_bank = Σ_j weight_j e_j
  const std::string scores_line = python_print("scores  ", bank.scores, 2);
  const std::string weights_line = python_print("weights ", bank.weights, 2);
  const std::string blend_line = python_print("z_bank  ", bank.output, 3);
  //! [bank-asks]
  fmt::print(ch.out, "\"bank\" asks every token of \"money bank river\"\n\n{}\n{}\n{}\n\n",
             scores_line, weights_line, blend_line);

  //! [check-bank]
  ch.checks.line("printed scores", kArticleScores, scores_line);
  ch.checks.line("printed weights", kArticleWeights, weights_line);
  ch.checks.line("printed z_bank", kArticleBlend, blend_line);
  ch.checks.numbers("scores", kTokens, kScores, 2, bank.scores);
  ch.checks.numbers("weights", kTokens, kWeights, 2, bank.weights);
  ch.checks.numbers("z_bank", {"x", "y"}, kBlend, 3, bank.output);
  //! [check-bank]

  //! [drift]
  const arma::rowvec e_bank = kEmbeddings.row(kBank);
  const double drift = arma::norm(bank.output - e_bank);  // |z_bank - e_bank|
  //! [drift]
  fmt::print(ch.out,
             "e_bank = [{:.1f}, {:.1f}] became z_bank = [{:.3f}, {:.3f}]: it moved {:.3f} "
             "toward money and river\n",
             e_bank(0), e_bank(1), bank.output(0), bank.output(1), drift);
  ch.checks.claim("z_bank drifts away from e_bank = [1.0, 0.0]",
                  attn::numpy::round(drift, 3) > 0.0);

  ch.plots.vectors({
      .name = "01-03-embeddings",
      .title = "money, bank, river and the blend z_bank",
      .arrows = {{.label = "money",
                  .tip = kEmbeddings.row(0),
                  .colour = attn::book::colour::purple},
                 {.label = "bank", .tip = e_bank, .colour = attn::book::colour::blue},
                 {.label = "river", .tip = kEmbeddings.row(2), .colour = attn::book::colour::green},
                 {.label = "z_bank", .tip = bank.output, .colour = attn::book::colour::red}},
  });
}

void everyone_asks(attn::book::Chapter& ch) {
  //! [everyone-asks]
  const attn::math::Attention all = attn::math::raw_self_attention(kEmbeddings);
  // all.scores  (3 × 3): S = E E^T, row i = token i asking
  // all.weights (3 × 3): softmax of each row
  // all.output  (3 × 2): Z = W E, one blend per token
  //! [everyone-asks]
  fmt::print(ch.out, "\nevery token asks: scores S = E E^T (rows = queries, cols = keys)\n{}",
             attn::book::grid_table(kTokens, kTokens, all.scores));
  fmt::print(ch.out, "\nweights, each row a softmax of its scores\n{}",
             attn::book::grid_table(kTokens, kTokens, all.weights));

  fmt::print(ch.out, "\nhow far each token's blend drifted from its own embedding\n");
  for (arma::uword i = 0; i < kTokens.size(); ++i)
    fmt::print(ch.out, "{:>10}  [{:.3f}, {:.3f}] -> [{:.3f}, {:.3f}]  moved {:.3f}\n", kTokens[i],
               kEmbeddings(i, 0), kEmbeddings(i, 1), all.output(i, 0), all.output(i, 1),
               arma::norm(all.output.row(i) - kEmbeddings.row(i)));

  ch.plots.heatmap({.name = "01-01-scores",
                    .title = "Raw scores S = E E^T",
                    .queries = kTokens,
                    .keys = kTokens,
                    .values = all.scores,
                    .scale = attn::book::ColourScale::scores});
  ch.plots.heatmap({.name = "01-02-weights",
                    .title = "Weights: softmax of each row of S",
                    .queries = kTokens,
                    .keys = kTokens,
                    .values = all.weights,
                    .scale = attn::book::ColourScale::weights});
}

void tell_story(attn::book::Chapter& ch) {
  bank_asks(ch);
  everyone_asks(ch);
}

}  // namespace

int main(int argc, char** argv) {
  const attn::book::ChapterInfo info{
      .executable = "ch01_raw_attention",
      .summary = "Chapter 01: one query against raw 2-D embeddings (money bank river)"};
  return attn::book::run_chapter(argc, argv, info, tell_story);
}
