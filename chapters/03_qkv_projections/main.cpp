// Chapter 03: the Nimbus thread through queries, keys and values.
//
// Each token is projected three ways before attention: Q = X W_Q (what it looks for),
// K = X W_K (what it offers to be matched on), V = X W_V (what it hands over). Pick a token
// with --token and watch its whole equation run, numbers filled in; the book's page for this
// chapter (chapters/03_qkv_projections/chapter.md) lets its reader do the same.

#include "walkthrough.hpp"

#include <02_nimbus_raw/nimbus_thread.hpp>
#include <attn/book/chapter.hpp>
#include <attn/book/grid_text.hpp>
#include <attn/book/palette.hpp>
#include <attn/math/attention.hpp>

#include <fmt/ostream.h>
#include <CLI/CLI.hpp>

#include <string>

namespace {

//! [article-numbers]
// What Module 2.1 shows for the token "export", its two-line score joined into one line.
const std::string kModuleQuery = "Q(export) = [0.35, 0.22]";
const std::string kModuleScore = "Q(export) · K(fail) / √2 = 0.36";
const std::string kModuleSum = "Σ weights = 1.00";
const std::vector<double> kQueryExport = {0.35, 0.22};  // to 2 decimals
const double kScoreExportFail = 0.36;                   // to 2 decimals
//! [article-numbers]

// Everything the chapter computes once: the sentence, its projections, both attentions.
struct Run {
  attn::ch02::NimbusThread thread;
  attn::math::QKV qkv;                       // Q, K, V: (6 × 2) each
  attn::math::Attention raw;                 // chapter 02's attention, for comparison
  attn::math::Attention projected;           // softmax(Q K^T / √2) V
  std::vector<attn::ch03::TokenWalk> walks;  // every token's equation, its numbers as printed
};

Run compute() {
  Run r;
  r.thread = attn::ch02::nimbus_thread();
  //! [projections]
  r.qkv = attn::math::project(r.thread.embeddings, r.thread.projections);
  r.projected = attn::math::scaled_dot_product_attention(r.qkv.Q, r.qkv.K, r.qkv.V);
  //! [projections]
  r.raw = attn::math::raw_self_attention(r.thread.embeddings);
  r.walks = attn::ch03::token_walks(r.thread.tokens, r.thread.embeddings, r.thread.projections,
                                    r.projected);
  return r;
}

// The three lines the module shows for a token, its strongest partner as the example key.
struct ModuleLines {
  std::string query, score, sum;
};

ModuleLines module_lines(const Run& r, arma::uword t) {
  const attn::ch03::TokenWalk& w = r.walks[t];
  const attn::ch03::WalkKey& partner = w.keys[attn::math::strongest_other(r.projected.weights, t)];
  return {fmt::format("Q({}) = [{}, {}]", w.token, w.q[0], w.q[1]),
          fmt::format("Q({}) · K({}) / {} = {}", w.token, partner.token, w.root, partner.score),
          fmt::format("Σ weights = {}", w.weight_sum)};
}

void step_through(attn::book::Chapter& ch, const Run& r, arma::uword t) {
  const ModuleLines lines = module_lines(r, t);
  fmt::print(ch.out, "The equation for \"{}\"\n\n{}\n{}\n{}\n\n", r.thread.tokens[t], lines.query,
             lines.score, lines.sum);
  ch.out << attn::ch03::walk_text(r.walks[t]);
}

void show_grids(attn::book::Chapter& ch, const Run& r) {
  const auto& tokens = r.thread.tokens;
  fmt::print(ch.out, "\nprojected scores Q K^T / {} (rows = queries, cols = keys)\n{}",
             r.walks[0].root, attn::book::grid_table(tokens, tokens, r.projected.scores));
  fmt::print(ch.out, "\nprojected weights\n{}",
             attn::book::grid_table(tokens, tokens, r.projected.weights));
  fmt::print(ch.out, "\nlargest |S - S^T|: raw {:.2f}, projected {:.2f}\n",
             arma::abs(r.raw.scores - r.raw.scores.t()).max(),
             arma::abs(r.projected.scores - r.projected.scores.t()).max());
}

void check_module(attn::book::Chapter& ch, const Run& r) {
  //! [check-module]
  const auto& tokens = r.thread.tokens;
  const arma::uword export_row = attn::book::token_index(tokens, "export");
  const arma::uword fail_row = attn::book::token_index(tokens, "fail");
  const ModuleLines lines = module_lines(r, export_row);
  ch.checks.line("printed Q(export)", kModuleQuery, lines.query);
  ch.checks.line("printed score", kModuleScore, lines.score);
  ch.checks.line("printed sum", kModuleSum, lines.sum);
  ch.checks.numbers("Q(export)", {"0", "1"}, kQueryExport, 2, r.qkv.Q.row(export_row));
  ch.checks.number("Q(export) · K(fail) / √2", kScoreExportFail, 2,
                   r.projected.scores(export_row, fail_row));
  ch.checks.claim("export still pulls toward fail (its strongest other token)",
                  attn::math::strongest_other(r.projected.weights, export_row) == fail_row);
  ch.checks.claim("fail still pulls toward export (its strongest other token)",
                  attn::math::strongest_other(r.projected.weights, fail_row) == export_row);
  ch.checks.claim("the projected score grid is no longer symmetric",
                  !arma::approx_equal(r.projected.scores, r.projected.scores.t(), "absdiff", 1e-3));
  //! [check-module]
}

void draw(attn::book::Chapter& ch, const Run& r, arma::uword t) {
  const auto& tokens = r.thread.tokens;
  // One panel of a raw-against-projected pair.
  const auto panel = [&](const std::string& title, const arma::mat& grid,
                         attn::book::ColourScale scale) {
    return attn::book::Heatmap{
        .title = title, .queries = tokens, .keys = tokens, .values = grid, .scale = scale};
  };
  ch.plots.heatmaps({
      .name = "03-01-scores",
      .title = "Scores: raw E E^T (left) vs projected Q K^T / √2 (right)",
      .panels = {panel("raw", r.raw.scores, attn::book::ColourScale::scores),
                 panel("projected", r.projected.scores, attn::book::ColourScale::scores)},
  });
  ch.plots.heatmaps({
      .name = "03-02-weights",
      .title = "Weights: raw (left) vs projected (right)",
      .panels = {panel("raw", r.raw.weights, attn::book::ColourScale::weights),
                 panel("projected", r.projected.weights, attn::book::ColourScale::weights)},
  });

  const attn::book::Series weights_of_t{
      .label = "weight", .y = r.projected.weights.row(t), .colour = attn::book::colour::mid_blue};
  ch.plots.bars({.name = fmt::format("03-03-{}-weights", tokens[t]),
                 .title = fmt::format("How much \"{}\" takes from each token", tokens[t]),
                 .labels = tokens,
                 .series = {weights_of_t},
                 .value_label = "weight"});

  // The values in grey, and the output they average to in red.
  std::vector<attn::book::Arrow> arrows;
  for (arma::uword j = 0; j < tokens.size(); ++j) {
    arrows.push_back({.label = "V(" + tokens[j] + ")",
                      .tip = r.qkv.V.row(j),
                      .colour = attn::book::colour::grey});
  }
  arrows.push_back({.label = "out(" + tokens[t] + ")",
                    .tip = r.projected.output.row(t),
                    .colour = attn::book::colour::red});
  ch.plots.vectors({.name = fmt::format("03-04-{}-output", tokens[t]),
                    .title = fmt::format("out({}) is a weighted average of the values", tokens[t]),
                    .arrows = arrows});
  ch.plots.page_data(
      "03-05-token-walks.js",  // the book's page walks every token with these
      attn::ch03::walk_page_data(r.thread.sentence, r.walks, "ch03_qkv_projections"));
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> tokens = attn::ch02::nimbus_thread().tokens;
  std::string token = "export";
  const auto options = [&](CLI::App& app) {
    app.add_option("--token", token, "The token whose equation is walked through")
        ->check(CLI::IsMember(tokens))
        ->type_name("NAME")
        ->capture_default_str();
  };
  const auto story = [&](attn::book::Chapter& ch) {
    const Run r = compute();
    const arma::uword t = attn::book::token_index(tokens, token);
    step_through(ch, r, t);
    show_grids(ch, r);
    check_module(ch, r);
    draw(ch, r, t);
  };
  const attn::book::ChapterInfo info{
      .executable = "ch03_qkv_projections",
      .summary = "Chapter 03: Q, K, V projections on the Nimbus question, one token step by step"};
  return attn::book::run_chapter(argc, argv, info, options, story);
}
