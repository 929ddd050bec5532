// Chapter 06: random W_Q and W_K give noise; trained ones give meaning. Both are trained with Adam
// on sentences in which "it" refers to an animal (sentences.cpp), then tested on a held-out one.
// The book's page for this chapter is chapter.md beside this file.

#include "fit.hpp"
#include "sentences.hpp"

#include <attn/book/chapter.hpp>
#include <attn/book/grid_text.hpp>
#include <attn/book/palette.hpp>
#include <attn/math/attention.hpp>
#include <attn/math/softmax.hpp>
#include <attn/numpy/numpy_random.hpp>

#include <fmt/ostream.h>

#include <string>
#include <vector>

namespace {

//! [setup]
constexpr std::uint64_t kSeed = 6;      // numpy default_rng seed for noise and initial weights
constexpr arma::uword kModelWidth = 8;  // d_model
constexpr arma::uword kKeyWidth = 4;    // d_k
constexpr double kNoise = 0.3;          // embedding = unit vector of its kind + 0.3 N(0, 1)
constexpr double kInitialScale = 0.1;   // W_Q, W_K start as 0.1 N(0, 1): near-uniform attention
const attn::ch06::FitSettings kFit{
    .weight_decay = 0.25,   // λ
    .learning_rate = 0.05,  // Adam's η
    .stop_gradient = 1e-6,  // stop when |∇L| is below this...
    .max_steps = 5000,      // ...or after this many steps at most
};
const std::vector<double> kDecays = {0.05, 0.1, 0.25, 0.4};  // λ values compared at the end
//! [setup]

//! [article-numbers]
// Article 004 on a trained head: "it" puts about 0.60 of its weight on "cat" ("about": ±kAbout)
// and spreads the rest thinly (no other token above kThinly); an untrained head does not do
// this (no weight in the "it" row above kUntrained before training).
constexpr double kArticleItCat = 0.60;
constexpr double kAbout = 0.05;
constexpr double kThinly = 0.15;
constexpr double kUntrained = 0.35;
//! [article-numbers]

// A sentence's scaled scores Q K^T / √d_k (n × n), and its weights, under W_Q and W_K.
arma::mat scores_of(const attn::math::AttentionExample& e, const arma::mat& W_Q,
                    const arma::mat& W_K) {
  return attn::math::attention_scores(e.X * W_Q, e.X * W_K, attn::math::score_scale(kKeyWidth));
}
arma::mat weights_of(const attn::math::AttentionExample& e, const arma::mat& W_Q,
                     const arma::mat& W_K) {
  return attn::math::softmax_rows(scores_of(e, W_Q, W_K));
}

// The largest weight of a row once entry `skip` (the target) is left out.
double largest_besides(arma::rowvec row, arma::uword skip) {
  row(skip) = 0.0;
  return row.max();
}

// Everything the story works on: the training sentences, the test sentence, the start.
struct Setup {
  attn::ch06::Sentences sentences;
  arma::mat W_Q0, W_K0;  // (d_model × d_k) each, before training
};

Setup set_up(attn::book::Chapter& ch) {
  attn::numpy::Generator rng = attn::numpy::default_rng(kSeed);
  Setup s;
  s.sentences = attn::ch06::make_sentences(rng, kModelWidth, kNoise);  // drawn first,
  s.W_Q0 = rng.normal(kModelWidth, kKeyWidth) * kInitialScale;         // then W_Q0,
  s.W_K0 = rng.normal(kModelWidth, kKeyWidth) * kInitialScale;         // then W_K0
  fmt::print(ch.out,
             "Training one attention head so that \"it\" finds its animal\n\n"
             "training sentences (\"it\" always refers to the animal):\n");
  for (const std::string& sentence : attn::ch06::kTraining)
    fmt::print(ch.out, "  {}\n", sentence);
  fmt::print(ch.out,
             "held-out test sentence (\"cat\" and \"milk\" never occur in training):\n  {}"
             "\n\nloss: mean over sentences of -log weight(it -> animal) + λ/2 (|W_Q|² + "
             "|W_K|²), λ = {}\nAdam, learning rate {}; stop when |∇L| < {:.0e} or after {} "
             "steps\n\n",
             attn::ch06::kTest, kFit.weight_decay, kFit.learning_rate, kFit.stop_gradient,
             kFit.max_steps);
  return s;
}

attn::ch06::HeadFit train(attn::book::Chapter& ch, const Setup& s) {
  //! [train]
  const attn::ch06::HeadFit fit = attn::ch06::fit_head(s.sentences.training, s.W_Q0, s.W_K0, kFit);
  //! [train]
  fmt::print(ch.out, "step    loss\n");
  for (std::size_t step : {0, 10, 20, 30, 40, 50, 100, 150, 200})
    if (step < fit.losses.size())
      fmt::print(ch.out, "{:4}  {:.4f}\n", step, fit.losses[step]);
  // The step the rule fires at can differ by one between CPUs' last bits: it goes to the log.
  fmt::print(ch.log, "training stopped after {} steps\n", fit.losses.size() - 1);
  fmt::print(ch.out, "final loss {:.4f}; stopped because |∇L| < {:.0e}: {}\n", fit.losses.back(),
             kFit.stop_gradient, fit.converged ? "yes" : "no");
  return fit;
}

void draw(attn::book::Chapter& ch, const attn::math::AttentionExample& test,
          const attn::ch06::HeadFit& fit, const arma::mat& before, const arma::mat& after) {
  const attn::book::Heatmap before_panel{
      .title = "before training", .queries = test.tokens, .keys = test.tokens, .values = before};
  const attn::book::Heatmap after_panel{
      .title = "after training", .queries = test.tokens, .keys = test.tokens, .values = after};
  ch.plots.heatmaps({.name = "06-01-weights",
                     .title = "The test sentence before (left) and after (right) training",
                     .panels = {before_panel, after_panel}});

  const arma::rowvec steps = arma::regspace<arma::rowvec>(0, double(fit.losses.size() - 1));
  const attn::book::Series loss{
      .label = "loss", .y = arma::rowvec(fit.losses), .colour = attn::book::colour::red};
  ch.plots.lines({.name = "06-02-loss",
                  .title = "Training loss",
                  .x_label = "step",
                  .y_label = "loss",
                  .x = steps,
                  .series = {loss},
                  .key_at = "top right"});

  const arma::uword it = test.query;
  const attn::book::Series it_before{
      .label = "before", .y = before.row(it), .colour = attn::book::colour::grey};
  const attn::book::Series it_after{
      .label = "after", .y = after.row(it), .colour = attn::book::colour::blue};
  ch.plots.bars({.name = "06-03-it-row",
                 .title = "Where \"it\" looks, before and after training",
                 .labels = test.tokens,
                 .series = {it_before, it_after},
                 .value_label = "weight"});
}

void before_and_after(attn::book::Chapter& ch, const Setup& s, const attn::ch06::HeadFit& fit) {
  const attn::math::AttentionExample& test = s.sentences.test;
  //! [before-after]
  const arma::mat before = weights_of(test, s.W_Q0, s.W_K0);   // (9 × 9)
  const arma::mat after = weights_of(test, fit.W_Q, fit.W_K);  // (9 × 9)
  const arma::uword it = test.query;
  const arma::uword cat = test.target;
  //! [before-after]
  fmt::print(ch.out,
             "\nit -> cat before training: {:.2f}\nit -> cat after training: {:.2f}\n"
             "\nweights before training (rows = queries, cols = keys)\n{}"
             "\nweights after training\n{}",
             before(it, cat), after(it, cat),
             attn::book::grid_table(test.tokens, test.tokens, before),
             attn::book::grid_table(test.tokens, test.tokens, after));
  fmt::print(ch.out, "\nthe \"it\" row's scores q(it)·k(j)/√d_k, before and after\n{}",
             attn::book::grid_table({"before", "after"}, test.tokens,
                                    arma::join_cols(scores_of(test, s.W_Q0, s.W_K0).row(it),
                                                    scores_of(test, fit.W_Q, fit.W_K).row(it))));
  //! [checks]
  ch.checks.claim(fmt::format("an untrained head does not resolve \"it\": before training no "
                              "weight in its row is above {}",
                              kUntrained),
                  before.row(it).max() <= kUntrained);
  ch.checks.claim("after training \"it\" resolves to \"cat\": the largest weight in its row",
                  after.row(it).index_max() == cat);
  // λ was chosen so that this lands near the article's figure: the check shows the book's head
  // matches, not that training alone gives 0.60 (the λ table below shows how it moves).
  ch.checks.approximately("it -> cat after training (decay chosen to match)", kArticleItCat, kAbout,
                          after(it, cat));
  ch.checks.claim(fmt::format("the rest spreads thinly: no other token gets above {}", kThinly),
                  largest_besides(after.row(it), cat) <= kThinly);
  //! [checks]
  draw(ch, test, fit, before, after);
}

void how_sure(attn::book::Chapter& ch, const Setup& s) {
  fmt::print(ch.out,
             "\nλ decides how sure the trained head becomes (same data, same start):\n"
             "     λ   it -> cat   largest other weight\n");
  for (double decay : kDecays) {
    attn::ch06::FitSettings settings = kFit;
    settings.weight_decay = decay;
    const attn::ch06::HeadFit fit =
        attn::ch06::fit_head(s.sentences.training, s.W_Q0, s.W_K0, settings);
    const attn::math::AttentionExample& test = s.sentences.test;
    const arma::rowvec row = weights_of(test, fit.W_Q, fit.W_K).row(test.query);
    fmt::print(ch.out, "{:6.2f}  {:10.2f}  {:21.2f}\n", decay, row(test.target),
               largest_besides(row, test.target));
  }
}

void tell_story(attn::book::Chapter& ch) {
  const Setup s = set_up(ch);
  const attn::ch06::HeadFit fit = train(ch, s);
  before_and_after(ch, s, fit);
  how_sure(ch, s);
}

}  // namespace

int main(int argc, char** argv) {
  const attn::book::ChapterInfo info{
      .executable = "ch06_trained_head",
      .summary = "Chapter 06: train one attention head until \"it\" attends to \"cat\""};
  return attn::book::run_chapter(argc, argv, info, tell_story);
}
