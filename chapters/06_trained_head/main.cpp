// Chapter 06: a trained head that resolves "it" to "cat".
//
// Chapter 04's grid was noise because W_Q and W_K were random. Here the two matrices are
// trained, by gradient descent with the backward pass of chapter 05, on a handful of sentences
// in which "it" refers to an animal. The test sentence, "the cat drank the milk because it was
// thirsty", is not among them: "cat" and "milk" never occur in training.
// The book's page for this chapter is chapters/06_trained_head/chapter.md.

#include <attn/attention.hpp>
#include <attn/chapter.hpp>
#include <attn/gradient_check.hpp>
#include <attn/grid_text.hpp>
#include <attn/numpy_random.hpp>
#include <attn/softmax.hpp>
#include <attn/training.hpp>

#include <fmt/ostream.h>

#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

//! [vocabulary]
// Each word is one of six kinds. Its embedding is the unit vector of its kind plus noise, so
// words of one kind are alike but never identical: "cat" is an animal the head has never seen.
enum Kind : arma::uword { animal, object, pronoun, verb, function_word, state };
const std::vector<std::pair<std::string, Kind>> kVocabulary = {
    {"the", function_word}, {"cat", animal},    {"dog", animal},      {"horse", animal},
    {"bird", animal},       {"cow", animal},    {"drank", verb},      {"ate", verb},
    {"chased", verb},       {"milk", object},   {"water", object},    {"bone", object},
    {"seeds", object},      {"grass", object},  {"ball", object},     {"because", function_word},
    {"it", pronoun},        {"was", function_word}, {"thirsty", state}, {"hungry", state},
    {"tired", state}};
//! [vocabulary]

//! [data]
// In every training sentence "it" refers to the animal. The test sentence is held out.
const std::vector<std::string> kTraining = {
    "the dog drank the water because it was thirsty", "the horse ate the grass because it was hungry",
    "the bird ate the seeds because it was hungry",   "the dog chased the ball because it was tired",
    "the cow drank the water because it was thirsty", "the dog ate the bone because it was hungry"};
const std::string kTest = "the cat drank the milk because it was thirsty";
//! [data]

//! [setup]
constexpr std::uint64_t kSeed = 6;        // numpy default_rng seed for noise and initial weights
constexpr arma::uword kModelWidth = 8;    // d_model
constexpr arma::uword kKeyWidth = 4;      // d_k
constexpr double kNoise = 0.3;            // embedding = unit vector of its kind + 0.3 N(0, 1)
constexpr double kInitialScale = 0.1;     // W_Q, W_K start as 0.1 N(0, 1): near-uniform attention
constexpr double kWeightDecay = 0.25;     // λ in the loss
constexpr double kLearningRate = 0.05;    // Adam's step size
constexpr double kStopGradient = 1e-6;    // stop when ‖∇L‖ falls below this ...
constexpr int kMaxSteps = 5000;           // ... or after this many steps
//! [setup]

// What the article says of a trained head, quoted: "it" puts "about 0.60" of its weight on cat.
constexpr double kArticleItCat = 0.60;
constexpr double kAbout = 0.05;

struct Lexicon {
  std::map<std::string, Kind> kind;
  std::map<std::string, arma::rowvec> embedding;  // (1 × d_model) each
};

Lexicon make_lexicon(attn::numpy::Generator& rng) {
  Lexicon lex;
  const arma::mat noise = rng.normal(kVocabulary.size(), kModelWidth) * kNoise;
  for (arma::uword i = 0; i < kVocabulary.size(); ++i) {
    const auto& [word, kind] = kVocabulary[i];
    arma::rowvec e = noise.row(i);
    e(kind) += 1.0;
    lex.kind[word] = kind;
    lex.embedding[word] = e;
  }
  return lex;
}

// A sentence as a training example: its embeddings, the row of "it", the row of the animal.
attn::AttentionExample example(const Lexicon& lex, const std::string& sentence) {
  attn::AttentionExample e;
  e.tokens = attn::split_words(sentence);
  e.X.set_size(e.tokens.size(), kModelWidth);
  bool has_pronoun = false, has_animal = false;
  for (arma::uword i = 0; i < e.tokens.size(); ++i) {
    e.X.row(i) = lex.embedding.at(e.tokens[i]);
    if (e.tokens[i] == "it") e.query = i, has_pronoun = true;
    if (lex.kind.at(e.tokens[i]) == animal) e.target = i, has_animal = true;
  }
  if (!has_pronoun || !has_animal)
    throw std::invalid_argument("\"" + sentence + "\" needs the word \"it\" and an animal");
  return e;
}

