/// \file
/// \brief A run's training step, chosen once by its precision: the readable transformer_step()
///        in double, or the Float32Step in `float`. The trainer makes one per run (make_step())
///        and hands it to the run's measurements too, so that training and scoring share one
///        float32 step and its working memory.
#pragma once

#include <attn/gpt/batch.hpp>
#include <attn/gpt/float32_step.hpp>
#include <attn/gpt/forward.hpp>
#include <attn/gpt/model.hpp>
#include <attn/math/layers.hpp>

#include <armadillo>

#include <optional>
#include <string_view>

namespace attn::gpt {

/// \brief The arithmetic of a training step.
enum class Precision {
  float64,  ///< transformer_step(): the readable reference, equal to PyTorch within 1e-10.
  float32,  ///< Float32Step: the same step in `float`, written for speed (float32_step.hpp).
};

/// \brief The name of a precision (`"float32"`). \param precision the choice. \return its name.
std::string_view to_string(Precision precision);

/// \brief One model's training step in one precision.
class Step {
 public:
  /// \brief A step for models of \p config, in \p precision (make_step()).
  /// \param config the sizes and choices. \param precision the arithmetic.
  /// \throws InputError as check_config() does, or as Float32Step's constructor does for a
  ///         configuration it does not support (Float32Step::refusal()).
  Step(const TransformerConfig& config, Precision precision);

  /// \brief The step's precision. \return it.
  [[nodiscard]] Precision precision() const { return precision_; }

  /// \brief The configuration it was made for. \return it.
  [[nodiscard]] const TransformerConfig& config() const { return config_; }

  /// \brief Refuses a model other than the one this step was made for.
  /// \param config the model's configuration. \param who the caller, to begin the message.
  /// \throws InputError naming the first field that differs (difference()).
  void require_made_for(const TransformerConfig& config, std::string_view who) const;

  /// \brief Forward pass, mean cross-entropy, backward pass: transformer_step() with dropout
  ///        drawn from \p dropout_draws, or Float32Step::run() (whose models drop nothing out).
  /// \param weights the model. \param batch from pack_sentences().
  /// \param dropout_draws uniform draws for dropout, or empty.
  /// \return the loss and the gradients, this object's until the next call.
  /// \throws as transformer_step() or Float32Step::run() does.
  const TransformerStep& run(const TransformerWeights& weights, const PackedBatch& batch,
                             const math::UniformDraws& dropout_draws = {});

  /// \brief The float32 step, to score text with its working memory: `nullptr` in float64.
  /// \return the Float32Step, or `nullptr`.
  Float32Step* float32() { return float32_ ? &*float32_ : nullptr; }

 private:
  TransformerConfig config_;
  Precision precision_;
  std::optional<Float32Step> float32_;
  TransformerStep reference_;  // the float64 step's last result
};

/// \brief The one place a run's step is chosen: Step(config, precision).
/// \param config the sizes and choices. \param precision the arithmetic.
/// \return the step. \throws as Step's constructor does.
Step make_step(const TransformerConfig& config, Precision precision);

}  // namespace attn::gpt
