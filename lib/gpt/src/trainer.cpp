#include "attn/gpt/trainer.hpp"

#include <attn/gpt/forward.hpp>
#include <attn/math/validate.hpp>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
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

std::vector<TrainedParameter> trained_parameters(TransformerWeights& weights,
                                                 const TrainingSettings& settings) {
  for (const ParameterGroup& g : settings.groups) {
    if (!std::isfinite(g.rate_factor) || !(g.rate_factor >= 0))
      throw math::InputError(fmt::format(
          "train: the parameter group \"{}\" has the rate factor {}; it must be finite and at "
          "least 0",
          g.prefix, g.rate_factor));
    if (g.weight_decay && (!std::isfinite(*g.weight_decay) || !(*g.weight_decay >= 0)))
      throw math::InputError(fmt::format(
          "train: the parameter group \"{}\" has the weight decay {}; it must be finite and at "
          "least 0",
          g.prefix, *g.weight_decay));
  }
  const std::vector<Parameter> all = parameters(weights);
  std::vector<bool> named(settings.groups.size(), false);
  std::vector<TrainedParameter> trained;
  for (std::size_t k = 0; k < all.size(); ++k) {
    const Parameter& p = all[k];
    const ParameterGroup* group = nullptr;  // the first whose prefix begins its name
    for (std::size_t g = 0; g < settings.groups.size() && group == nullptr; ++g)
      if (p.name.starts_with(settings.groups[g].prefix)) {
        group = &settings.groups[g];
        named[g] = true;
      }
    if (group != nullptr && group->frozen)
      continue;
    const double decay =
        group != nullptr && group->weight_decay ? *group->weight_decay : settings.weight_decay;
    trained.push_back({.parameter = p,
                       .index = k,
                       .update = {.weight_decay = p.decays() ? decay : 0.0,
                                  .rate_factor = group != nullptr ? group->rate_factor : 1.0}});
  }
  for (std::size_t g = 0; g < settings.groups.size(); ++g)
    if (!named[g])
      throw math::InputError(fmt::format(
          "train: the parameter group \"{}\" names no parameter of the model (an earlier group "
          "takes them, or no name begins so)",
          settings.groups[g].prefix));
  return trained;
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
  Step step = make_step(state.weights.config, settings.precision);
  train(step, state, settings, next_batch, evaluate, until, progress);
}

void train(Step& model_step, TrainingState& state, const TrainingSettings& settings,
           const NextBatch& next_batch, const Evaluation& evaluate, std::int64_t until,
           const Progress& progress) {
  if (model_step.precision() != settings.precision)
    throw math::InputError(fmt::format("train: the step computes in {}, the settings say {}",
                                       to_string(model_step.precision()),
                                       to_string(settings.precision)));
  model_step.require_made_for(state.weights.config, "train");
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
  // The trained parameters (all of them, unless a group freezes some), each with its update.
  const std::vector<TrainedParameter> trained = trained_parameters(state.weights, settings);
  std::vector<math::AdamW::Update> updates;
  std::vector<arma::mat*> values;  // into state.weights, whose matrices stay where they are
  for (const TrainedParameter& p : trained) {
    updates.push_back(p.update);
    values.push_back(p.parameter.value);
  }
  math::AdamW optimizer(updates, settings.beta1, settings.beta2);
  optimizer.restore(state.optimizer);
  std::vector<arma::mat> gradients(values.size());  // the same matrices at every step
  const auto copy_gradients = [&](const TransformerWeights& from) {
    const std::vector<ConstParameter> all = gpt::parameters(from);
    for (std::size_t k = 0; k < trained.size(); ++k)
      gradients[k] = *all[trained[k].index].value;
  };
  if (settings.evaluate_at_start && state.step == 0 && state.curve.empty())
    state.curve.push_back({.step = 0,
                           .learning_rate = math::learning_rate(schedule, 0),
                           .training_loss = 0.0,  // the first step's loss, once it is taken
                           .measured = evaluate(state.weights, model_step)});
  until = std::min(until, settings.steps);
  while (state.step < until) {
    //! [training-step]
    const PackedBatch batch = next_batch(state.step, rng);
    const TransformerStep& step = model_step.run(state.weights, batch, uniform);
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
           .measured = evaluate(state.weights, model_step)});
      state.loss_sum = 0.0;
      state.loss_count = 0;
    }
  }
  state.optimizer = optimizer.state();
  state.rng_state = rng.bit_generator().state();
  state.rng_increment = rng.bit_generator().increment();
}

}  // namespace attn::gpt
