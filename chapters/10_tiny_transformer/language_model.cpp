#include "language_model.hpp"

#include "attn/fast/threads.hpp"
#include "attn/math/training.hpp"
#include "attn/math/validate.hpp"
#include "attn/numpy/numpy_random.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <thread>

namespace attn::agreement {

namespace {

constexpr std::size_t kEvaluationBatch = 50;  // sentences packed into one forward pass

std::vector<arma::uvec> tokens_of(const std::vector<Sentence>& sentences, std::size_t first,
                                  std::size_t count) {
  std::vector<arma::uvec> out;
  for (std::size_t k = 0; k < count; ++k)
    out.push_back(sentences[(first + k) % sentences.size()].tokens);
  return out;
}

// The gradients in model_parameters() order, moved out of `gradients`, for Adam::step().
std::vector<arma::mat> take_matrices(TransformerWeights& gradients) {
  std::vector<arma::mat> out;
  for (const NamedParameter& p : model_parameters(gradients))
    out.push_back(std::move(*p.value));
  return out;
}

}  // namespace

std::vector<arma::mat> next_word_logits(const TransformerWeights& model,
                                        const std::vector<Sentence>& sentences) {
  std::vector<arma::mat> out;
  for (std::size_t first = 0; first < sentences.size(); first += kEvaluationBatch) {
    const std::size_t count = std::min(kEvaluationBatch, sentences.size() - first);
    const PackedBatch batch = pack_sentences(tokens_of(sentences, first, count));
    const arma::mat logits = transformer_forward(model, batch.tokens, batch.starts).logits;
    for (std::size_t k = 0; k < count; ++k) {
      const arma::uword start = batch.starts(k), rows = sentences[first + k].tokens.n_elem - 1;
      out.push_back(logits.rows(start, start + rows - 1));
    }
  }
  return out;
}

Evaluation evaluate(const TransformerWeights& model, const std::vector<Sentence>& sentences) {
  if (sentences.empty())
    throw InputError("evaluate: there are no sentences");
  const std::vector<arma::mat> logits = next_word_logits(model, sentences);
  double total = 0.0;
  arma::uword rows = 0;
  for (std::size_t k = 0; k < sentences.size(); ++k) {
    const arma::uvec& t = sentences[k].tokens;
    total +=
        cross_entropy(logits[k], t.tail(t.n_elem - 1)).loss * static_cast<double>(logits[k].n_rows);
    rows += logits[k].n_rows;
  }
  return {total / static_cast<double>(rows), accuracy(sentences, logits)};
}

bool stderr_is_terminal() {
  return isatty(STDERR_FILENO) != 0;
}

Progress progress_line(std::ostream& log, arma::uword steps, bool terminal) {
  if (!terminal)
    return {};
  return [&log, steps](arma::uword step, double loss) {
    fmt::print(log, "\rtraining: step {} of {}, loss {:.3f} {}", step, steps, loss,
               step == steps ? "\n" : "");
    log.flush();
  };
}

Trained train(const TransformerConfig& config, const TrainingSettings& settings,
              const std::vector<Sentence>& training, const std::vector<Sentence>& heldout,
              const Progress& progress) {
  if (settings.steps == 0 || settings.batch_sentences == 0 || settings.evaluate_every == 0 ||
      !(settings.learning_rate > 0.0) || training.empty() || heldout.empty())
    throw InputError(
        "train: the steps, batch, learning rate, evaluation interval and both sets "
        "must all be positive");
  const fast::OneThread one_thread;  // small matrices: a team of threads costs more than it saves
  const auto started = std::chrono::steady_clock::now();
  numpy::Generator rng = numpy::default_rng(settings.seed);
  Trained t{
      init_transformer(config, [&](arma::uword r, arma::uword c) { return rng.normal(r, c); }),
      {},
      {},
      {}};
  t.before = evaluate(t.model, heldout);
  const double first_batch =
      transformer_step(t.model, pack_sentences(tokens_of(training, 0, settings.batch_sentences)))
          .loss;
  std::vector<double> steps{0}, train_loss{first_batch}, heldout_loss{t.before.loss},
      acc{t.before.accuracy.all}, disagreeing{t.before.accuracy.disagreeing};
  Adam adam(settings.learning_rate);
  std::vector<arma::mat*> parameters;  // into t.model, whose matrices stay where they are
  for (const NamedParameter& p : model_parameters(t.model))
    parameters.push_back(p.value);
  double since_last = 0.0;
  for (arma::uword step = 1; step <= settings.steps; ++step) {
    //! [step]
    const std::size_t first = ((step - 1) * settings.batch_sentences) % training.size();
    const PackedBatch batch = pack_sentences(tokens_of(training, first, settings.batch_sentences));
    TransformerStep s = transformer_step(t.model, batch);
    adam.step(parameters, take_matrices(s.gradients));
    //! [step]
    since_last += s.loss;
    if (progress)
      progress(step, s.loss);
    if (step % settings.evaluate_every == 0 || step == settings.steps) {
      const Evaluation e = evaluate(t.model, heldout);
      const double interval = static_cast<double>(step - static_cast<arma::uword>(steps.back()));
      steps.push_back(static_cast<double>(step));
      train_loss.push_back(since_last / interval);
      heldout_loss.push_back(e.loss);
      acc.push_back(e.accuracy.all);
      disagreeing.push_back(e.accuracy.disagreeing);
      since_last = 0.0;
      t.after = e;
    }
  }
  t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  t.curves = {arma::rowvec(steps), arma::rowvec(train_loss), arma::rowvec(heldout_loss),
              arma::rowvec(acc), arma::rowvec(disagreeing)};
  return t;
}

std::vector<Evaluation> train_side_by_side(const std::vector<Run>& runs,
                                           const std::vector<Sentence>& training,
                                           const std::vector<Sentence>& heldout) {
  const fast::OneThread one_thread;  // before the workers start: OpenBLAS's setting is process-wide
  std::vector<Evaluation> results(runs.size());
  std::vector<std::exception_ptr> errors(runs.size());
  std::atomic<std::size_t> next{0};
  const auto worker = [&] {  // takes the next run until none is left
    for (std::size_t k; (k = next++) < runs.size();) {
      try {
        results[k] = train(runs[k].config, runs[k].settings, training, heldout).after;
      } catch (...) {
        errors[k] = std::current_exception();
      }
    }
  };
  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> workers;
  for (std::size_t w = 0; w < std::min(cores, runs.size()); ++w)
    workers.emplace_back(worker);
  for (std::thread& w : workers)
    w.join();
  for (const std::exception_ptr& e : errors)
    if (e)
      std::rethrow_exception(e);
  return results;
}

namespace {

void require_input_word(std::string_view what, const Sentence& sentence) {
  if (sentence.tokens.n_elem < 2)
    throw InputError(
        fmt::format("{}: a sentence of {} token(s) has no input word before its "
                    "last",
                    what, sentence.tokens.n_elem));
}

}  // namespace

std::vector<arma::mat> attention_grids(const TransformerWeights& model, const Sentence& sentence) {
  require_input_word("attention_grids", sentence);
  const arma::uvec inputs = sentence.tokens.head(sentence.tokens.n_elem - 1);
  const TransformerForward f = transformer_forward(model, inputs, arma::uvec{0});
  std::vector<arma::mat> grids;
  for (const BlockForward& b : f.blocks)
    for (const Attention& head : b.attention.front().heads)
      grids.push_back(head.weights);
  return grids;
}

HeatmapRow attention_figure(const std::string& name, const TransformerWeights& model,
                            const Sentence& sentence) {
  require_input_word("attention_figure", sentence);
  const std::vector<std::string> inputs = words(sentence.tokens.head(sentence.tokens.n_elem - 1));
  HeatmapRow row{name, fmt::format("Each head on \"{}\"", text(sentence.tokens)), {}};
  const std::vector<arma::mat> grids = attention_grids(model, sentence);
  for (std::size_t k = 0; k < grids.size(); ++k)
    row.panels.push_back(
        {"", fmt::format("layer {}, head {}", k / model.config.heads, k % model.config.heads),
         inputs, inputs, grids[k], ColourScale::weights, 2, true});
  return row;
}

std::vector<HeadFocus> head_focus(const TransformerWeights& model,
                                  const std::vector<Sentence>& sentences,
                                  const std::function<arma::uword(const Sentence&)>& slot) {
  if (sentences.empty())
    throw InputError("head_focus: there are no sentences");
  const arma::uword heads = model.config.heads;
  std::vector<HeadFocus> focus(model.config.layers * heads);
  for (arma::uword k = 0; k < focus.size(); ++k)
    focus[k] = {k / heads, k % heads, 0.0, 0.0, 0.0, 0.0};
  for (const Sentence& s : sentences) {
    const std::vector<arma::mat> grids = attention_grids(model, s);
    const arma::uword q = slot(s);
    if (grids.size() != focus.size())
      throw ShapeError(
          fmt::format("head_focus: the model has {} heads in all, its config {} "
                      "layers of {}",
                      grids.size(), model.config.layers, heads));
    const arma::uword n_inputs = grids.front().n_rows;
    if (std::max({q, s.subject, s.distractor, s.verb_slot + 1}) >= n_inputs)
      throw InputError(
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

}  // namespace attn::agreement