// A sentence's scaled scores Q K^T / √d_k (n × n) under a given W_Q, W_K.
arma::mat scores_of(const attn::AttentionExample& e, const arma::mat& W_Q, const arma::mat& W_K) {
  return attn::attention_scores(e.X * W_Q, e.X * W_K, 1.0 / std::sqrt(double(kKeyWidth)));
}

arma::mat weights_of(const attn::AttentionExample& e, const arma::mat& W_Q, const arma::mat& W_K) {
  return attn::softmax_rows(scores_of(e, W_Q, W_K));
}

struct Training {
  arma::mat W_Q, W_K;          // (d_model × d_k) each, trained
  std::vector<double> losses;  // one per step, the first before any update
  double final_gradient = 0;
};

//! [train]
Training train(const std::vector<attn::AttentionExample>& data, arma::mat W_Q, arma::mat W_K,
               double weight_decay) {
  Training t;
  attn::Adam adam(kLearningRate);
  for (int step = 0; step <= kMaxSteps; ++step) {
    const attn::LossGradient g = attn::attention_target_loss(data, W_Q, W_K, weight_decay);
    t.losses.push_back(g.loss);
    t.final_gradient = std::sqrt(arma::accu(arma::square(g.dW_Q)) + arma::accu(arma::square(g.dW_K)));
    if (t.final_gradient < kStopGradient) break;
    adam.step({&W_Q, &W_K}, {g.dW_Q, g.dW_K});
  }
  t.W_Q = W_Q;
  t.W_K = W_K;
  return t;
}
//! [train]

double worst_gradient_error(const std::vector<attn::AttentionExample>& data, const arma::mat& W_Q,
                            const arma::mat& W_K) {
  const attn::LossGradient g = attn::attention_target_loss(data, W_Q, W_K, kWeightDecay);
  const auto loss_q = [&](const arma::mat& m) { return attn::attention_target_loss(data, m, W_K, kWeightDecay).loss; };
  const auto loss_k = [&](const arma::mat& m) { return attn::attention_target_loss(data, W_Q, m, kWeightDecay).loss; };
  return std::max(attn::check_gradient(loss_q, W_Q, g.dW_Q).max_relative_error,
                  attn::check_gradient(loss_k, W_K, g.dW_K).max_relative_error);
}

void print_setup(attn::Chapter& ch) {
  fmt::print(ch.out, "Training one attention head so that \"it\" finds its animal\n\n"
                     "training sentences (\"it\" always refers to the animal):\n");
  for (const std::string& s : kTraining) fmt::print(ch.out, "  {}\n", s);
  fmt::print(ch.out, "held-out test sentence (\"cat\" and \"milk\" never occur in training):\n  {}\n\n",
             kTest);
  fmt::print(ch.out, "loss: mean over sentences of -log weight(it -> animal) + λ/2 (|W_Q|² + |W_K|²), "
                     "λ = {}\n", kWeightDecay);
  fmt::print(ch.out, "Adam, learning rate {}; stop when |∇L| < {:.0e} or after {} steps\n\n",
             kLearningRate, kStopGradient, kMaxSteps);
}

void print_loss_curve(attn::Chapter& ch, const Training& t) {
  fmt::print(ch.out, "step    loss\n");
  for (std::size_t step : {0, 10, 20, 30, 40, 50, 100, 150, 200})
    if (step < t.losses.size()) fmt::print(ch.out, "{:4}  {:.4f}\n", step, t.losses[step]);
  // The exact step the rule fires at can move by one with the last bits of the arithmetic
  // (which differ between CPUs), so it goes to stderr; the story keeps what is stable.
  fmt::print(ch.log, "training stopped after {} steps\n", t.losses.size() - 1);
  fmt::print(ch.out, "final loss {:.4f}; stopped because |∇L| < {:.0e}: {}\n", t.losses.back(),
             kStopGradient, t.final_gradient < kStopGradient ? "yes" : "no");
}

