#include "attn/gpt/step.hpp"

#include "not_a_choice.hpp"

#include <attn/math/validate.hpp>

#include <fmt/format.h>

namespace attn::gpt {

std::string_view to_string(Precision precision) {
  switch (precision) {
    case Precision::float64:
      return "float64";
    case Precision::float32:
      return "float32";
  }
  not_a_choice("Step", "precision", precision);
}

Step::Step(const TransformerConfig& config, Precision precision)
    : config_(config), precision_(precision) {
  check_config(config);
  switch (precision) {
    case Precision::float64:
      return;
    case Precision::float32:
      float32_.emplace(config);
      return;
  }
  not_a_choice("Step", "precision", precision);
}

void Step::require_made_for(const TransformerConfig& config, std::string_view who) const {
  if (config != config_)
    throw math::InputError(fmt::format("{}: the step was made for another model: {}", who,
                                       difference(config_, config)));
}

const TransformerStep& Step::run(const TransformerWeights& weights, const PackedBatch& batch,
                                 const math::UniformDraws& dropout_draws) {
  if (float32_)
    return float32_->run(weights, batch);
  reference_ = transformer_step(weights, batch, dropout_draws);
  return reference_;
}

Step make_step(const TransformerConfig& config, Precision precision) {
  return Step(config, precision);
}

}  // namespace attn::gpt
