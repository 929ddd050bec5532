#include "attn/gpt/trainer.hpp"

#include <attn/gpt/float32_step.hpp>
#include <attn/gpt/forward.hpp>
#include <attn/math/validate.hpp>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <unistd.h>

#include <algorithm>
#include <ostream>

namespace attn::gpt {

math::WarmupCosine schedule_of(const TrainingSettings& s) {
  return {.peak = s.peak_learning_rate,
          .minimum = s.final_learning_rate,
          .warmup_steps = s.warmup_steps,
          .total_steps = s.steps,
          // step t of the warm-up takes (t + 1)/(W + 1) of the peak: none is wasted at rate 0
          .start_factor = 1.0 / static_cast<double>(s.warmup_steps + 1)};
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

NextBatch window_batches(const arma::uvec& tokens, arma::uword window, arma::uword batch) {
  return [tokens, window, batch](std::int64_t, numpy::Generator& rng) {
    return pack_sentences(random_windows(tokens, window, batch, rng));
  };
}

bool stderr_is_terminal() {
  return isatty(STDERR_FILENO) != 0;
}

Progress progress_line(std::ostream& log, bool terminal) {
  if (!terminal)
    return {};
  return [&log](const StepReport& r) {
    fmt::print(log, "\rtraining: step {} of {}, loss {:.3f}, gradient norm {:.3f} {}", r.step,
               r.steps, r.loss, r.gradient_norm, r.step == r.steps ? "\n" : "");
    log.flush();
  };
}

void train(TrainingState& state, const TrainingSettings& settings, const NextBatch& next_batch,
           const Evaluation& evaluate, std::int64_t until, const Progress& progress) {
  if (settings.steps <= 0 || settings.batch == 0)
    throw math::InputError(fmt::format("train: {} steps of {} sequences; both must be at least 1",
                                       settings.steps, settings.batch));
  if (settings.evaluate_every <= 0)
    throw math::InputError(
        fmt::format("train: evaluate_every is {}; it must be at least 1", settings.evaluate_every));
  if (!(settings.clip_norm > 0))
    throw math::InputError(
        fmt::format("train: the clip norm {} must be positive", settings.clip_norm));
  const math::WarmupCosine schedule = schedule_of(settings);
  math::learning_rate(schedule, 0);  // refuses a bad schedule before anything moves
  numpy::Generator rng(numpy::PCG64(state.rng_state, state.rng_increment));
  const math::UniformDraws uniform = [&rng] {
    return rng.random();
  };
  math::AdamW optimizer(decay_flags(state.weights), settings.weight_decay, settings.beta1,
                        settings.beta2);
  optimizer.restore(state.optimizer);
  // The step in the run's precision: the readable float64 one, or the float32 one.
  std::optional<Float32Step> float32;
  if (settings.precision == Precision::float32)
    float32.emplace(state.weights.config);
  TransformerStep reference;
  const auto forward_and_backward = [&](const PackedBatch& batch) -> const TransformerStep& {
    if (float32)
      return float32->run(state.weights, batch);
    reference = transformer_step(state.weights, batch, uniform);
    return reference;
  };
  const std::vector<Parameter> parameters = gpt::parameters(state.weights);
  std::vector<arma::mat*> values;  // into state.weights, whose matrices stay where they are
  for (const Parameter& p : parameters)
    values.push_back(p.value);
  std::vector<arma::mat> gradients(values.size());  // the same matrices at every step
  const auto copy_gradients = [&](const TransformerWeights& from) {
    std::size_t k = 0;
    for (const ConstParameter& g : gpt::parameters(from))
      gradients[k++] = *g.value;
  };
  if (settings.evaluate_at_start && state.step == 0 && state.curve.empty())
    state.curve.push_back({.step = 0,
                           .learning_rate = math::learning_rate(schedule, 0),
                           .training_loss = 0.0,  // the first step's loss, once it is taken
                           .measured = evaluate(state.weights)});
  until = std::min(until, settings.steps);
  while (state.step < until) {
    //! [training-step]
    const PackedBatch batch = next_batch(state.step, rng);
    const TransformerStep& step = forward_and_backward(batch);
    copy_gradients(step.gradients);
    const double norm = math::clip_grad_norm(gradients, settings.clip_norm);
    const double rate = math::learning_rate(schedule, state.step);
    optimizer.step(values, gradients, rate);
    //! [training-step]
    ++state.step;
    if (state.step == 1 && settings.evaluate_at_start)
      state.curve.front().training_loss = step.loss;  // the first batch, before any update
    state.loss_sum += step.loss;
    ++state.loss_count;
    state.history.push_back({.loss = step.loss, .gradient_norm = norm});
    if (progress)
      progress({.step = state.step,
                .steps = settings.steps,
                .loss = step.loss,
                .gradient_norm = norm,
                .learning_rate = rate});
    if (state.step % settings.evaluate_every == 0 || state.step == settings.steps) {
      state.curve.push_back(
          {.step = state.step,
           .learning_rate = rate,
           .training_loss = state.loss_sum / static_cast<double>(state.loss_count),
           .measured = evaluate(state.weights)});
      state.loss_sum = 0.0;
      state.loss_count = 0;
    }
  }
  state.optimizer = optimizer.state();
  state.rng_state = rng.bit_generator().state();
  state.rng_increment = rng.bit_generator().increment();
}

}  // namespace attn::gpt
