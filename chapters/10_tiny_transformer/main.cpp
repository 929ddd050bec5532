// Chapter 10: every piece together. A small decoder-only transformer, trained here, learns a
// language in which "was/were" and "it/they" agree with a noun several words back, past another
// noun; a bigram model cannot. Its page: chapters/10_tiny_transformer/chapter.md.

#include "agreement.hpp"
#include "language_model.hpp"

#include <attn/book/chapter.hpp>
#include <attn/book/palette.hpp>
#include <attn/gpt/decoder.hpp>
#include <attn/gpt/model.hpp>
#include <attn/gpt/trainer.hpp>

#include <fmt/ostream.h>
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace {
namespace ch10 = attn::ch10;
namespace colour = attn::book::colour;

//! [settings]
// Every size and setting. Training always runs exactly kTraining.steps steps (no early
// stopping), so the held-out loss never decides when it ends.
const attn::gpt::TransformerConfig kModel{
    .vocabulary = 35,
    .d_model = 16,
    .heads = 2,
    .layers = 1,
    .d_ff = 64,        // the MLP's hidden width
    .max_length = 13,  // the longest sentence
    .positions = attn::gpt::Positions::sinusoidal,
};
const ch10::TrainingSettings kTraining{
    .steps = 800,
    .batch_sentences = 32,
    .learning_rate = 1e-2,  // Adam's η
    .evaluate_every = 50,   // steps between two measurements on the held-out set
    .seed = 1,              // the initial weights' seed
};
const std::size_t kTrainingSentences = 2000;
const std::size_t kHeldOutSentences = 500;
const std::uint64_t kTrainingSeed = 1;  // the training sentences' seed
const std::uint64_t kHeldOutSeed = 2;   // the held-out sentences' seed
//! [settings]

//! [article-numbers]
const double kLossNearLogV = 0.1;  // the first loss, within this of ln 35 = 3.555
const double kCoinFlip = 0.5;      // the bigram model's accuracy...
const double kCoinFlipBand = 0.1;  // ...within this
const double kAtLeast = 0.95;      // the trained model's held-out accuracy
//! [article-numbers]

// What the chapter prints.
const std::size_t kSentencesShown = 3;  // of the training set
const arma::uword kTableEvery = 2;      // every second measurement goes into the table
const std::size_t kContinuations = 4;   // held-out sentences continued greedily
const arma::uword kUpToTheClause = 6;   // "the dogs that the horses heard": six words
const std::vector<std::uint64_t> kSeeds = {1, 2, 3};  // of the comparison's runs

// One of the two query rows that agreement depends on: the word before was/were, and "so",
// the word before it/they.
struct AgreementSlot {
  std::string heading;  // where the query stands, in the table's heading
  std::string legend;   // the same, in the figure's key
  arma::uword (*row)(const ch10::Sentence&);
  bool verb_visible;  // whether was/were is already behind the query (the mask is causal)
  const char* first_head_colour;
  const char* second_head_colour;
};

const AgreementSlot kBeforeVerb{.heading = "the word before was/were",
                                .legend = "before was/were",
                                .row = [](const ch10::Sentence& s) { return s.verb_slot; },
                                .verb_visible = false,
                                .first_head_colour = colour::dark_orange,
                                .second_head_colour = colour::light_orange};

const AgreementSlot kBeforePronoun{.heading = "\"so\", the word before it/they",
                                   .legend = "\"so\"",
                                   .row = [](const ch10::Sentence& s) { return s.pronoun_slot; },
                                   .verb_visible = true,
                                   .first_head_colour = colour::teal,
                                   .second_head_colour = colour::light_green};

// One row of the comparison: the model with one thing changed.
struct Variant {
  std::string label;
  arma::uword heads;
  attn::gpt::Positions positions;
};

const std::vector<Variant> kVariants = {
    {.label = "2 heads (the model)", .heads = 2, .positions = attn::gpt::Positions::sinusoidal},
    {.label = "1 head of width 16", .heads = 1, .positions = attn::gpt::Positions::sinusoidal},
    {.label = "2 heads, no positions", .heads = 2, .positions = attn::gpt::Positions::none},
};

void the_language(attn::book::Chapter& ch, const std::vector<ch10::Sentence>& train,
                  const std::vector<ch10::Sentence>& held) {
  fmt::print(ch.out, "The language: {} words; {} training sentences (seed {}), {} held out\n",
             ch10::vocabulary().size(), train.size(), kTrainingSeed, held.size());
  fmt::print(ch.out, "(seed {}), {} of which are also training sentences. The first three:\n",
             kHeldOutSeed, ch10::repeated(train, held));
  for (std::size_t k = 0; k < kSentencesShown; ++k) {
    fmt::print(ch.out, "  {}\n", ch10::text(train[k].tokens));
  }
}

// The baseline: the next word from the current word alone, counted from the training set.
ch10::Accuracy bigram_baseline(attn::book::Chapter& ch, const std::vector<ch10::Sentence>& train,
                               const std::vector<ch10::Sentence>& held) {
  const arma::mat counts = ch10::bigram_counts(train);
  const ch10::Accuracy bigram = ch10::accuracy(held, ch10::bigram_scores(counts, held));
  fmt::print(ch.out, "\nA bigram model counted from the training set: held-out loss {:.3f};\n",
             ch10::bigram_loss(counts, held));
  fmt::print(ch.out, "agreement accuracy {:.3f} ({:.3f} where the nouns disagree), over {} slots\n",
             bigram.all, bigram.disagreeing, bigram.slots);
  ch.checks.approximately("bigram agreement accuracy, a coin flip", kCoinFlip, kCoinFlipBand,
                          bigram.all);
  return bigram;
}

ch10::Trained train_the_model(attn::book::Chapter& ch, const std::vector<ch10::Sentence>& train,
                              const std::vector<ch10::Sentence>& held) {
  fmt::print(
      ch.out, "\nThe transformer: {} block, d_model {}, {} heads, MLP width {}: {} parameters.\n",
      kModel.layers, kModel.d_model, kModel.heads, kModel.d_ff, attn::gpt::parameter_count(kModel));
  fmt::print(ch.out, "{} Adam steps of {} sentences, learning rate {}\n", kTraining.steps,
             kTraining.batch_sentences, kTraining.learning_rate);
  const attn::gpt::Progress progress = attn::gpt::progress_line(ch.log);
  const ch10::Trained trained = ch10::train(kModel, kTraining, train, held, progress);
  // A measurement, not a check: it depends on the machine, so it goes to stderr and never
  // fails the chapter (a Raspberry Pi or an emulated arm64 system is slower, and still right).
  fmt::print(ch.log, "training took {:.1f} s (measured; it varies with the machine)\n",
             trained.seconds);
  return trained;
}

void training_table(attn::book::Chapter& ch, const ch10::Trained& trained,
                    const std::vector<ch10::Sentence>& held) {
  const ch10::Curves& curves = trained.curves;
  fmt::print(ch.out,
             "\nThe loss of the grammar itself on the held-out set, the best a model can expect: "
             "{:.4f}\n\n",
             ch10::loss_floor(held));
  fmt::print(ch.out,
             "  step   training loss   held-out loss   agreement accuracy (nouns disagree)\n");
  for (arma::uword i = 0; i < curves.steps.n_elem; i += kTableEvery) {
    fmt::print(ch.out, "  {:>4.0f}   {:>13.4f}   {:>13.4f}   {:>18.3f} ({:.3f})\n", curves.steps(i),
               curves.training_loss(i), curves.heldout_loss(i), curves.accuracy(i),
               curves.disagreeing(i));
  }
  fmt::print(ch.out, "After training: held-out loss {:.4f}; agreement accuracy {:.3f}\n",
             trained.after.loss, trained.after.accuracy.all);
  fmt::print(ch.out, "({:.3f} where the nouns disagree)\n", trained.after.accuracy.disagreeing);
}

void check_training(attn::book::Chapter& ch, const ch10::Trained& trained) {
  const double uniform_loss = std::log(static_cast<double>(kModel.vocabulary));
  ch.checks.approximately("loss before training, near ln 35", uniform_loss, kLossNearLogV,
                          trained.before.loss);
  ch.checks.claim(fmt::format("held-out agreement accuracy at least {:.2f}", kAtLeast),
                  trained.after.accuracy.all >= kAtLeast);
  ch.checks.claim(fmt::format("and where the nouns disagree, at least {:.2f}", kAtLeast),
                  trained.after.accuracy.disagreeing >= kAtLeast);
}

void learning_curves(attn::book::Chapter& ch, const ch10::Curves& curves,
                     const ch10::Accuracy& bigram) {
  const attn::book::Series training_loss{
      .label = "training batches", .y = curves.training_loss, .colour = colour::dark_orange};
  const attn::book::Series heldout_loss{
      .label = "held-out sentences", .y = curves.heldout_loss, .colour = colour::teal};
  ch.plots.lines({.name = "10-01-loss",
                  .title = "Next-word loss while training",
                  .x_label = "Adam step",
                  .y_label = "cross-entropy (nats per word)",
                  .x = curves.steps,
                  .series = {training_loss, heldout_loss},
                  .key_at = "top right"});

  const attn::book::Series every_slot{
      .label = "every slot", .y = curves.accuracy, .colour = colour::teal};
  const attn::book::Series nouns_disagree{
      .label = "nouns that disagree", .y = curves.disagreeing, .colour = colour::violet};
  const attn::book::Series bigram_line{.label = "bigram model",
                                       .y = arma::rowvec(curves.steps.n_elem).fill(bigram.all),
                                       .colour = colour::dark_orange,
                                       .dashed = true};
  ch.plots.lines({.name = "10-02-accuracy",
                  .title = "Agreement accuracy on the held-out sentences",
                  .x_label = "Adam step",
                  .y_label = "accuracy",
                  .x = curves.steps,
                  .series = {every_slot, nouns_disagree, bigram_line},
                  .key_at = "center right"});
}

// Where each head looks from one slot: a table, and one bar series per head for the figure.
std::vector<attn::book::Series> head_focus_from(attn::book::Chapter& ch,
                                                const attn::gpt::TransformerWeights& model,
                                                const std::vector<ch10::Sentence>& held,
                                                const AgreementSlot& slot) {
  fmt::print(ch.out, "\nWhere each head looks from {}\n", slot.heading);
  fmt::print(ch.out, "(mean weight over the held-out set)\n");
  fmt::print(ch.out, "                 subject  distractor  was/were    self\n");
  std::vector<attn::book::Series> bars;
  for (const ch10::HeadFocus& focus : ch10::head_focus(model, held, slot.row)) {
    // Before was/were the verb is still ahead, hidden by the causal mask: no number, no bar.
    const std::string verb_cell = slot.verb_visible ? fmt::format("{:.3f}", focus.verb) : "-";
    const double verb_bar = slot.verb_visible ? focus.verb : arma::datum::nan;
    fmt::print(ch.out, "  layer {} head {}  {:>6.3f}  {:>10.3f}  {:>8}  {:>6.3f}\n", focus.layer,
               focus.head, focus.subject, focus.distractor, verb_cell, focus.self);
    bars.push_back({.label = fmt::format("head {}, from {}", focus.head, slot.legend),
                    .y = {focus.subject, focus.distractor, verb_bar, focus.self},
                    .colour = focus.head == 0 ? slot.first_head_colour : slot.second_head_colour});
  }
  return bars;
}

void where_the_heads_look(attn::book::Chapter& ch, const attn::gpt::TransformerWeights& model,
                          const std::vector<ch10::Sentence>& held) {
  std::vector<attn::book::Series> bars = head_focus_from(ch, model, held, kBeforeVerb);
  const std::vector<attn::book::Series> from_so = head_focus_from(ch, model, held, kBeforePronoun);
  bars.insert(bars.end(), from_so.begin(), from_so.end());
  ch.plots.bars({.name = "10-04-head-focus",
                 .title = "Mean attention weight from the two agreement slots",
                 .labels = {"subject N1", "distractor N2", "was/were", "itself"},
                 .series = bars,
                 .value_label = "mean weight"});
  ch.plots.heatmaps(ch10::attention_figure("10-03-heads", model, held.front()));
}

// In this language the subject is always word 1, so the training data cannot tell "the first
// noun" from "whatever stands at position 1". The probe: every held-out sentence with one more
// "the" in front, which moves the subject to word 2, cut after it/they (a 13-word sentence
// would otherwise grow past the model's 13 positions).
std::vector<ch10::Sentence> with_one_more_the(const std::vector<ch10::Sentence>& sentences) {
  const arma::uvec the = {ch10::word_id("the")};
  std::vector<ch10::Sentence> shifted;
  for (const ch10::Sentence& s : sentences) {
    ch10::Sentence moved = s;
    moved.tokens = arma::join_cols(the, s.tokens.head(s.pronoun_slot + 2));
    moved.subject += 1;
    moved.distractor += 1;
    moved.verb_slot += 1;
    moved.pronoun_slot += 1;
    shifted.push_back(moved);
  }
  return shifted;
}

void position_probe(attn::book::Chapter& ch, const attn::gpt::TransformerWeights& model,
                    const std::vector<ch10::Sentence>& held) {
  const std::vector<ch10::Sentence> shifted = with_one_more_the(held);
  const ch10::Accuracy accuracy = ch10::evaluate(model, shifted).accuracy;
  const ch10::HeadFocus second_head = ch10::head_focus(model, shifted, kBeforeVerb.row).at(1);
  const ch10::Sentence& example = shifted.front();
  const arma::uvec example_start = example.tokens.head(example.verb_slot + 1);
  fmt::print(ch.out,
             "\nThe subject is always word 1. "
             "With one more \"the\" in front, the subject is word 2:\n");
  fmt::print(ch.out, "  e.g. {} ...\n", ch10::text(example_start));
  fmt::print(ch.out, "  agreement accuracy {:.3f} ({:.3f} where the nouns disagree); ",
             accuracy.all, accuracy.disagreeing);
  fmt::print(ch.out, "head 1, from the word\n");
  fmt::print(ch.out, "  before was/were, puts {:.3f} on the subject and {:.3f} on the distractor\n",
             second_head.subject, second_head.distractor);
}

// The most likely word, again and again, until a "." or the model's context is full: the
// agreement language's sentences are at most max_length words long.
arma::uvec greedy_continuation(const attn::gpt::TransformerWeights& model,
                               const arma::uvec& words) {
  const arma::uword context_length = model.config.max_length;
  const std::size_t room = words.n_elem < context_length ? context_length - words.n_elem : 0;
  return attn::gpt::continue_greedily(model, words, room, ch10::word_id(".")).tokens;
}

void continuations(attn::book::Chapter& ch, const attn::gpt::TransformerWeights& model,
                   const std::vector<ch10::Sentence>& held) {
  fmt::print(ch.out,
             "\nGreedy continuations of held-out sentences, cut after the relative clause\n");
  bool all_agree = true;
  for (std::size_t k = 0; k < kContinuations; ++k) {
    const arma::uvec cut = held[k].tokens.head(kUpToTheClause);
    const arma::uvec added = greedy_continuation(model, cut);
    const arma::uvec text = arma::join_cols(cut, added);
    fmt::print(ch.out, "  {} | {}\n", ch10::text(cut), ch10::text(added));
    all_agree = all_agree && ch10::agrees(text, held[k].subject_plural);
  }
  ch.checks.claim("every continuation's was/were and it/they agree with its subject", all_agree);
}

// The reader's own --prompt, continued, and why it stopped where it did.
void continue_prompt(attn::book::Chapter& ch, const attn::gpt::TransformerWeights& model,
                     const std::string& prompt) {
  const arma::uword full_stop = ch10::word_id(".");
  const arma::uvec words = ch10::parse(prompt);
  const arma::uvec text = arma::join_cols(words, greedy_continuation(model, words));
  fmt::print(ch.out, "\nYour prompt: {} | ...\n", prompt);
  fmt::print(ch.out, "continued:   {}\n", ch10::text(text));
  const arma::uword context_length = model.config.max_length;  // the positions it has
  const bool finished = text(text.n_elem - 1) == full_stop;
  if (words.n_elem >= context_length) {
    fmt::print(ch.out, "(nothing added: the model has {} positions, its context length, ",
               context_length);
    fmt::print(ch.out, "and your prompt\n already fills them with {} words)\n", words.n_elem);
  } else if (!finished) {
    fmt::print(ch.out, "(stopped after {} words, before a \".\": the model has {} positions, ",
               text.n_elem, context_length);
    fmt::print(ch.out, "its context length,\n and cannot read a longer text)\n");
  }
}

// The same training, one thing changed at a time, each from three seeds.
void comparison(attn::book::Chapter& ch, const std::vector<ch10::Sentence>& train,
                const std::vector<ch10::Sentence>& held, const ch10::Evaluation& model) {
  std::vector<ch10::Run> runs;
  for (const Variant& variant : kVariants) {
    for (const std::uint64_t seed : kSeeds) {
      ch10::Run run{.config = kModel, .settings = kTraining};
      run.config.heads = variant.heads;
      run.config.positions = variant.positions;
      run.settings.seed = seed;
      run.settings.evaluate_every = kTraining.steps;  // measured at the end only
      runs.push_back(run);
    }
  }
  const std::vector<ch10::Evaluation> results = ch10::train_side_by_side(runs, train, held);
  fmt::print(ch.out, "\nThe same training with one thing changed: held-out agreement accuracy\n");
  fmt::print(ch.out, "(where the nouns disagree), three seeds each\n");
  fmt::print(ch.out, "                          seed 1          seed 2          seed 3\n");
  for (std::size_t v = 0; v < kVariants.size(); ++v) {
    fmt::print(ch.out, "  {:<21}", kVariants[v].label);
    for (std::size_t s = 0; s < kSeeds.size(); ++s) {
      const ch10::Accuracy& accuracy = results[v * kSeeds.size() + s].accuracy;
      fmt::print(ch.out, "   {:.3f} ({:.3f})", accuracy.all, accuracy.disagreeing);
    }
    fmt::print(ch.out, "\n");
  }
  const ch10::Evaluation& seed_one_again = results.front();  // the model's variant, seed 1
  const bool same =
      seed_one_again.accuracy.all == model.accuracy.all && seed_one_again.loss == model.loss;
  ch.checks.claim("trained again from seed 1, the model scores exactly the same", same);
}

// CLI11's check of --prompt: empty when every word is in the language, else why not (the
// words the language has), so an unknown word is refused before training starts.
std::string unknown_words(const std::string& prompt) {
  try {
    ch10::parse(prompt);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  const attn::book::ChapterInfo info{
      .executable = "ch10_tiny_transformer",
      .summary =
          "Chapter 10: a small transformer, trained here, gets agreement right where a bigram "
          "model guesses",
      .reference = "the target"};
  bool quick = false;
  std::string prompt;
  const auto options = [&](CLI::App& app) {
    app.add_flag("--quick", quick,
                 "train the model only, not the nine runs of the comparison table");
    app.add_option("--prompt", prompt,
                   "words to continue greedily, e.g. \"the mice that saw the cat\"")
        ->check(unknown_words);
  };
  return attn::book::run_chapter(argc, argv, info, options, [&](attn::book::Chapter& ch) {
    const std::vector<ch10::Sentence> train = ch10::generate(kTrainingSeed, kTrainingSentences);
    const std::vector<ch10::Sentence> held = ch10::generate(kHeldOutSeed, kHeldOutSentences);
    the_language(ch, train, held);
    const ch10::Accuracy bigram = bigram_baseline(ch, train, held);
    const ch10::Trained trained = train_the_model(ch, train, held);
    training_table(ch, trained, held);
    check_training(ch, trained);
    learning_curves(ch, trained.curves, bigram);
    where_the_heads_look(ch, trained.model, held);
    position_probe(ch, trained.model, held);
    continuations(ch, trained.model, held);
    if (!prompt.empty()) {
      continue_prompt(ch, trained.model, prompt);
    }
    if (!quick) {
      comparison(ch, train, held, trained.after);
    }
  });
}
