#include "training.hpp"

#include <attn/math/layers.hpp>
#include <attn/math/validate.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>

namespace attn::gpt {

WarmupCosine schedule_of(const TrainingSettings& s) {
  return {.peak = s.peak_learning_rate,
          .minimum = s.final_learning_rate,
          .warmup_steps = s.warmup_steps,
          .total_steps = s.steps,
          // step t of the warm-up takes (t + 1)/(W + 1) of the peak: none is wasted at rate 0
          .start_factor = 1.0 / static_cast<double>(s.warmup_steps + 1)};
}

std::vector<bool> decayed_parameters(TransformerWeights& weights) {
  std::vector<bool> decays;
  for (const NamedParameter& p : model_parameters(weights)) {
    const bool block_matrix = p.name.find(".W_") != std::string::npos ||
                              p.name.find(".W1") != std::string::npos ||
                              p.name.find(".W2") != std::string::npos;
    decays.push_back(block_matrix);
  }
  return decays;
}

TrainingState start(const TransformerConfig& model, const TrainingSettings& settings) {
  numpy::Generator rng = numpy::default_rng(settings.seed);
  TrainingState state;
  state.weights = init_transformer(
      model, [&](arma::uword rows, arma::uword cols) { return rng.normal(rows, cols); });
  state.rng_state = rng.bit_generator().state();
  state.rng_increment = rng.bit_generator().increment();
  return state;
}

TokenText encode(const text::BpeTokenizer& tokenizer, const std::string& text) {
  const std::vector<text::TokenId> ids = tokenizer.encode(text);
  TokenText out;
  out.tokens.set_size(ids.size());
  out.lengths.set_size(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    out.tokens(i) = ids[i];
    out.lengths(i) = tokenizer.token_bytes(ids[i]).size();
  }
  return out;
}

double bits_per_byte(const TransformerWeights& weights, const TokenText& text, std::size_t tokens) {
  const arma::uword n = tokens == 0 || tokens > text.tokens.n_elem ? text.tokens.n_elem : tokens;
  const arma::uword window = weights.config.max_length;
  const arma::uword stride = std::max<arma::uword>(window / 2, 1);
  if (n < 2)
    throw InputError(fmt::format("bits_per_byte: {} token(s); scoring needs at least 2", n));
  double nats = 0.0;
  arma::uword scored_up_to = 0;  // tokens 1 ... scored_up_to have been scored
  for (arma::uword start = 0; scored_up_to + 1 < n; start += stride) {
    const arma::uword end = std::min(start + window, n - 1);  // inputs start ... end − 1
    const arma::uvec inputs = text.tokens.subvec(start, end - 1);
    const arma::mat logits = sentence_logits(weights, inputs);
    for (arma::uword i = scored_up_to + 1; i <= end; ++i) {  // target i, row i − 1 − start
      const arma::rowvec z = logits.row(i - 1 - start);
      const double top = z.max();
      nats += top + std::log(arma::accu(arma::exp(z - top))) - z(text.tokens(i));
    }
    scored_up_to = end;
  }
  const double bytes = static_cast<double>(arma::accu(text.lengths.subvec(1, n - 1)));
  return nats / (bytes * std::numbers::ln2);
}

void train(TrainingState& state, const TrainingSettings& settings, const arma::uvec& training,
           const TokenText& held_out, std::int64_t until, const Progress& progress) {
  const arma::uword window = state.weights.config.max_length;
  if (training.n_elem <= window)
    throw InputError(
        fmt::format("train: {} training tokens; a window needs {}", training.n_elem, window + 1));
  if (settings.evaluate_every <= 0)
    throw InputError(
        fmt::format("train: evaluate_every is {}; it must be at least 1", settings.evaluate_every));
  numpy::Generator rng(numpy::PCG64(state.rng_state, state.rng_increment));
  const UniformDraws uniform = [&rng] {
    return rng.random();
  };
  AdamW optimizer(decayed_parameters(state.weights), settings.weight_decay);
  optimizer.restore(state.optimizer);
  const WarmupCosine schedule = schedule_of(settings);
  const double offsets = static_cast<double>(training.n_elem - window);  // 0 ... N − W − 1
  until = std::min(until, settings.steps);
  while (state.step < until) {
    //! [training-step]
    std::vector<arma::uvec> windows;
    for (arma::uword b = 0; b < settings.batch_windows; ++b) {
      const auto offset = static_cast<arma::uword>(std::floor(rng.random() * offsets));
      windows.push_back(training.subvec(offset, offset + window));  // max_length + 1 tokens
    }
    TransformerStep step = transformer_step(state.weights, pack_sentences(windows), &uniform);
    std::vector<arma::mat> gradients;
    for (const NamedParameter& g : model_parameters(step.gradients))
      gradients.push_back(*g.value);
    clip_grad_norm(gradients, settings.clip_norm);
    const double rate = learning_rate(schedule, state.step);
    std::vector<arma::mat*> parameters;
    for (const NamedParameter& p : model_parameters(state.weights))
      parameters.push_back(p.value);
    optimizer.step(parameters, gradients, rate);
    //! [training-step]
    ++state.step;
    state.loss_sum += step.loss;
    ++state.loss_count;
    if (progress)
      progress(state.step, step.loss);
    if (state.step % settings.evaluate_every == 0 || state.step == settings.steps) {
      state.curve.push_back(
          {.step = state.step,
           .learning_rate = rate,
           .training_loss = state.loss_sum / static_cast<double>(state.loss_count),
           .held_out_bits = bits_per_byte(state.weights, held_out, settings.evaluation_tokens)});
      state.loss_sum = 0.0;
      state.loss_count = 0;
    }
  }
  state.optimizer = optimizer.state();
  state.rng_state = rng.bit_generator().state();
  state.rng_increment = rng.bit_generator().increment();
}

}  // namespace attn::gpt
