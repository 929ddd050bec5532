/// \file
/// \brief Checkpoints of a GPT's training run (chapter 11): the run saved to one file and
///        resumed from it, bit for bit.
///
/// The file, every number little-endian (k curve points holding o other measurements in all, s
/// steps taken, P parameters):
///
/// | bytes | what |
/// |---|---|
/// | 8 | the magic `ATTN-GPT` |
/// | 4 | the format's version, 3 |
/// | 8 + n | the run's fingerprint (run_fingerprint()): its length, its text |
/// | 48 | the step, AdamW's step count, the random stream's state and increment |
/// | 24 + 49k + 8o | the batch losses summed and counted, k, the curve points (below) |
/// | 8 + 16s | s, the history: each step's loss and gradient norm |
/// | 8, then P times | P; each parameter's name, rows, columns, values (parameters()) |
/// | 8, then T times | T; AdamW's moment pairs, one per trained parameter (none at step 0) |
/// | 8 | FNV-1a (64-bit) of every byte before it |
///
/// The trained parameters are trained_parameters()'s: all of them, unless a ParameterGroup of the
/// run's settings freezes some.
///
/// A curve point is its step, learning rate, batch loss and held-out measurement (8 bytes
/// each), one byte saying whether the training measurement was taken (1) or not (0), that
/// measurement (0 when not taken), and the count of its other measurements (8 bytes), then each
/// of them (8 bytes).
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
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

