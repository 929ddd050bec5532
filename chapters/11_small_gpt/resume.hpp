/// \file
/// \brief Chapter 11's run started or resumed (`--checkpoint FILE`): the checkpoint read, checked
///        whole, and refused as a bad command line when it cannot be this run's.
#pragma once

#include <attn/gpt/model.hpp>
#include <attn/gpt/trainer.hpp>

#include <string>

namespace attn::ch11 {

/// \brief The state this chapter's run starts from, gpt::resume_or_start()'s: a fresh one when
///        \p checkpoint is empty or names no file; otherwise the checkpoint, read and checked as
///        a whole by gpt::load_checkpoint(), with what this chapter needs of it besides: a
///        training-text measurement at every point of the curve, which its table and figure
///        print (gpt::bits_on_both(), its measurement, takes one at every point).
/// \param checkpoint the file, or empty for none. \param fingerprint,model,settings the run.
/// \return the state to train on from.
/// \throws attn::book::CommandLineError for `--checkpoint`, with the loader's message (naming
///         the file, the field and the values that disagree) and what to do, so that the
///         chapter exits with 2 and its usage before anything is trained or written.
gpt::TrainingState opening_state(const std::string& checkpoint, const std::string& fingerprint,
                                 const gpt::TransformerConfig& model,
                                 const gpt::TrainingSettings& settings);

}  // namespace attn::ch11
