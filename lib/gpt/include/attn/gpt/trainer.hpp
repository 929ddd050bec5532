/// \file
/// \brief The GPT's one training loop (chapters 10 to 12): batches from a source the caller
///        chooses, AdamW with a warm-up and cosine schedule, gradient clipping, dropout, and a
///        measurement every few steps, as PyTorch's loop does it:
/// \code
///   step = transformer_step(weights, batch, dropout)   // forward, cross-entropy, backward
///   norm = clip_grad_norm(gradients, clip_norm)         // reported with each step
///   optimizer.step(parameters, gradients, learning_rate(schedule, t))
/// \endcode
///
/// Every random number of a run (the initial weights, the batches a source draws, every
/// dropout mask) comes from one numpy `default_rng(seed)` stream, so a seed fixes the run; the
/// stream's position is part of the state a checkpoint keeps (checkpoint.hpp). Chapter 10's
/// constant-rate Adam is this loop with no warm-up, equal peak and final rates, no decay and
/// no clipping.
#pragma once

#include <attn/gpt/batch.hpp>
#include <attn/gpt/model.hpp>
#include <attn/gpt/step.hpp>
#include <attn/math/optimizer.hpp>
#include <attn/numpy/numpy_random.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace attn::gpt {

/// \brief How some of a model's parameters are trained: PyTorch's parameter groups (nanoGPT's
///        `configure_optimizers()` makes two, decayed and not), with `requires_grad=False` for a
///        frozen group. Fine-tuning freezes a base model's parameters and trains the rest.
struct ParameterGroup {
  /// The parameters whose names (parameters()) begin with it; "" is all. End it with a dot
  /// ("blocks.1."), or "blocks.1" takes blocks.10 too.
  std::string prefix = {};
  bool frozen = false;  ///< never changed: no gradient is applied, no moments are kept.
  /// Its learning rate is the schedule's times this (torch's equal: a `LambdaLR` of the
  /// schedule over groups whose initial rates are the peak times their factors).
  double rate_factor = 1.0;
  /// Its \f$\lambda\f$ for the parameters that decays() (the others never decay); unset, the
  /// settings' weight_decay.
  std::optional<double> weight_decay = {};
};

/// \brief Everything that fixes a training run besides the model's sizes and its data.
struct TrainingSettings {
  std::int64_t steps = 0;            ///< optimiser steps in all.
  arma::uword batch = 0;             ///< sequences per step, each of at most max_length + 1.
  double peak_learning_rate = 0.0;   ///< \f$\eta_{\max}\f$, reached at the end of the warm-up.
  double final_learning_rate = 0.0;  ///< \f$\eta_{\min}\f$, where the cosine ends (step T).
  std::int64_t warmup_steps = 0;     ///< steps of the linear warm-up.
  double weight_decay = 0.0;         ///< AdamW's \f$\lambda\f$, for the parameters that decay().
  /// AdamW's \f$\beta_1\f$, the decay of its running mean of the gradients (PyTorch's default).
  double beta1 = 0.9;
  /// AdamW's \f$\beta_2\f$, the decay of its running mean of the squared gradients (PyTorch's
  /// default; GPT-2 and nanoGPT train with 0.95, which forgets old gradients sooner).
  double beta2 = 0.999;
  /// The largest global gradient norm let through; infinity clips nothing.
  double clip_norm = std::numeric_limits<double>::infinity();
  std::int64_t evaluate_every = 0;  ///< steps between two measurements (at least 1).
  bool evaluate_at_start = false;   ///< whether the curve begins with a point at step 0.
  std::uint64_t seed = 0;           ///< of the one random stream.
  /// What each step computes in. The weights, the optimiser's moments and the update are in
  /// double either way.
  Precision precision = Precision::float64;
  /// The parameter groups: the first whose prefix begins a parameter's name says how it is
  /// trained; a parameter no group names is trained as the settings say. Empty: all alike.
  std::vector<ParameterGroup> groups = {};
};

