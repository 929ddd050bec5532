// Chapter 10: every piece together. A small decoder-only transformer, trained here, learns a
// language in which "was/were" and "it/they" agree with a noun several words back, past another
// noun; a bigram model cannot. Its page: chapters/10_tiny_transformer/chapter.md.

#include "agreement.hpp"
#include <attn/book/chapter.hpp>
#include "language_model.hpp"
#include <attn/math/transformer.hpp>

#include <CLI/CLI.hpp>
#include <fmt/ostream.h>

#include <array>
#include <cmath>
#include <tuple>

namespace {
namespace ag = attn::agreement;

//! [settings]
// Every size and setting. Training always runs exactly kTraining.steps steps (no early
// stopping), so the held-out loss never decides when it ends.
const attn::TransformerConfig kModel{35 /*vocabulary*/, 16 /*d_model*/, 2 /*heads*/,
                                     1 /*block*/, 64 /*MLP width*/, 13 /*max_length*/, true};
const ag::TrainingSettings kTraining{800 /*steps*/, 32 /*sentences a step*/, 1e-2 /*Adam's η*/,
                                     50 /*steps between measurements*/, 1 /*weights' seed*/};
const std::size_t kTrainingSentences = 2000, kHeldOutSentences = 500;
const std::uint64_t kTrainingSeed = 1, kHeldOutSeed = 2;  // the sentences' seeds
//! [settings]

//! [article-numbers]
const double kLossNearLogV = 0.1;                   // the first loss, within this of ln 35 = 3.555
const double kCoinFlip = 0.5, kCoinFlipBand = 0.1;  // the bigram model's accuracy
const double kAtLeast = 0.95;                       // the trained model's held-out accuracy
//! [article-numbers]

void heads(attn::Chapter& ch, const attn::TransformerWeights& model, const std::vector<ag::Sentence>& held) {
  std::vector<attn::Series> bars;
  for (const bool pronoun : {false, true}) {
    const auto slot = [pronoun](const ag::Sentence& s) { return pronoun ? s.pronoun_slot : s.verb_slot; };
    fmt::print(ch.out, "\nWhere each head looks from {}\n(mean weight over the held-out set)\n"
               "                 subject  distractor  was/were    self\n",
               pronoun ? "\"so\", the word before it/they" : "the word before was/were");
    for (const ag::HeadFocus& f : ag::head_focus(model, held, slot)) {
      fmt::print(ch.out, "  layer {} head {}  {:>6.3f}  {:>10.3f}  {:>8}  {:>6.3f}\n", f.layer, f.head,
                 f.subject, f.distractor, pronoun ? fmt::format("{:.3f}", f.verb) : "-", f.self);
      // From before was/were the verb is still ahead, hidden by the causal mask: no bar (NaN).
      const double verb = pronoun ? f.verb : arma::datum::nan;
      bars.push_back({fmt::format("head {}, from {}", f.head, pronoun ? "\"so\"" : "before was/were"),
                      {f.subject, f.distractor, verb, f.self},
                      std::array{"#d95f02", "#fdae6b", "#1b9e77", "#a6dba0"}[2 * pronoun + f.head % 2]});
    }
  }
  ch.plots.bars({"10-04-head-focus", "Mean attention weight from the two agreement slots",
                 {"subject N1", "distractor N2", "was/were", "itself"}, bars, "mean weight"});
  ch.plots.heatmaps(ag::attention_figure("10-03-heads", model, held.front()));
}

// In this language the subject is always word 1, so the training data cannot tell "the first
// noun" from "whatever stands at position 1". The probe: every held-out sentence with one more
// "the" in front, which moves the subject to word 2, cut after it/they (a 13-word sentence
// would otherwise grow past the model's 13 positions).
std::vector<ag::Sentence> with_one_more_the(const std::vector<ag::Sentence>& sentences) {
  const arma::uvec the = {ag::word_id("the")};
  std::vector<ag::Sentence> shifted;
  for (const ag::Sentence& s : sentences) {
    ag::Sentence moved = s;
    moved.tokens = arma::join_cols(the, s.tokens.head(s.pronoun_slot + 2));
    moved.subject += 1;
    moved.distractor += 1;
    moved.verb_slot += 1;
    moved.pronoun_slot += 1;
    shifted.push_back(moved);
  }
  return shifted;
}

void position_probe(attn::Chapter& ch, const attn::TransformerWeights& model,
                    const std::vector<ag::Sentence>& held) {
  const std::vector<ag::Sentence> shifted = with_one_more_the(held);
  const ag::Accuracy accuracy = ag::evaluate(model, shifted).accuracy;
  const auto before_was = [](const ag::Sentence& s) { return s.verb_slot; };
  const ag::HeadFocus head1 = ag::head_focus(model, shifted, before_was).at(1);
  fmt::print(ch.out, "\nThe subject is always word 1. With one more \"the\" in front, the subject is word 2:\n"
             "  e.g. {} ...\n  agreement accuracy {:.3f} ({:.3f} where the nouns disagree); head 1, from "
             "the word\n  before was/were, puts {:.3f} on the subject and {:.3f} on the distractor\n",
             ag::text(shifted.front().tokens.head(shifted.front().verb_slot + 1)), accuracy.all,
             accuracy.disagreeing, head1.subject, head1.distractor);
}

void continuations(attn::Chapter& ch, const attn::TransformerWeights& model,
                   const std::vector<ag::Sentence>& held, const std::string& prompt) {
  fmt::print(ch.out, "\nGreedy continuations of held-out sentences, cut after the relative clause\n");
  bool all_agree = true;
  for (std::size_t k = 0; k < 4; ++k) {
    const arma::uvec cut = held[k].tokens.head(6), text = attn::greedy_continue(model, cut, 0);
    fmt::print(ch.out, "  {} | {}\n", ag::text(cut), ag::text(text.tail(text.n_elem - cut.n_elem)));
    all_agree &= ag::agrees(text, held[k].subject_plural);
  }
  ch.checks.claim("every continuation's was/were and it/they agree with its subject", all_agree);
  if (prompt.empty()) return;
  const arma::uvec words = ag::parse(prompt), text = attn::greedy_continue(model, words, 0);
  fmt::print(ch.out, "\nYour prompt: {} | ...\ncontinued:   {}\n", prompt, ag::text(text));
  const arma::uword context_length = model.config.max_length;  // the positions it has
  const bool finished = text(text.n_elem - 1) == ag::word_id(".");
  if (words.n_elem >= context_length)
    fmt::print(ch.out, "(nothing added: the model has {} positions, its context length, and your "
               "prompt\n already fills them with {} words)\n", context_length, words.n_elem);
  else if (!finished)
    fmt::print(ch.out, "(stopped after {} words, before a \".\": the model has {} positions, its "
               "context length,\n and cannot read a longer text)\n", text.n_elem, context_length);
}

void comparison(attn::Chapter& ch, const std::vector<ag::Sentence>& train,
                const std::vector<ag::Sentence>& held, const ag::Evaluation& model) {
  std::vector<ag::Run> runs;  // 3 variants × 3 seeds; the first is the model again
  for (const auto& [heads, positions] : {std::pair{2u, true}, {1u, true}, {2u, false}})
    for (const std::uint64_t seed : {1, 2, 3}) {
      ag::Run& r = runs.emplace_back(ag::Run{kModel, kTraining});  // measured at the end only
      std::tie(r.config.heads, r.config.positions, r.settings.seed, r.settings.evaluate_every) =
          std::tuple{heads, positions, seed, kTraining.steps};
    }
  const std::vector<ag::Evaluation> results = ag::train_side_by_side(runs, train, held);
  fmt::print(ch.out, "\nThe same training with one thing changed: held-out agreement accuracy\n(where the "
             "nouns disagree), three seeds each\n                          seed 1          seed 2          seed 3\n");
  for (std::size_t k = 0; k < results.size(); ++k)
    fmt::print(ch.out, "{}   {:.3f} ({:.3f}){}", k % 3 ? "" : std::array{"  2 heads (the model)  ", "  1 head "
               "of width 16   ", "  2 heads, no positions"}[k / 3], results[k].accuracy.all,
               results[k].accuracy.disagreeing, k % 3 == 2 ? "\n" : "");
  ch.checks.claim("trained again from seed 1, the model scores exactly the same",
                  results[0].accuracy.all == model.accuracy.all && results[0].loss == model.loss);
}

}  // namespace

