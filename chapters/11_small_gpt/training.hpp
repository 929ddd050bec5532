/// \file
/// \brief Chapter 11's training run: a GPT-style transformer trained on token windows of the
///        King James Bible with AdamW, warm-up and cosine decay, gradient clipping and dropout,
///        measured in bits per byte of held-out text.
///
/// Every random number of a run (the initial weights, the windows of each batch, every
/// dropout mask) comes from one numpy `default_rng(seed)` stream, so a seed fixes the run; the
/// stream's position is part of the state a checkpoint keeps.
#pragma once

#include <attn/math/optimizer.hpp>
#include <attn/math/transformer.hpp>
#include <attn/numpy/numpy_random.hpp>
#include <attn/text/bpe.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace attn::gpt {

/// \brief Everything that fixes a training run besides the model's sizes.
struct TrainingSettings {
  std::int64_t steps = 0;             ///< optimiser steps in all.
  arma::uword batch_windows = 0;      ///< windows of max_length + 1 tokens per step.
  double peak_learning_rate = 0.0;    ///< \f$\eta_{\max}\f$, reached at the end of the warm-up.
  double final_learning_rate = 0.0;   ///< \f$\eta_{\min}\f$, where the cosine ends (step T).
  std::int64_t warmup_steps = 0;      ///< steps of the linear warm-up.
  double weight_decay = 0.0;          ///< AdamW's \f$\lambda\f$, for the matrices inside blocks.
  double clip_norm = 0.0;             ///< the largest global gradient norm let through.
  std::int64_t evaluate_every = 0;    ///< steps between two held-out measurements (at least 1).
  std::size_t evaluation_tokens = 0;  ///< held-out tokens scored at each of them.
  std::uint64_t seed = 0;             ///< of the one random stream.
};

/// \brief The schedule of \p settings as the optimiser reads it: step \f$t < W\f$ of the
///        warm-up runs at \f$\eta_{\max}(t + 1)/(W + 1)\f$ (so the first step is not taken at
///        rate 0), then the rate falls from \f$\eta_{\max}\f$ to \f$\eta_{\min}\f$ along a
///        cosine until the last step.
/// \param settings the run. \return the schedule (attn::learning_rate() reads it).
WarmupCosine schedule_of(const TrainingSettings& settings);

/// \brief The weights AdamW decays: the matrices inside the blocks (\f$W_Q, W_K, W_V, W_O,
///        W_1, W_2\f$). Embeddings, positions, biases and layer norms are not decayed: biases and
///        norms as in GPT-1's, minGPT's and nanoGPT's practice; the embedding is left out too
///        because, tied, it is also the output layer and rows of rare tokens would only shrink.
/// \param weights the model. \return one flag per model_parameters() entry.
std::vector<bool> decayed_parameters(TransformerWeights& weights);

/// \brief One point of the learning curves.
struct CurvePoint {
  std::int64_t step = 0;       ///< steps taken when it was measured.
  double learning_rate = 0.0;  ///< the rate of the last step.
  double training_loss = 0.0;  ///< mean batch loss (nats per token) since the last point.
  double held_out_bits = 0.0;  ///< bits per byte on the evaluation tokens.
};

/// \brief Where a run stands: all a checkpoint keeps.
struct TrainingState {
  TransformerWeights weights;     ///< the model.
  AdamWState optimizer;           ///< AdamW's moments and step count.
  std::int64_t step = 0;          ///< steps taken.
  numpy::UInt128 rng_state;       ///< the random stream's position...
  numpy::UInt128 rng_increment;   ///< ...and its increment.
  std::vector<CurvePoint> curve;  ///< the measurements so far.
  double loss_sum = 0.0;          ///< batch losses since the last point, summed...
  std::int64_t loss_count = 0;    ///< ...and counted.
};

/// \brief A fresh run: weights drawn from `default_rng(seed).normal` as init_transformer()
///        says, nothing else drawn yet.
/// \param model the sizes. \param settings the run. \return step 0.
TrainingState start(const TransformerConfig& model, const TrainingSettings& settings);

/// \brief Tokens of a text with how many bytes they stand for, for bits per byte.
struct TokenText {
  arma::uvec tokens;   ///< the text, encoded.
  arma::uvec lengths;  ///< how many bytes each token stands for.
};

/// \brief Encodes \p text. \param tokenizer the BPE. \param text any bytes.
/// \return the tokens and their lengths in bytes.
TokenText encode(const text::BpeTokenizer& tokenizer, const std::string& text);

/// \brief The model's held-out cost in bits per byte: \f$\frac{1}{B \ln 2}\sum_i -\ln
///        p(t_i \mid t_{<i})\f$ over tokens 1 ... n − 1, \f$B\f$ their bytes.
///
/// Each token is predicted from at least half a context: windows of max_length tokens start
/// every max_length/2 tokens (every token if max_length is 1) and score the tokens no earlier
/// window scored: their second half, and all of the first window.
/// \param weights the model. \param text from encode(); \param tokens how many of its tokens
///        to score (all if 0 or more than it has).
/// \return bits per byte.
double bits_per_byte(const TransformerWeights& weights, const TokenText& text,
                     std::size_t tokens = 0);

/// \brief Called after every step: the step just taken and its batch loss.
using Progress = std::function<void(std::int64_t step, double loss)>;

/// \brief Trains from where \p state is until step \p until (at most settings.steps):
///        each step draws batch_windows windows at offsets \f$\lfloor u\,(N - \text{max\_length})
///        \rfloor\f$ (\f$u\f$ = `rng.random()`), runs transformer_step() with dropout, clips
///        the gradients, and takes an AdamW step at the schedule's rate; every evaluate_every
///        steps and at the last, a CurvePoint is added.
/// \param state the run. \param settings its settings. \param training all training tokens.
/// \param held_out the held-out text. \param until the step to stop at.
/// \param progress called after each step (may be empty).
/// \throws InputError if there are not max_length + 1 training tokens or evaluate_every is
///         below 1.
void train(TrainingState& state, const TrainingSettings& settings, const arma::uvec& training,
           const TokenText& held_out, std::int64_t until, const Progress& progress);

}  // namespace attn::gpt