void tell_story(attn::Chapter& ch) {
  attn::numpy::Generator rng = attn::numpy::default_rng(kSeed);
  const Lexicon lex = make_lexicon(rng);
  const arma::mat W_Q0 = rng.normal(kModelWidth, kKeyWidth) * kInitialScale;  // (8 × 4)
  const arma::mat W_K0 = rng.normal(kModelWidth, kKeyWidth) * kInitialScale;  // (8 × 4)
  std::vector<attn::AttentionExample> data;
  for (const std::string& s : kTraining) data.push_back(example(lex, s));
  const attn::AttentionExample test = example(lex, kTest);
  print_setup(ch);

  const double gradient_error = worst_gradient_error(data, W_Q0, W_K0);
  fmt::print(ch.log, "gradient check at the start: largest relative error {:.1e}\n", gradient_error);
  fmt::print(ch.out, "the loss's gradient agrees with finite differences (relative error below "
                     "1e-6): {}\n\n", gradient_error < 1e-6 ? "yes" : "no");

  const Training t = train(data, W_Q0, W_K0, kWeightDecay);
  print_loss_curve(ch, t);

  //! [before-after]
  const arma::mat before = weights_of(test, W_Q0, W_K0);    // (9 × 9)
  const arma::mat after = weights_of(test, t.W_Q, t.W_K);   // (9 × 9)
  const arma::uword it = test.query, cat = test.target;
  //! [before-after]
  fmt::print(ch.out, "\nit -> cat before training: {:.2f}\nit -> cat after training: {:.2f}\n",
             before(it, cat), after(it, cat));
  fmt::print(ch.out, "\nweights before training (rows = queries, cols = keys)\n{}",
             attn::grid_table(test.tokens, test.tokens, before));
  fmt::print(ch.out, "\nweights after training\n{}", attn::grid_table(test.tokens, test.tokens, after));
  fmt::print(ch.out, "\nthe \"it\" row's scores q(it)·k(j)/√d_k, before and after\n{}",
             attn::grid_table({"before", "after"}, test.tokens,
                              arma::join_cols(scores_of(test, W_Q0, W_K0).row(it),
                                              scores_of(test, t.W_Q, t.W_K).row(it))));

  fmt::print(ch.out, "\nλ decides how sure the trained head becomes (same data, same start):\n"
                     "     λ   it -> cat   largest other weight\n");
  for (double decay : {0.05, 0.1, 0.25, 0.4}) {
    const Training sweep = train(data, W_Q0, W_K0, decay);
    arma::rowvec row = weights_of(test, sweep.W_Q, sweep.W_K).row(it);
    const double to_cat = row(cat);
    row(cat) = 0.0;
    fmt::print(ch.out, "{:6.2f}  {:10.2f}  {:21.2f}\n", decay, to_cat, row.max());
  }

  //! [checks]
  ch.checks.claim("before training the \"it\" row is near uniform: no weight above 0.35",
                  before.row(it).max() <= 0.35);
  ch.checks.claim("after training \"cat\" has the largest weight in the \"it\" row",
                  after.row(it).index_max() == cat);
  ch.checks.approximately("it -> cat after training", kArticleItCat, kAbout, after(it, cat));
  ch.checks.claim("the loss falls during training", t.losses.back() < t.losses.front());
  ch.checks.claim("training stopped by the rule |∇L| < 1e-6, not by the step limit",
                  t.final_gradient < kStopGradient);
  ch.checks.claim("the analytic gradient matches finite differences (below 1e-6)",
                  gradient_error < 1e-6);
  //! [checks]

  ch.plots.heatmaps({"06-01-weights", "The test sentence before (left) and after (right) training",
                     {{"", "before training", test.tokens, test.tokens, before},
                      {"", "after training", test.tokens, test.tokens, after}}});
  ch.plots.lines({"06-02-loss", "Training loss", "step", "loss",
                  arma::regspace<arma::rowvec>(0, double(t.losses.size() - 1)),
                  {{"loss", arma::rowvec(t.losses), "#d6604d"}}, false, false, "top right"});
  ch.plots.bars({"06-03-it-row", "Where \"it\" looks, before and after training", test.tokens,
                 {{"before", before.row(it), "#9e9e9e"}, {"after", after.row(it), "#2166ac"}},
                 "weight"});
}

}  // namespace

int main(int argc, char** argv) {
  const attn::ChapterInfo info{"ch06_trained_head",
                               "Chapter 06: train one attention head until \"it\" attends to \"cat\""};
  return attn::run_chapter(argc, argv, info, tell_story);
}
