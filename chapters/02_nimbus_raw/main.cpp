// Chapter 02: the Nimbus thread on raw embeddings.
//
// Every token of "Why did my Nimbus export fail?" uses its own embedding to ask and to answer,
// as Module 1.3 did. Because one vector does both jobs, the score grid is symmetric.
// The book's page for this chapter is chapters/02_nimbus_raw/chapter.md.

#include "nimbus_thread.hpp"

#include <attn/book/chapter.hpp>
#include <attn/book/grid_text.hpp>
#include <attn/book/palette.hpp>
#include <attn/math/attention.hpp>

#include <fmt/ostream.h>

namespace {

//! [article-numbers]
// Module 1.3, which this chapter retells, prints no numbers we have; Module 2.1 says that on
// raw embeddings export and fail pull toward each other. That claim is checked below.
//! [article-numbers]

void tell_story(attn::book::Chapter& ch) {
  //! [thread]
  const attn::ch02::NimbusThread thread = attn::ch02::nimbus_thread();
  const std::vector<std::string>& tokens = thread.tokens;
  const arma::mat& E = thread.embeddings;  // (6 × 2)
  //! [thread]
  fmt::print(ch.out, "\"{}\" on raw 2-D embeddings\n\n", thread.sentence);
  for (arma::uword i = 0; i < tokens.size(); ++i)
    fmt::print(ch.out, "{:>10}  {}\n", tokens[i], attn::book::vector_text(E.row(i), 1));

  //! [raw-attention]
  const attn::math::Attention raw = attn::math::raw_self_attention(E);
  // raw.scores  (6 × 6): S = E E^T, each token's embedding asks and answers
  // raw.weights (6 × 6): softmax of each row
  //! [raw-attention]
  fmt::print(ch.out, "\nscores S = E E^T (rows = queries, cols = keys)\n{}",
             attn::book::grid_table(tokens, tokens, raw.scores));
  fmt::print(ch.out, "\nweights, each row a softmax of its scores\n{}",
             attn::book::grid_table(tokens, tokens, raw.weights));

  //! [claims]
  const arma::uword export_row = attn::book::token_index(tokens, "export");
  const arma::uword fail_row = attn::book::token_index(tokens, "fail");
  const arma::uword export_partner = attn::math::strongest_other(raw.weights, export_row);
  const arma::uword fail_partner = attn::math::strongest_other(raw.weights, fail_row);
  //! [claims]
  fmt::print(ch.out, "\nexport leans most on {} ({:.2f}); fail leans most on {} ({:.2f})\n",
             tokens[export_partner], raw.weights(export_row, export_partner), tokens[fail_partner],
             raw.weights(fail_row, fail_partner));
  fmt::print(ch.out, "largest |S - S^T| = {:.2f}: one vector asks and answers, so S is symmetric\n",
             arma::abs(raw.scores - raw.scores.t()).max());

  //! [check-claims]
  ch.checks.claim("export's strongest other token is fail", export_partner == fail_row);
  ch.checks.claim("fail's strongest other token is export", fail_partner == export_row);
  //! [check-claims]

  ch.plots.heatmap({.name = "02-01-scores",
                    .title = "Raw scores S = E E^T: symmetric",
                    .queries = tokens,
                    .keys = tokens,
                    .values = raw.scores,
                    .scale = attn::book::ColourScale::scores});
  ch.plots.heatmap({.name = "02-02-weights",
                    .title = "Raw weights: softmax of each row",
                    .queries = tokens,
                    .keys = tokens,
                    .values = raw.weights,
                    .scale = attn::book::ColourScale::weights});

  // The pair the chapter is about in red, the other tokens in grey.
  std::vector<attn::book::Arrow> arrows;
  for (arma::uword i = 0; i < tokens.size(); ++i) {
    const bool in_the_pair = i == export_row || i == fail_row;
    arrows.push_back(
        {.label = tokens[i],
         .tip = E.row(i),
         .colour = in_the_pair ? attn::book::colour::red : attn::book::colour::dark_grey});
  }
  ch.plots.vectors(
      {.name = "02-03-embeddings", .title = "The Nimbus tokens' raw embeddings", .arrows = arrows});
}

}  // namespace

int main(int argc, char** argv) {
  const attn::book::ChapterInfo info{
      .executable = "ch02_nimbus_raw",
      .summary = "Chapter 02: raw-embedding self-attention on the Nimbus question"};
  return attn::book::run_chapter(argc, argv, info, tell_story);
}
