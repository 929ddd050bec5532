/// \file
/// \brief Chapter 13's controlled experiment: attention-only models of one and of two layers
///        trained here on sequences that repeat a random segment, from several seeds, to watch
///        induction heads form (Elhage et al., 2021; Olsson et al., 2022); and the copying test
///        every model of the chapter is measured with: random tokens, repeated once.
#pragma once

#include <attn/gpt/head_mask.hpp>
#include <attn/gpt/heads.hpp>
#include <attn/gpt/model.hpp>
#include <attn/gpt/trainer.hpp>
#include <attn/numpy/numpy_random.hpp>

#include <armadillo>

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

/// \brief Chapter 13's own material: the copying test and the induction-head experiment
///        (induction.hpp).
namespace attn::ch13 {

/// \brief A test of copying: sequences each a segment of `period` tokens followed by the same
///        segment again (random tokens, copy_test(), or a text's, repeated_text()). In the
///        second copy the whole segment has been seen once: a model that copies predicts it.
struct CopyTest {
  std::vector<arma::uvec> sequences;  ///< each `(2 period)` tokens.
  arma::uword period = 0;             ///< \f$p\f$, the segment's length.
};

/// \brief Tokens drawn uniformly from \f$0 \dots V - 1\f$, `floor(rng.random() * V)` each, as
///        the library draws its windows' offsets.
/// \param rng the stream. \param vocabulary \f$V\f$. \param count how many.
/// \return `(count)` tokens.
arma::uvec random_tokens(numpy::Generator& rng, arma::uword vocabulary, arma::uword count);

/// \brief \p count sequences of \p period random tokens repeated once, from default_rng(seed).
/// \param vocabulary the tokens drawn from. \param period \f$p\f$. \param count sequences.
/// \param seed the stream's. \return the test.
CopyTest copy_test(arma::uword vocabulary, arma::uword period, std::size_t count,
                   std::uint64_t seed);

/// \brief \p count sequences of real text repeated once: sequence \f$k\f$ is the text's
///        \f$p\f$ tokens from token \f$kp\f$, then the same again, for \f$k = 0 \dots\f$
///        count − 1. \param tokens the text.
/// \param period \f$p\f$. \param count sequences, at most as many as the text holds.
/// \return the test. \throws attn::math::InputError if the text is shorter than count·p tokens.
CopyTest repeated_text(const arma::uvec& tokens, arma::uword period, std::size_t count);

/// \brief A model's mean cost on the two copies, in nats a token. Row \f$i\f$ of a sequence
///        predicts token \f$i + 1\f$: the first copy's rows \f$0 \dots p-2\f$ predict tokens
///        the model cannot know, the second copy's rows \f$p \dots 2p-2\f$ tokens it has seen
///        once, in the same order. (Row \f$p - 1\f$, which predicts where the segment starts
///        again, counts in neither.)
struct CopyLosses {
  double first = 0.0;   ///< on the first copy.
  double second = 0.0;  ///< on the second copy.
  arma::vec gains;  ///< each sequence's own gain, in nats a token: its first copy's mean cost minus
                    ///< its second's (each over p − 1 rows); their mean is gain().
  /// \brief The in-context gain: how much cheaper the second copy is. \return first − second.
  [[nodiscard]] double gain() const { return first - second; }
};

/// \brief The copy losses of a model, with some heads masked or none, by the readable forward
///        pass in double. \param weights the model. \param test from copy_test(), whose
///        sequences fit the model's context. \param mask the heads switched off.
/// \return the means over every sequence's rows, and each sequence's gain (a forward pass a
///         sequence).
/// \throws as gpt::sentence_logits() does.
CopyLosses copy_losses(const gpt::TransformerWeights& weights, const CopyTest& test,
                       const gpt::HeadMask& mask = {});

/// \brief Every head's induction score (gpt::induction_score()) averaged over the test's
///        sequences. \param weights the model. \param test from copy_test().
/// \param mask heads switched off (their weights are still computed and scored).
/// \return `(layers × heads)`.
arma::mat induction_scores(const gpt::TransformerWeights& weights, const CopyTest& test,
                           const gpt::HeadMask& mask = {});

/// \brief Every head's mean output over some sequences (gpt::head_means()), each read whole:
///        the rows mean-ablation puts in the heads' places. \param weights the model.
/// \param sequences the texts to average over (a copy test's, windows of a text), each at most
///        max_length tokens. \return `means[l][k]`, `(1 × d_k)`.
std::vector<std::vector<arma::rowvec>> head_means_over(const gpt::TransformerWeights& weights,
                                                       const std::vector<arma::uvec>& sequences);

/// \brief Every head's weight on the previous token (gpt::profile()), averaged over a test's
///        sequences. \param weights the model. \param test the sequences.
/// \return `(layers × heads)`.
arma::mat previous_token_weights(const gpt::TransformerWeights& weights, const CopyTest& test);

//! [experiment]
/// The task the models train on: windows of max_length + 1 tokens, each a segment of random
/// tokens repeated until the window is full, the segment's length drawn anew for every window
/// between these two. A length that changes keeps a model from learning one fixed offset.
inline constexpr arma::uword kVocabulary = 64;      ///< the tokens drawn from
inline constexpr arma::uword kShortestSegment = 8;  ///< a segment's fewest tokens
inline constexpr arma::uword kLongestSegment = 32;  ///< a segment's most tokens
/// \brief The models: attention alone (no MLP), 4 heads, rotary positions, as gpt::Mlp::none
///        and gpt::Positions::rotary make them, a context of two test periods.
/// \param layers 1 or 2. \return the configuration.
gpt::TransformerConfig attention_only(arma::uword layers);
/// \brief How each is trained: float32 steps, AdamW with a warm-up and a cosine decay.
/// \return the settings (each run sets its seed).
gpt::TrainingSettings training_settings();
/// Every model is trained from each of these seeds.
inline const std::vector<std::uint64_t> kSeeds = {1, 2, 3, 4, 5};
/// The test every point of the curves measures: these many sequences, a segment of this many
/// tokens repeated, from default_rng(kTestSeed), a stream no run trains on.
inline constexpr std::size_t kTestSequences = 64;  ///< sequences of the copy test
inline constexpr arma::uword kTestPeriod = 32;     ///< the repeated segment's tokens
inline constexpr std::uint64_t kTestSeed = 999;    ///< its stream's seed
/// A second draw of the copy test, over which the heads' mean outputs are taken for
/// mean-ablation.
inline constexpr std::uint64_t kReferenceSeed = 998;
//! [experiment]

/// --quick's runs: a few steps, from these seeds.
inline const std::vector<std::uint64_t> kQuickSeeds = {1, 2};
/// \brief --quick's settings. \param settings the chapter's. \return the same, a few steps.
gpt::TrainingSettings quick(gpt::TrainingSettings settings);

/// \brief One run of the experiment.
struct Run {
  arma::uword layers = 1;          ///< 1 or 2.
  gpt::TrainingSettings settings;  ///< training_settings() or quick()'s, with the run's seed.
};

/// \brief What a run measured after every evaluate_every steps.
struct Result {
  Run run;                          ///< the run.
  arma::rowvec steps;               ///< the steps measured.
  arma::rowvec first;               ///< the copy test's loss on the first copy, at each.
  arma::rowvec second;              ///< on the second copy.
  arma::rowvec induction;           ///< the best induction score of any head.
  gpt::TransformerWeights weights;  ///< the trained model.
};

/// \brief Every run: each model from each seed. \param seeds the seeds.
/// \param settings training_settings() or quick()'s. \return the runs, one-layer models first.
std::vector<Run> runs_for(const std::vector<std::uint64_t>& seeds,
                          const gpt::TrainingSettings& settings);

/// \brief The batches of the task: \p batch windows of max_length + 1 tokens, each a random
///        segment (its length uniform in kShortestSegment ... kLongestSegment, then its tokens)
///        repeated to fill it, all drawn from the run's stream. \param window max_length.
/// \param batch windows a step. \return the source.
gpt::NextBatch repeated_segments(arma::uword window, arma::uword batch);

/// \brief Each run trained, side by side a run to a core, or read back from the checkpoint an
///        earlier run of the chapter left in \p folder (any other is trained again).
/// \param log what the runs have to say. \param runs from runs_for().
/// \param folder where checkpoints are kept, which must exist; empty: none.
/// \return each run's curves.
std::vector<Result> train_all(std::ostream& log, const std::vector<Run>& runs,
                              const std::string& folder);

}  // namespace attn::ch13
