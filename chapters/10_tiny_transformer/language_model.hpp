/// \file
/// \brief Chapter 10's experiment: train the GPT of attn::gpt on the agreement language of
///        agreement.hpp, and measure it on the held-out sentences.
#pragma once

#include "agreement.hpp"
#include "attn/book/plot.hpp"
#include "attn/gpt/model.hpp"
#include "attn/gpt/trainer.hpp"

#include <armadillo>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace attn::ch10 {

/// \brief How a model is trained: a fixed number of Adam steps at a constant rate, nothing
///        decided on the way.
struct TrainingSettings {
  arma::uword steps = 0;            ///< Adam steps; training stops after exactly this many.
  arma::uword batch_sentences = 0;  ///< sentences per step, taken in order, wrapping round.
  double learning_rate = 0.0;       ///< Adam's \f$\eta\f$, constant.
  arma::uword evaluate_every = 0;   ///< steps between two measurements on the held-out set.
  std::uint64_t seed = 0;           ///< the seed of the initial weights (numpy's default_rng).
};

/// \brief \p settings as the GPT trainer reads them: Adam is AdamW with no decay, a constant
///        rate is a schedule with no warm-up and equal peak and final rates, and nothing is
///        clipped; the curve starts at step 0.
/// \param settings chapter 10's. \return the trainer's.
gpt::TrainingSettings trainer_settings(const TrainingSettings& settings);

/// \brief A model's loss and agreement accuracy on a set of sentences.
struct Evaluation {
  double loss = 0.0;  ///< mean cross-entropy per predicted word.
  Accuracy accuracy;  ///< at the agreement slots.
};

/// \brief The model's logits for every sentence (each `(n − 1 × V)`), computed in packed
///        batches. \param model the weights. \param sentences the set. \return one per sentence
///        (none for no sentence).
/// \throws InputError, ShapeError as pack_sentences() and transformer_forward() do (a
///         sentence of fewer than 2 tokens, an unknown token, a NaN in a weight).
std::vector<arma::mat> next_word_logits(const gpt::TransformerWeights& model,
                                        const std::vector<Sentence>& sentences);

/// \brief Loss and accuracy of \p model on \p sentences.
/// \param model the weights. \param sentences the set. \return both.
/// \throws InputError if \p sentences is empty, or as next_word_logits() and accuracy() do.
Evaluation evaluate(const gpt::TransformerWeights& model, const std::vector<Sentence>& sentences);

/// \brief What training recorded, at step 0 and every TrainingSettings::evaluate_every steps.
struct Curves {
  arma::rowvec steps;          ///< the steps measured.
  arma::rowvec training_loss;  ///< mean loss of the training batches since the last point
                               ///< (at step 0: the first batch's, before any update).
  arma::rowvec heldout_loss;   ///< on the held-out set.
  arma::rowvec accuracy;       ///< held-out agreement accuracy, every slot.
  arma::rowvec disagreeing;    ///< the same over the sentences whose nouns disagree.
};

/// \brief A trained model and its record.
struct Trained {
  gpt::TransformerWeights model;  ///< the weights after the last step.
  Evaluation before;              ///< on the held-out set before the first step.
  Evaluation after;               ///< on the held-out set after the last step.
  Curves curves;                  ///< the measurements along the way.
  double seconds = 0.0;           ///< the wall time of the training steps and measurements.
};

/// \brief Draw a model from \p settings.seed, train it on \p training and measure it on
///        \p heldout (which never influences the weights).
/// \param config the model's sizes. \param settings the schedule.
/// \param training,heldout the two sets. \param progress may be empty.
/// \return the model and its measurements.
/// \throws InputError if a setting is 0, the learning rate is not positive and finite (NaN
///         included), or a set is empty; or as gpt::train() does.
Trained train(const gpt::TransformerConfig& config, const TrainingSettings& settings,
              const std::vector<Sentence>& training, const std::vector<Sentence>& heldout,
              const gpt::Progress& progress = {});

/// \brief One model to train: its sizes and its schedule.
struct Run {
  gpt::TransformerConfig config;  ///< the model's sizes.
  TrainingSettings settings;      ///< its schedule and seed.
};

/// \brief train() each of \p runs, side by side on the machine's cores, each on one thread.
///        Every run is as deterministic as on its own; only the wall time changes.
/// \param runs the models. \param training,heldout the two sets.
/// \return the held-out evaluation after training, in the order of \p runs; none for no run.
/// \throws InputError as train() does, for the first run that fails.
std::vector<Evaluation> train_side_by_side(const std::vector<Run>& runs,
                                           const std::vector<Sentence>& training,
                                           const std::vector<Sentence>& heldout);

/// \brief Where one head looks from one kind of slot, averaged over sentences.
struct HeadFocus {
  arma::uword layer = 0;    ///< from 0.
  arma::uword head = 0;     ///< from 0.
  double subject = 0.0;     ///< mean weight on N1.
  double distractor = 0.0;  ///< mean weight on N2.
  double verb = 0.0;        ///< mean weight on was/were (0 from a slot before it: causal).
  double self = 0.0;        ///< mean weight on the slot's own word.
};

/// \brief For every layer and head, the mean attention weight that the query at each
///        sentence's \p slot puts on the subject noun, the distractor noun, "was/were" and
///        itself.
/// \param model the weights. \param sentences the set.
/// \param slot picks the query row of a sentence (for example its Sentence::pronoun_slot).
/// \return layer by layer, head by head.
/// \throws InputError if \p sentences is empty, or the slot, the nouns or the verb of a
///         sentence is not one of its input words (all four are named).
/// \throws ShapeError if \p model has not `layers × heads` heads as its config says.
std::vector<HeadFocus> head_focus(const gpt::TransformerWeights& model,
                                  const std::vector<Sentence>& sentences,
                                  const std::function<arma::uword(const Sentence&)>& slot);

/// \brief Every head's weights for one sentence's input words, layer by layer, head by head.
/// \param model the weights. \param sentence the sentence (its last word is not an input).
/// \return `(n − 1 × n − 1)` grids.
/// \throws InputError if \p sentence has fewer than 2 tokens, or as transformer_forward() does.
std::vector<arma::mat> attention_grids(const gpt::TransformerWeights& model,
                                       const Sentence& sentence);

/// \brief A figure of attention_grids(): one panel per head, side by side, labelled with the
///        sentence's words. \param name the figure's file stem. \param model the weights.
/// \param sentence the sentence. \return the figure, for Plotter::heatmaps().
/// \throws InputError as attention_grids() does.
book::HeatmapRow attention_figure(const std::string& name, const gpt::TransformerWeights& model,
                                  const Sentence& sentence);

}  // namespace attn::ch10