/// \brief One parameter a run trains, and how: AdamW's decay and rate factor for it.
struct TrainedParameter {
  Parameter parameter;         ///< where it is, its name and role.
  std::size_t index = 0;       ///< its place in parameters().
  math::AdamW::Update update;  ///< its \f$\lambda\f$ (0 if it does not decay) and factor.
};

/// \brief The parameters a run trains, in the order of parameters(), each with its update:
///        the frozen ones left out. The trainer steps these, clips their gradients' norm and
///        keeps their moments; a checkpoint pairs its moments with them.
/// \param weights the model. \param settings the run (its weight_decay and groups).
/// \return the trained parameters, pointing into \p weights.
/// \throws InputError if a group's rate factor or decay is negative or not finite, or a group
///         names no parameter (a prefix with a typo would otherwise freeze or change nothing).
std::vector<TrainedParameter> trained_parameters(TransformerWeights& weights,
                                                 const TrainingSettings& settings);

/// \brief The schedule of \p settings as the optimiser reads it: step \f$t < W\f$ of the
///        warm-up runs at \f$\eta_{\max}(t + 1)/(W + 1)\f$ (so the first step is not taken at
///        rate 0), then the rate falls from \f$\eta_{\max}\f$ along a cosine and reaches
///        \f$\eta_{\min}\f$ at step \f$T\f$, one past the last step taken (step \f$T - 1\f$ is
///        just above it); with equal rates it is constant.
/// \param settings the run. \return the schedule (attn::math::learning_rate() reads it).
math::WarmupCosine schedule_of(const TrainingSettings& settings);

/// \brief What a run's Evaluation measures: one number on text the run never trains on and,
///        where the run takes it, the same number measured the same way on its training text,
///        so that a curve can show whether the two part (the model learning its training text
///        by heart) or not; and any other numbers the run follows through its training.
struct Measurement {
  double held_out = 0.0;           ///< on held-out text (a validation split).
  std::optional<double> training;  ///< the same measure on training text, if taken.
  /// Other numbers the run follows, in an order the run fixes (chapter 13's models: the best
  /// induction score of any head); a checkpoint keeps them with the point.
  std::vector<double> others = {};
};

/// \brief One point of the learning curves.
struct CurvePoint {
  std::int64_t step = 0;       ///< steps taken when it was measured.
  double learning_rate = 0.0;  ///< the rate of the last step (at step 0: of the first).
  double training_loss = 0.0;  ///< mean batch loss (nats per token) of the steps since the
                               ///< last point; at step 0, the first batch's, before any update
                               ///< (filled in when the first step is taken; 0 until then).
  Measurement measured;        ///< what the run's Evaluation returned.
};

/// \brief What one step left in the run's history: enough to draw the loss and the gradient
///        norm at every step, where the curve has a point every few steps.
struct StepRecord {
  double loss = 0.0;           ///< the batch's mean loss before the update (nats per token).
  double gradient_norm = 0.0;  ///< the trained parameters' gradients' norm, before clipping.
};

/// \brief Where a run stands: all a checkpoint keeps.
struct TrainingState {
  TransformerWeights weights;       ///< the model.
  math::AdamWState optimizer;       ///< AdamW's moments and step count.
  std::int64_t step = 0;            ///< steps taken.
  numpy::UInt128 rng_state;         ///< the random stream's position...
  numpy::UInt128 rng_increment;     ///< ...and its increment.
  std::vector<CurvePoint> curve;    ///< the measurements so far.
  std::vector<StepRecord> history;  ///< one record per step taken, in order.
  double loss_sum = 0.0;            ///< batch losses since the last point, summed...
  std::int64_t loss_count = 0;      ///< ...and counted.
};

/// \brief A fresh run: weights drawn from `default_rng(seed).normal` as init_transformer()
///        says, nothing else drawn yet.
/// \param model the sizes. \param settings the run. \return step 0.
/// \throws InputError as init_transformer() does.
TrainingState start(const TransformerConfig& model, const TrainingSettings& settings);