int main(int argc, char** argv) {
  const attn::ChapterInfo info{"ch10_tiny_transformer", "Chapter 10: a small transformer, trained "
                               "here, gets agreement right where a bigram model guesses", false, "the target"};
  bool quick = false;
  std::string prompt;
  const auto options = [&](CLI::App& app) {
    app.add_flag("--quick", quick, "train the model only, not the nine runs of the comparison table");
    app.add_option("--prompt", prompt, "words to continue greedily, e.g. \"the mice that saw the cat\"")
        ->check([](const std::string& words) {  // an unknown word is refused before training
          try { ag::parse(words); } catch (const std::invalid_argument& e) { return std::string(e.what()); }
          return std::string(); });
  };
  return attn::run_chapter(argc, argv, info, options, [&](attn::Chapter& ch) {
    const std::vector<ag::Sentence> train = ag::generate(kTrainingSeed, kTrainingSentences);
    const std::vector<ag::Sentence> held = ag::generate(kHeldOutSeed, kHeldOutSentences);
    fmt::print(ch.out, "The language: {} words; {} training sentences (seed {}), {} held out\n(seed {}), {} "
               "of which are also training sentences. The first three:\n", ag::vocabulary().size(),
               train.size(), kTrainingSeed, held.size(), kHeldOutSeed, ag::repeated(train, held));
    for (std::size_t k = 0; k < 3; ++k) fmt::print(ch.out, "  {}\n", ag::text(train[k].tokens));
    const arma::mat counts = ag::bigram_counts(train);
    const ag::Accuracy bigram = ag::accuracy(held, ag::bigram_scores(counts, held));
    fmt::print(ch.out, "\nA bigram model counted from the training set: held-out loss {:.3f};\nagreement "
               "accuracy {:.3f} ({:.3f} where the nouns disagree), over {} slots\n",
               ag::bigram_loss(counts, held), bigram.all, bigram.disagreeing, bigram.slots);
    ch.checks.approximately("bigram agreement accuracy, a coin flip", kCoinFlip, kCoinFlipBand, bigram.all);
    fmt::print(ch.out, "\nThe transformer: {} block, d_model {}, {} heads, MLP width {}: {} parameters.\n{} Adam "
               "steps of {} sentences, learning rate {}\n", kModel.layers, kModel.d_model, kModel.heads,
               kModel.d_ff, attn::parameter_count(kModel), kTraining.steps, kTraining.batch_sentences,
               kTraining.learning_rate);
    const ag::Trained t =
        ag::train(kModel, kTraining, train, held, ag::progress_line(ch.log, kTraining.steps));
    // A measurement, not a check: it depends on the machine, so it goes to stderr and never
    // fails the chapter (a Raspberry Pi or an emulated arm64 system is slower, and still right).
    fmt::print(ch.log, "training took {:.1f} s (measured; it varies with the machine)\n", t.seconds);
    fmt::print(ch.out, "\nThe loss of the grammar itself on the held-out set, the best a model can expect: {:.4f}\n\n"
               "  step   training loss   held-out loss   agreement accuracy (nouns disagree)\n", ag::loss_floor(held));
    for (arma::uword i = 0; i < t.curves.steps.n_elem; i += 2)
      fmt::print(ch.out, "  {:>4.0f}   {:>13.4f}   {:>13.4f}   {:>18.3f} ({:.3f})\n", t.curves.steps(i),
                 t.curves.training_loss(i), t.curves.heldout_loss(i), t.curves.accuracy(i), t.curves.disagreeing(i));
    fmt::print(ch.out, "After training: held-out loss {:.4f}; agreement accuracy {:.3f}\n({:.3f} where the "
               "nouns disagree)\n", t.after.loss, t.after.accuracy.all, t.after.accuracy.disagreeing);
    ch.checks.approximately("loss before training, near ln 35", std::log(35.0), kLossNearLogV, t.before.loss);
    ch.checks.claim(fmt::format("held-out agreement accuracy at least {:.2f}", kAtLeast), t.after.accuracy.all >= kAtLeast);
    ch.checks.claim(fmt::format("and where the nouns disagree, at least {:.2f}", kAtLeast), t.after.accuracy.disagreeing >= kAtLeast);
    ch.plots.lines({"10-01-loss", "Next-word loss while training", "Adam step", "cross-entropy (nats per word)",
                    t.curves.steps, {{"training batches", t.curves.training_loss, "#d95f02"},
                                     {"held-out sentences", t.curves.heldout_loss, "#1b9e77"}}, false, false, "top right"});
    ch.plots.lines({"10-02-accuracy", "Agreement accuracy on the held-out sentences", "Adam step", "accuracy",
                    t.curves.steps, {{"every slot", t.curves.accuracy, "#1b9e77"},
                                     {"nouns that disagree", t.curves.disagreeing, "#7570b3"},
                                     {"bigram model", arma::rowvec(t.curves.steps.n_elem).fill(bigram.all), "#d95f02", true}},
                    false, false, "center right"});
    heads(ch, t.model, held);
    position_probe(ch, t.model, held);
    continuations(ch, t.model, held, prompt);
    if (!quick) comparison(ch, train, held, t.after);
  });
}
