/// \file
/// \brief Chapter 12's experiment: GPT-2's block and each of today's changes to it (rotary
///        positions, no positions, grouped-query and multi-query attention, a sliding window,
///        RMSNorm, SwiGLU, and all of them together), trained from many seeds on chapter 11's
///        corpus, side by side, each run kept as a checkpoint; the design that fixes how many runs
///        there are and how they are compared, and the words a comparison's verdict is given in.
#pragma once

#include <11_small_gpt/small_gpt.hpp>
#include <attn/gpt/model.hpp>
#include <attn/gpt/trainer.hpp>
#include <attn/gpt/variants.hpp>
#include <attn/stats/experiment.hpp>

#include <armadillo>

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

/// \brief Chapter 12's own material: its experiment (experiment.hpp), its worked example
///        (example.hpp) and the released models it sets beside its own (released_models.hpp).
namespace attn::ch12 {

//! [settings]
/// GPT-2's block, the baseline every change is measured against: chapter 11's model
/// (ch11::kModel: its vocabulary, heads, learned positions, tied embeddings), smaller, so that the
/// book's build can train it and its eight variants from many seeds (the design, below).
inline const gpt::TransformerConfig kGpt2Block = [] {
  gpt::TransformerConfig c = ch11::kModel;
  c.d_model = 64;
  c.layers = 2;
  c.d_ff = 256;       // the MLP's hidden width, 4 d_model as in GPT-2
  c.max_length = 64;  // tokens of context
  return c;
}();
/// Chapter 11's recipe (ch11::kTraining: AdamW's rates, decay and betas, clipping, float32 steps),
/// shorter.
inline const gpt::TrainingSettings kTraining = [] {
  gpt::TrainingSettings s = ch11::kTraining;
  s.steps = 800;
  s.batch = 8;  // windows of max_length + 1 tokens: 512 tokens a step
  s.warmup_steps = 40;
  s.evaluate_every = 200;       // a point of the learning curves every 200 steps...
  s.evaluate_at_start = false;  // ...from step 200
  s.seed = 0;                   // every run takes its own (the design, below)
  return s;
}();
/// A run's batches come from default_rng(seed + kBatchStream), a stream of their own, so every
/// change reads the same windows in the same order for a seed; the weights come from
/// default_rng(seed), as gpt::start() draws them.
inline constexpr std::uint64_t kBatchStream = 1000;
inline constexpr arma::uword kWindow = 16;  ///< the sliding window: a quarter of the context
/// Grouped-query attention's key/value heads, of 4 query heads: each pair shares one.
inline constexpr arma::uword kGroupedKvHeads = 2;
/// Bits per byte are measured on the validation part's first tokens, the same for every run.
inline constexpr std::size_t kScoredTokens = 32768;
//! [settings]

//! [design]
/// The experiment. Its changes, rates and analysis were fixed before any run; its seeds were
/// extended once, after a first look (the page tells how). Every change is trained from kSeeds;
/// GPT-2's block, whose noise enters every comparison, from kBaselineTimes as many: kSeeds, then
/// the seeds after the last. Each change's difference from the baseline gets an interval that holds
/// for all eight changes at once with kFamilyConfidence (Bonferroni's correction), from one run's
/// spread pooled over the nine rows; a verdict only where the interval leaves out 0.
inline const std::vector<std::uint64_t> kSeeds = {11, 12, 13, 14, 15, 16, 17};
inline constexpr std::size_t kBaselineTimes = 3;   ///< the baseline's runs, per change's
inline constexpr double kFamilyConfidence = 0.95;  ///< that every interval holds at once
inline constexpr double kPower = 0.8;  ///< of finding the design's smallest detectable difference
/// One run's spread the design was planned for: what a first look at the runs measured, with six
/// seeds a change and twelve for the baseline (the first six and twelve of these), pooled over the
/// nine rows. This chapter's first edition, two seeds a row, had suggested 0.014.
inline constexpr double kPlannedSpread = 0.0168;
/// The learning-rate check: GPT-2's block and four changes chosen before the runs, the ones most
/// often credited with better models, trained again at twice the peak (and final) rate from the
/// first kRateSeeds seeds.
inline constexpr double kRateFactor = 2.0;
inline constexpr std::size_t kRateSeeds = 3;  ///< the first seeds the check trains from
//! [design]

/// \brief --quick's settings (the tests and CI): the same changes, a few steps, to check every
///        piece but the models' quality. \param settings the chapter's. \return the same, shorter.
gpt::TrainingSettings quick(gpt::TrainingSettings settings);
/// --quick's seeds for every change (the baseline's: 11 to 16).
inline const std::vector<std::uint64_t> kQuickSeeds = {11, 12};
/// --quick scores the validation part's first tokens.
inline constexpr std::size_t kQuickScoredTokens = 512;

/// The largest seed a reader may choose with `--seeds`.
inline constexpr std::uint64_t kLargestSeed = 1000000000;

/// \brief Refuses seeds the experiment cannot use: fewer than two (one run cannot measure its own
///        spread), a seed named twice, or one above kLargestSeed.
/// \param seeds the reader's `--seeds`.
/// \throws attn::book::CommandLineError for `--seeds`, saying which.
void check_seeds(const std::vector<std::uint64_t>& seeds);

/// \brief One row of the comparison: GPT-2's block with one thing changed, or all of them.
struct Change {
  std::string label;  ///< as the tables print it.
  std::string name;   ///< its column in the tables of runs, and its checkpoints' file names.
  std::vector<gpt::Variant> variants;  ///< the library's changes it makes (none: GPT-2's block).
  bool rate_checked = false;           ///< trained again at another learning rate.
};

/// \brief SwiGLU's hidden width \f$h\f$ at GPT-2's parameter count: its three matrices hold
///        \f$3dh\f$ weights where GELU's two hold \f$2d\,d_{ff}\f$ and their biases
///        \f$d_{ff} + d\f$; the \f$h\f$ whose model comes closest to kGpt2Block's count.
/// \return \f$h\f$.
arma::uword matched_swiglu_width();

/// \brief The sizes of the experiment's changes: kGroupedKvHeads key/value heads, a window of
///        kWindow, and SwiGLU at matched_swiglu_width(). \return them.
gpt::VariantSizes variant_sizes();

/// The comparison's rows: GPT-2's block first (unchanged), today's block (every change of the
/// rows between that is one of its own, together) last. Attention without biases, which the
/// library has (gpt::Variant::no_attention_biases), is not among them: the experiment measures
/// the changes it was designed for.
extern const std::vector<Change> kChanges;

/// \brief GPT-2's block with these changes made. \param variants a Change's.
/// \return kGpt2Block, changed by gpt::with() at variant_sizes().
gpt::TransformerConfig changed(const std::vector<gpt::Variant>& variants);

/// \brief Whether a row is one of today's changes alone: a single variant that the last row,
///        today's block, makes among its own. \param change a row. \return whether it is.
bool in_todays_block(const Change& change);

/// \brief The changes' rows of kChanges, in order: all but the baseline's, row 0.
/// \return 1, 2, ..., kChanges.size() - 1.
std::vector<std::size_t> every_change();

/// \brief A random model of \p c from \p seed: the weights a run from that seed starts from.
/// \param c the configuration. \param seed the run's. \return gpt::start()'s weights.
gpt::TransformerWeights random_model(const gpt::TransformerConfig& c, std::uint64_t seed);

/// \brief One run of the experiment: a change, a seed, a learning rate.
struct Run {
  std::size_t change = 0;          ///< its row in kChanges.
  bool second_rate = false;        ///< one of the learning-rate check's.
  gpt::TrainingSettings settings;  ///< kTraining (or quick()) at its rate, with its seed.
};

/// \brief What a run measured: bits per byte on the validation tokens after every
///        evaluate_every steps, the last after the last step.
struct Result {
  Run run;             ///< the run.
  arma::rowvec steps;  ///< the steps measured.
  arma::rowvec bits;   ///< bits per byte at each.
};

/// \brief The experiment's seeds.
struct Seeds {
  std::vector<std::uint64_t> changes;   ///< every change's.
  std::vector<std::uint64_t> baseline;  ///< GPT-2's block's: the changes' and the seeds after them.
  std::vector<std::uint64_t> rate;      ///< the learning-rate check's: the first kRateSeeds.
};

/// \brief The design's seeds for the changes' \p seeds: the baseline takes kBaselineTimes as many
///        (these, then the seeds after the largest), the learning-rate check the first kRateSeeds.
/// \param seeds every change's, as check_seeds() accepts them. \return the three lists.
Seeds seeds_for(const std::vector<std::uint64_t>& seeds);

/// \brief The learning-rate check's settings: both rates kRateFactor times higher.
/// \param settings the chapter's. \return the same at the second rate.
gpt::TrainingSettings at_second_rate(gpt::TrainingSettings settings);

/// \brief Every run: each change from its seeds at the chapter's rate, then the learning-rate
///        check's (the changes marked rate_checked, from the rate seeds, at_second_rate()).
/// \param seeds from seeds_for(). \param settings kTraining or quick()'s. \return the runs.
std::vector<Run> runs_for(const Seeds& seeds, const gpt::TrainingSettings& settings);

/// \brief One change trained from one seed at one rate, or read back (gpt::resume_or_start())
///        from the checkpoint an earlier run of the chapter left in \p folder. A checkpoint of
///        another run, one the loader refuses or one of an unfinished run is trained again. The
///        run's batches come from default_rng(seed + kBatchStream), so every change reads the same
///        windows for a seed.
/// \param log what the run has to say (it runs beside others). \param data chapter 11's corpus.
/// \param run the run. \param scored the validation tokens measured.
/// \param folder where checkpoints are kept; empty: none.
/// \return the trained state.
gpt::TrainingState trained(std::ostream& log, const ch11::EncodedCorpus& data, const Run& run,
                           std::size_t scored, const std::string& folder);

/// \brief trained() for every run, side by side, a run to a core (attn::fast::side_by_side()
///        says why). Runs end in any order; each writes its log lines to \p log, whole, as it ends.
/// \param log where. \param data chapter 11's corpus. \param runs from runs_for().
/// \param scored,folder as trained() takes them. \return each run's curve, in the order of \p runs.
std::vector<Result> train_all(std::ostream& log, const ch11::EncodedCorpus& data,
                              const std::vector<Run>& runs, std::size_t scored,
                              const std::string& folder);

/// \brief The final bits per byte of change \p k's runs, at the chapter's rate or the check's,
///        in the order of their seeds. \param results train_all()'s. \param k a row of kChanges.
/// \param second_rate the check's runs. \return one a run.
arma::vec final_bits(const std::vector<Result>& results, std::size_t k, bool second_rate);

/// \brief The same runs' whole curves (at the chapter's rate), a row per run.
/// \param results train_all()'s. \param k a row of kChanges. \return `(runs × points)`.
arma::mat curves(const std::vector<Result>& results, std::size_t k);

/// \brief Seeds as the tables name them: "11 to 16" for three seeds or more that count up by one,
///        otherwise "5, 9 and 2". \param seeds at least one. \return the words.
std::string seed_list(const std::vector<std::uint64_t>& seeds);

/// \brief What an interval for "change minus baseline" supports, in bits per byte (lower is
///        better): "better", "worse", or "not detectable at this size".
/// \param d the interval. \return the verdict.
std::string verdict(const stats::Difference& d);

/// \brief An interval as the tables print it: `[-0.012, +0.003]`. \param d the interval.
/// \return the text.
std::string interval(const stats::Difference& d);

}  // namespace attn::ch12
