#include "resume.hpp"

#include <attn/book/chapter.hpp>
#include <attn/gpt/checkpoint.hpp>
#include <attn/math/validate.hpp>

#include <fmt/format.h>

namespace attn::ch11 {

gpt::TrainingState opening_state(const std::string& checkpoint, const std::string& fingerprint,
                                 const gpt::TransformerConfig& model,
                                 const gpt::TrainingSettings& settings) {
  try {
    gpt::TrainingState state = gpt::resume_or_start(checkpoint, fingerprint, model, settings);
    for (std::size_t k = 0; k < state.curve.size(); ++k)
      if (!state.curve[k].measured.training.has_value())
        throw math::InputError(fmt::format(
            "{}: the checkpoint's curve point {} (step {}) has no training-text measurement, "
            "which this chapter's runs take at every point",
            checkpoint, k, state.curve[k].step));
    return state;
  } catch (const math::InputError& e) {
    throw book::CommandLineError(
        "--checkpoint", fmt::format("{} (delete it to train again, or name another file with "
                                    "--checkpoint); nothing was trained or written",
                                    e.what()));
  }
}

}  // namespace attn::ch11