/// \brief The batch a step trains on: \p step is the step about to be taken (from 0), \p rng
///        the run's stream, for a source that draws (random_windows()).
using NextBatch = std::function<PackedBatch(std::int64_t step, numpy::Generator& rng)>;

/// \brief Chapter 11's batches, nanoGPT's: each step packs random_windows() of \p tokens.
/// \param tokens the training text (copied into the source). \param window the model's
///        max_length. \param batch windows per step. \return the source.
NextBatch window_batches(const arma::uvec& tokens, arma::uword window, arma::uword batch);

/// \brief The measurement of a CurvePoint, for example bits per byte of held-out text and of
///        training text. It must not change the weights nor draw from the run's stream. It is
///        given the run's Step, whose float32 step (and its working memory) it may score with.
using Evaluation = std::function<Measurement(const TransformerWeights& weights, Step& step)>;

/// \brief What one step did, for a progress line or a log.
struct StepReport {
  std::int64_t step = 0;       ///< steps taken, this one included.
  std::int64_t steps = 0;      ///< of the run.
  double loss = 0.0;           ///< the batch's mean loss before the update (nats per token).
  double gradient_norm = 0.0;  ///< the trained parameters' gradients' norm, before clipping.
  double learning_rate = 0.0;  ///< the rate the step took.
};

/// \brief Called after every step.
using Progress = std::function<void(const StepReport& report)>;

/// \brief Whether the process's stderr is a terminal. \return isatty(2).
bool stderr_is_terminal();

/// \brief A Progress that rewrites one line on \p log ("training: step 120 of 800, loss 1.234,
///        gradient norm 0.52") and ends it after the run's last step, when \p terminal;
///        otherwise (stderr is a file, a pipe, a test's capture) an empty Progress, so nothing
///        is written and a log gets no line per step.
/// \param log where to write, a chapter's stderr. \param terminal whether \p log shows on a
///        terminal. \return the callback.
Progress progress_line(std::ostream& log, bool terminal = stderr_is_terminal());

/// \brief Trains from where \p state is until step \p until (at most settings.steps): each
///        step takes \p next_batch, runs the run's Step (make_step(), made once for the call:
///        transformer_step() with dropout drawn from the run's stream, or in
///        Precision::float32 a Float32Step), clips the gradients to
///        settings.clip_norm, and takes an AdamW step at the schedule's rate, and records the
///        step's loss and gradient norm in the history; every evaluate_every steps and at the last,
///        a CurvePoint is added (and one at step 0 first, with evaluate_at_start). Stopping and
///        calling again, with the same state, continues exactly as one call would have.
/// \param state the run. \param settings its settings. \param next_batch its data.
/// \param evaluate its measurement. \param until the step to stop at.
/// \param progress called after each step (may be empty).
/// \throws InputError if a setting is out of range (no step, no batch, evaluate_every below 1,
///         a rate the schedule refuses, a negative decay, a clip norm that is not positive, a
///         \f$\beta\f$ outside [0, 1)), or as transformer_step(), Float32Step and AdamW::step()
///         do.
void train(TrainingState& state, const TrainingSettings& settings, const NextBatch& next_batch,
           const Evaluation& evaluate, std::int64_t until, const Progress& progress = {});

/// \brief The same with the caller's Step, kept from one call to the next: a run trained in
///        parts (a checkpoint between them) and scored afterwards uses one step, and one
///        float32 working memory, from start to end.
/// \param step made by make_step() for the model's configuration and settings.precision.
/// \param state,settings,next_batch,evaluate,until,progress as above.
/// \throws InputError if \p step was made for another configuration or precision, naming
///         the field, and as above.
void train(Step& step, TrainingState& state, const TrainingSettings& settings,
           const NextBatch& next_batch, const Evaluation& evaluate, std::int64_t until,
           const Progress& progress = {});

}  // namespace attn::gpt
