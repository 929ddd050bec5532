/// \file
/// \brief Checkpoints of a GPT's training run (chapter 11): the run saved to one file and
///        resumed from it, bit for bit.
///
/// The file, every number little-endian (k curve points, s steps taken, P parameters):
///
/// | bytes | what |
/// |---|---|
/// | 8 | the magic `ATTN-GPT` |
/// | 4 | the format's version, 2 |
/// | 8 + n | the run's fingerprint (run_fingerprint()): its length, its text |
/// | 48 | the step, AdamW's step count, the random stream's state and increment |
/// | 24 + 41k | the batch losses summed and counted, k, the curve points (below) |
/// | 8 + 16s | s, the history: each step's loss and gradient norm |
/// | 8, then P times | P; each parameter's name, rows, columns, values (parameters()) |
/// | 8, then P times | AdamW's moment pairs (0 before its first step); each pair |
/// | 8 | FNV-1a (64-bit) of every byte before it |
///
/// A curve point is its step, learning rate, batch loss and held-out measurement (8 bytes
/// each), one byte saying whether the training measurement was taken (1) or not (0), and that
/// measurement (0 when not taken).
///
/// Doubles are stored as their 8 bytes, so nothing is rounded: a run resumed from a checkpoint
/// continues exactly as it would have without stopping. A file is written to a temporary name
/// beside its destination and renamed over it only when complete, so a run stopped while
/// saving leaves the previous checkpoint whole.
#pragma once

#include <attn/gpt/model.hpp>
#include <attn/gpt/trainer.hpp>
#include <attn/text/bpe.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace attn::gpt {

/// \brief FNV-1a, 64-bit, of \p bytes: from \f$h = \mathtt{0xcbf29ce484222325}\f$, for each
///        byte \f$b\f$, \f$h \leftarrow (h \oplus b) \cdot \mathtt{0x100000001b3} \bmod 2^{64}\f$.
///        The hash a fingerprint names a text by, and a checkpoint's checksum.
/// \param bytes any bytes. \return the hash.
std::uint64_t fnv1a(std::string_view bytes);

/// \brief What makes a checkpoint belong to a run, as text: the model's sizes, the training
///        settings, FNV-1a hashes of the tokenizer's merges and of the training text, and how
///        the run measures its curve. A checkpoint is resumed only by a run with the same
///        fingerprint.
/// \param model,settings the run. \param tokenizer its BPE. \param training its training text.
/// \param evaluation what its Evaluation measures, in words (such as "bits per byte of the
///        first 8192 held-out tokens"): a curve measured otherwise is another run's.
/// \return one line per field, such as `d_model 128`.
std::string run_fingerprint(const TransformerConfig& model, const TrainingSettings& settings,
                            const text::BpeTokenizer& tokenizer, std::string_view training,
                            std::string_view evaluation);

/// \brief Writes \p state to \p path (through `path.partial`, then a rename).
/// \param path the file. \param fingerprint run_fingerprint() of the run. \param state the run.
/// \throws InputError naming the file if it cannot be written.
void save_checkpoint(const std::string& path, const std::string& fingerprint,
                     const TrainingState& state);

/// \brief The part of load_checkpoint()'s refusals that needs only the file: \p path must be
///        a file that starts with the magic, of this format's version, whole, with a checksum
///        that matches its bytes. A command line can be checked with it before the run's
///        fingerprint is known.
/// \param path the file. \throws InputError naming the file and what is wrong.
void check_checkpoint_file(const std::string& path);

/// \brief Reads a checkpoint written by save_checkpoint() for the run \p fingerprint names.
/// \param path the file. \param fingerprint the run's. \param model the run's sizes.
/// \return the state it holds.
/// \throws InputError, naming the file and what is wrong, if it cannot be read, is not a
///         checkpoint, is truncated, fails its checksum (corrupted), or was made for another
///         run (the first field that differs is named, with both values); also if a count in
///         it announces more items than its remaining bytes can hold (checked before anything
///         is allocated for them), or a weight, a moment or a curve value is NaN or infinite,
///         which a file whose checksum was recomputed after damage could hold.
TrainingState load_checkpoint(const std::string& path, const std::string& fingerprint,
                              const TransformerConfig& model);

}  // namespace attn::gpt