namespace attn::gpt {

/// \brief FNV-1a, 64-bit, of \p bytes: from \f$h = \mathtt{0xcbf29ce484222325}\f$, for each
///        byte \f$b\f$, \f$h \leftarrow (h \oplus b) \cdot \mathtt{0x100000001b3} \bmod 2^{64}\f$.
///        The hash a fingerprint names a text by, and a checkpoint's checksum.
/// \param bytes any bytes. \return the hash.
std::uint64_t fnv1a(std::string_view bytes);

/// \brief What makes a checkpoint belong to a run, as text: the model's sizes and choices
///        (describe()), the training settings, FNV-1a hashes of the tokenizer's merges and of the
///        training text, and how the run measures its curve. A checkpoint is resumed only by a run
///        with the same fingerprint.
/// \param model,settings the run. \param tokenizer its BPE. \param training its training text.
/// \param evaluation what its Evaluation measures, in words (such as "bits per byte of the
///        first 8192 held-out tokens"): a curve measured otherwise is another run's.
/// \return one line per field, such as `d_model 128`.
std::string run_fingerprint(const TransformerConfig& model, const TrainingSettings& settings,
                            const text::BpeTokenizer& tokenizer, std::string_view training,
                            std::string_view evaluation);

/// \brief run_fingerprint() for a run whose data a program draws rather than reads from a text
///        (chapter 13's repeated random tokens): the model's sizes and choices, the training
///        settings, then the data and the measurement, each named in words.
/// \param model,settings the run. \param data what it trains on, in words that change when the
///        data does. \param evaluation what its Evaluation measures, in words.
/// \return one line per field.
std::string run_fingerprint(const TransformerConfig& model, const TrainingSettings& settings,
                            std::string_view data, std::string_view evaluation);

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

/// \brief The largest magnitude a weight may have in a checkpoint: 10⁴. Trained weights are of
///        order 1 (the largest in chapter 11's and chapter 12's 106 trained models is 2.2), and a
///        forward pass multiplies weights four deep (the attention scores: the normalised input
///        times \f$W_Q\f$ and \f$W_K\f$, with the norms' gains), so a forged 10³⁰⁰, finite
///        itself, would overflow later in a computation that cannot name the file, where 10⁴
///        keeps those products far inside float32's range (10³⁸), in which chapter 11 trains.
inline constexpr double kLargestCheckpointWeight = 1e4;

/// \brief Reads a checkpoint written by save_checkpoint() for the run \p fingerprint names,
///        and checks it as a whole before returning any of it: every field against the others
///        and against \p settings, so that what is returned is a state train() could have left
///        (a file whose checksum was recomputed after damage, or made by hand, is refused).
///
/// Each field is read, then checked:
/// - the file: readable, the magic, the version, whole, the checksum; the fingerprint equal to
///   \p fingerprint; each count (curve points, step records) within the bytes left, before
///   anything is allocated for it; the parameters' number, names and shapes those of \p model;
///   no byte after the last field;
/// - every number finite; each weight within ±kLargestCheckpointWeight; a curve point's flag 0
///   or 1, and its training measurement +0 when the flag is 0 (as saved);
/// - the step between 0 and `settings.steps`; the history one record a step; AdamW's step count
///   equal to the step; no moments at step 0 and one pair per trained parameter after it;
/// - each history record's loss and gradient norm at least 0;
/// - the curve's points where the run measures (step 0 with `evaluate_at_start`, every
///   `evaluate_every` steps, the last step), each with the schedule's learning rate for its
///   last step (within \f$10^{-12}\f$, the cosine's last bit being the C library's) and, bit
///   for bit, the training loss its history's losses give (the mean since the point before, as
///   train() adds and divides them; at step 0, the first step's loss);
/// - the batch losses' count equal to the steps since the curve's last point, and their sum
///   equal to those steps' losses added in order;
/// - the random stream's increment that of `default_rng(settings.seed)` (its state may be any);
/// - each second moment at least 0, and each first moment within what AdamW's recurrence
///   allows beside it: \f$m^2 \le \frac{(1-\beta_1)^2}{1-\beta_2}
///   \sum_{k<t} (\beta_1^2/\beta_2)^k \, v\f$ after \f$t\f$ steps (Cauchy–Schwarz on the
///   two running sums), which bounds every later update by the learning rate times a constant,
///   however small \f$v\f$ is.
///
/// The measurements of the curve (held-out and training) are the run's Evaluation's, which the
/// file cannot be checked against: they are only required to be finite. Nor can a weight be
/// checked beyond its magnitude. A caller that needs more of them (chapter 11 needs every
/// point's training measurement) checks that itself.
/// \param path the file. \param fingerprint the run's. \param model the run's sizes.
/// \param settings the run's training settings, those its fingerprint names.
/// \return the state it holds.
/// \throws InputError naming the file, the field and the values that disagree, for any of the
///         above; also if `settings.evaluate_every` is below 1, or the schedule of \p settings
///         is one train() refuses (math::learning_rate()).
TrainingState load_checkpoint(const std::string& path, const std::string& fingerprint,
                              const TransformerConfig& model, const TrainingSettings& settings);

/// \brief The state a run goes on from: its checkpoint at \p path, read and checked whole by
///        load_checkpoint(), if there is one; otherwise a fresh start(), as when \p path is empty
///        (a run that keeps no checkpoint). Chapters 11 and 12 begin every run with it.
/// \param path the checkpoint, or empty for none. \param fingerprint,model,settings the run, as
///        load_checkpoint() takes them.
/// \return the checkpoint's state, or step 0.
/// \throws InputError as load_checkpoint() does, for a file that is there but is not this run's
///         or is not whole; as start() does, for a fresh run.
TrainingState resume_or_start(const std::string& path, const std::string& fingerprint,
                              const TransformerConfig& model, const TrainingSettings& settings);

/// \brief A whole run for a chapter that trains once and keeps what it trained (chapters 12
///        and 13): the finished run read back from \p path; otherwise trained from step 0 by
///        \p train and, when \p path is not empty, saved there. A file that is another run's, one
///        the loader refuses, or one of a run that stopped before its last step is not resumed:
///        the run is trained again from the start, and a line on \p log says why.
/// \param log where to say why a checkpoint was not used. \param path the checkpoint, or empty
///        for none. \param fingerprint,model,settings the run, as resume_or_start() takes them.
/// \param train trains a fresh state to settings.steps (train() with the run's data).
/// \return the finished run.
/// \throws InputError if the checkpoint cannot be written, and as \p train does.
TrainingState trained_once(std::ostream& log, const std::string& path,
                           const std::string& fingerprint, const TransformerConfig& model,
                           const TrainingSettings& settings,
                           const std::function<void(TrainingState& state)>& train);

}  // namespace attn::gpt
