#include "language_model.hpp"

#include "attn/fast/threads.hpp"
#include "attn/gpt/forward.hpp"
#include "attn/math/validate.hpp"
#include "attn/numpy/numpy_random.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <chrono>
#include <cmath>

namespace attn::ch10 {

namespace {

constexpr std::size_t kEvaluationBatch = 50;  // sentences packed into one forward pass

std::vector<arma::uvec> tokens_of(const std::vector<Sentence>& sentences, std::size_t first,
                                  std::size_t count) {
  std::vector<arma::uvec> out;
  for (std::size_t k = 0; k < count; ++k)
    out.push_back(sentences[(first + k) % sentences.size()].tokens);
  return out;
}

}  // namespace

std::vector<arma::mat> next_word_logits(const gpt::TransformerWeights& model,
                                        const std::vector<Sentence>& sentences) {
  std::vector<arma::mat> out;
  for (std::size_t first = 0; first < sentences.size(); first += kEvaluationBatch) {
    const std::size_t count = std::min(kEvaluationBatch, sentences.size() - first);
    const gpt::PackedBatch batch = gpt::pack_sentences(tokens_of(sentences, first, count));
    const arma::mat logits = gpt::transformer_forward(model, batch.tokens, batch.starts).logits;
    for (std::size_t k = 0; k < count; ++k) {
      const arma::uword start = batch.starts(k), rows = sentences[first + k].tokens.n_elem - 1;
      out.push_back(logits.rows(start, start + rows - 1));
    }
  }
  return out;
}

Evaluation evaluate(const gpt::TransformerWeights& model, const std::vector<Sentence>& sentences) {
  if (sentences.empty())
    throw math::InputError("evaluate: there are no sentences");
  const std::vector<arma::mat> logits = next_word_logits(model, sentences);
  double total = 0.0;
  arma::uword rows = 0;
  for (std::size_t k = 0; k < sentences.size(); ++k) {
    const arma::uvec& t = sentences[k].tokens;
    total += math::cross_entropy(logits[k], t.tail(t.n_elem - 1)).loss *
             static_cast<double>(logits[k].n_rows);
    rows += logits[k].n_rows;
  }
  return {total / static_cast<double>(rows), accuracy(sentences, logits)};
}

gpt::TrainingSettings trainer_settings(const TrainingSettings& settings) {
  return {.steps = static_cast<std::int64_t>(settings.steps),
          .batch = settings.batch_sentences,
          .peak_learning_rate = settings.learning_rate,
          .final_learning_rate = settings.learning_rate,
          .warmup_steps = 0,
          .weight_decay = 0.0,
          .evaluate_every = static_cast<std::int64_t>(settings.evaluate_every),
          .evaluate_at_start = true,
          .seed = settings.seed};
}

Trained train(const gpt::TransformerConfig& config, const TrainingSettings& settings,
              const std::vector<Sentence>& training, const std::vector<Sentence>& heldout,
              const gpt::Progress& progress) {
  if (settings.steps == 0 || settings.batch_sentences == 0 || settings.evaluate_every == 0 ||
      training.empty() || heldout.empty())
    throw math::InputError(
        "train: the steps, batch, evaluation interval and both sets must all be positive");
  if (!std::isfinite(settings.learning_rate) || !(settings.learning_rate > 0.0))
    throw math::InputError(fmt::format("train: the learning rate {} must be positive and finite",
                                       settings.learning_rate));
  const fast::OneThread one_thread;  // small matrices: a team of threads costs more than it saves
  const auto started = std::chrono::steady_clock::now();
  const gpt::TrainingSettings run = trainer_settings(settings);
  //! [batches]
  // Step t trains on the training sentences from t × batch on, in order, wrapping round.
  const gpt::NextBatch in_order = [&](std::int64_t step, numpy::Generator&) {
    const std::size_t first = (static_cast<std::size_t>(step) * run.batch) % training.size();
    return gpt::pack_sentences(tokens_of(training, first, run.batch));
  };
  //! [batches]
  std::vector<Evaluation> measured;  // one per curve point
  const gpt::Evaluation held_out_loss = [&](const gpt::TransformerWeights& model, gpt::Step&) {
    measured.push_back(evaluate(model, heldout));
    return gpt::Measurement{.held_out = measured.back().loss, .training = {}};
  };
  gpt::TrainingState state = gpt::start(config, run);
  gpt::train(state, run, in_order, held_out_loss, run.steps, progress);
  Trained t{.model = std::move(state.weights),
            .before = measured.front(),
            .after = measured.back(),
            .curves = {},
            .seconds = 0.0};
  const arma::uword points = state.curve.size();
  t.curves = {arma::rowvec(points), arma::rowvec(points), arma::rowvec(points),
              arma::rowvec(points), arma::rowvec(points)};
  for (arma::uword k = 0; k < points; ++k) {
    t.curves.steps(k) = static_cast<double>(state.curve[k].step);
    t.curves.training_loss(k) = state.curve[k].training_loss;
    t.curves.heldout_loss(k) = state.curve[k].measured.held_out;
    t.curves.accuracy(k) = measured[k].accuracy.all;
    t.curves.disagreeing(k) = measured[k].accuracy.disagreeing;
  }
  t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return t;
}

std::vector<Evaluation> train_side_by_side(const std::vector<Run>& runs,
                                           const std::vector<Sentence>& training,
                                           const std::vector<Sentence>& heldout) {
  std::vector<Evaluation> results(runs.size());
  fast::side_by_side(runs.size(), [&](std::size_t k) {
    results[k] = train(runs[k].config, runs[k].settings, training, heldout).after;
  });
  return results;
}

namespace {

void require_input_word(std::string_view what, const Sentence& sentence) {
  if (sentence.tokens.n_elem < 2)
    throw math::InputError(
        fmt::format("{}: a sentence of {} token(s) has no input word before its "
                    "last",
                    what, sentence.tokens.n_elem));
}

}  // namespace

std::vector<arma::mat> attention_grids(const gpt::TransformerWeights& model,
                                       const Sentence& sentence) {
  require_input_word("attention_grids", sentence);
  const arma::uvec inputs = sentence.tokens.head(sentence.tokens.n_elem - 1);
  const gpt::TransformerForward f = gpt::transformer_forward(model, inputs, arma::uvec{0});
  std::vector<arma::mat> grids;
  for (const gpt::BlockForward& b : f.blocks)
    for (const math::Attention& head : b.attention.front().heads)
      grids.push_back(head.weights);
  return grids;
}

book::HeatmapRow attention_figure(const std::string& name, const gpt::TransformerWeights& model,
                                  const Sentence& sentence) {
  require_input_word("attention_figure", sentence);
  const std::vector<std::string> inputs = words(sentence.tokens.head(sentence.tokens.n_elem - 1));
  book::HeatmapRow row{name, fmt::format("Each head on \"{}\"", text(sentence.tokens)), {}};
  const std::vector<arma::mat> grids = attention_grids(model, sentence);
  for (std::size_t k = 0; k < grids.size(); ++k)
    row.panels.push_back(
        {"", fmt::format("layer {}, head {}", k / model.config.heads, k % model.config.heads),
         inputs, inputs, grids[k], book::ColourScale::weights, 2, true});
  return row;
}

std::vector<HeadFocus> head_focus(const gpt::TransformerWeights& model,
                                  const std::vector<Sentence>& sentences,
                                  const std::function<arma::uword(const Sentence&)>& slot) {
  if (sentences.empty())
    throw math::InputError("head_focus: there are no sentences");
  const arma::uword heads = model.config.heads;
  std::vector<HeadFocus> focus(model.config.layers * heads);
  for (arma::uword k = 0; k < focus.size(); ++k)
    focus[k] = {k / heads, k % heads, 0.0, 0.0, 0.0, 0.0};
  for (const Sentence& s : sentences) {
    const std::vector<arma::mat> grids = attention_grids(model, s);
    const arma::uword q = slot(s);
    if (grids.size() != focus.size())
      throw math::ShapeError(
          fmt::format("head_focus: the model has {} heads in all, its config {} "
                      "layers of {}",
                      grids.size(), model.config.layers, heads));
    const arma::uword n_inputs = grids.front().n_rows;
    if (std::max({q, s.subject, s.distractor, s.verb_slot + 1}) >= n_inputs)
      throw math::InputError(
          fmt::format("head_focus: slot {}, subject {}, distractor {} or verb {} is "
                      "not one of the sentence's {} input words",
                      q, s.subject, s.distractor, s.verb_slot + 1, n_inputs));
    for (arma::uword k = 0; k < grids.size(); ++k) {
      focus[k].subject += grids[k](q, s.subject);
      focus[k].distractor += grids[k](q, s.distractor);
      focus[k].verb += grids[k](q, s.verb_slot + 1);
      focus[k].self += grids[k](q, q);
    }
  }
  const double n = static_cast<double>(sentences.size());
  for (HeadFocus& f : focus) {
    f.subject /= n;
    f.distractor /= n;
    f.verb /= n;
    f.self /= n;
  }
  return focus;
}

}  // namespace attn::ch10
