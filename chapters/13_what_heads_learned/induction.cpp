#include "induction.hpp"

#include <attn/fast/threads.hpp>
#include <attn/gpt/batch.hpp>
#include <attn/gpt/checkpoint.hpp>
#include <attn/gpt/forward.hpp>
#include <attn/math/layers.hpp>
#include <attn/math/validate.hpp>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <mutex>
#include <sstream>

namespace attn::ch13 {

arma::uvec random_tokens(numpy::Generator& rng, arma::uword vocabulary, arma::uword count) {
  arma::uvec tokens(count);
  for (arma::uword& t : tokens)
    t = static_cast<arma::uword>(std::floor(rng.random() * static_cast<double>(vocabulary)));
  return tokens;
}

CopyTest copy_test(arma::uword vocabulary, arma::uword period, std::size_t count,
                   std::uint64_t seed) {
  numpy::Generator rng = numpy::default_rng(seed);
  CopyTest test{.sequences = {}, .period = period};
  for (std::size_t s = 0; s < count; ++s) {
    const arma::uvec segment = random_tokens(rng, vocabulary, period);
    test.sequences.push_back(arma::join_cols(segment, segment));
  }
  return test;
}

CopyTest repeated_text(const arma::uvec& tokens, arma::uword period, std::size_t count) {
  if (tokens.n_elem < count * period)
    throw math::InputError(fmt::format("repeated_text: {} tokens; {} segments of {} need {}",
                                       tokens.n_elem, count, period, count * period));
  CopyTest test{.sequences = {}, .period = period};
  for (std::size_t s = 0; s < count; ++s) {
    const arma::uvec segment = tokens.subvec(s * period, (s + 1) * period - 1);
    test.sequences.push_back(arma::join_cols(segment, segment));
  }
  return test;
}

namespace {

// Whole sequences, every token of each, one after another, for one forward pass.
struct Packed {
  arma::uvec tokens;
  arma::uvec starts;
};
Packed packed(const std::vector<arma::uvec>& sequences) {
  Packed p{.tokens = {}, .starts = arma::uvec(sequences.size())};
  for (arma::uword s = 0; s < sequences.size(); ++s) {
    p.starts(s) = p.tokens.n_elem;
    p.tokens = arma::join_cols(p.tokens, sequences[s]);
  }
  return p;
}

// Each sequence of the test through a forward pass of its own, handed to `use` with its index.
// (One pass over all of them would hold every block's values for every sequence at once, and
// run slower for the memory it walks through.)
template <typename Use>
void each_pass(const gpt::TransformerWeights& weights, const CopyTest& test,
               const gpt::HeadMask& mask, Use use) {
  for (std::size_t s = 0; s < test.sequences.size(); ++s)
    use(s, gpt::transformer_forward(weights, test.sequences[s], arma::uvec{0}, mask));
}

// The summed cost of rows first ... last of a sequence's pass, row i predicting token i + 1.
double nats_of(const arma::mat& logits, const arma::uvec& sequence, arma::uword first,
               arma::uword last) {
  const arma::uvec targets = sequence.subvec(first + 1, last + 1);
  return math::cross_entropy(logits.rows(first, last), targets).loss *
         static_cast<double>(targets.n_elem);
}

// What the copy test reads from the passes: the copy losses and, if asked for, every head's
// induction score.
struct CopyReading {
  CopyLosses losses;
  arma::mat scores;  // (layers × heads), averaged over the sequences; zeros if not asked for
};
CopyReading read_copies(const gpt::TransformerWeights& weights, const CopyTest& test,
                        const gpt::HeadMask& mask, bool with_scores) {
  const gpt::TransformerConfig& c = weights.config;
  const arma::uword p = test.period;
  const std::size_t n = test.sequences.size();
  arma::vec first(n);
  arma::vec second(n);
  arma::mat scores(c.layers, c.heads, arma::fill::zeros);
  each_pass(weights, test, mask, [&](std::size_t s, const gpt::TransformerForward& pass) {
    first(s) = nats_of(pass.logits, test.sequences[s], 0, p - 2);
    second(s) = nats_of(pass.logits, test.sequences[s], p, 2 * p - 2);
    if (!with_scores)
      return;
    const gpt::HeadWeights heads = gpt::attention_weights(pass);
    for (arma::uword l = 0; l < c.layers; ++l)
      for (arma::uword k = 0; k < c.heads; ++k)
        scores(l, k) += gpt::induction_score(heads[l][k], 0, p);
  });
  const double rows = static_cast<double>(p - 1);  // a copy's rows in each sequence
  const double all_rows = rows * static_cast<double>(n);
  return {.losses = {.first = arma::accu(first) / all_rows,
                     .second = arma::accu(second) / all_rows,
                     .gains = (first - second) / rows},
          .scores = scores / static_cast<double>(n)};
}

}  // namespace

CopyLosses copy_losses(const gpt::TransformerWeights& weights, const CopyTest& test,
                       const gpt::HeadMask& mask) {
  return read_copies(weights, test, mask, false).losses;
}

arma::mat induction_scores(const gpt::TransformerWeights& weights, const CopyTest& test,
                           const gpt::HeadMask& mask) {
  return read_copies(weights, test, mask, true).scores;
}

std::vector<std::vector<arma::rowvec>> head_means_over(const gpt::TransformerWeights& weights,
                                                       const std::vector<arma::uvec>& sequences) {
  const Packed p = packed(sequences);
  return gpt::head_means(weights, p.tokens, p.starts);
}

arma::mat previous_token_weights(const gpt::TransformerWeights& weights, const CopyTest& test) {
  const gpt::TransformerConfig& c = weights.config;
  arma::mat previous(c.layers, c.heads, arma::fill::zeros);
  each_pass(weights, test, {}, [&](std::size_t, const gpt::TransformerForward& pass) {
    const gpt::HeadWeights heads = gpt::attention_weights(pass);
    for (arma::uword l = 0; l < c.layers; ++l)
      for (arma::uword k = 0; k < c.heads; ++k)
        previous(l, k) += gpt::profile(heads[l][k]).previous_token;
  });
  return previous / static_cast<double>(test.sequences.size());
}

gpt::TransformerConfig attention_only(arma::uword layers) {
  return {.vocabulary = kVocabulary,
          .d_model = 64,
          .heads = 4,
          .layers = layers,
          .d_ff = 0,  // no MLP
          .max_length = 2 * kTestPeriod,
          .positions = gpt::Positions::rotary,
          .tied_embeddings = true,
          .mlp = gpt::Mlp::none};
}

gpt::TrainingSettings training_settings() {
  return {.steps = 1000,
          .batch = 32,
          .peak_learning_rate = 3e-3,
          .final_learning_rate = 3e-4,
          .warmup_steps = 50,
          .weight_decay = 0.1,
          .clip_norm = 1.0,
          .evaluate_every = 50,
          .evaluate_at_start = true,
          .seed = 0,  // each run its own
          .precision = gpt::Precision::float32};
}

gpt::TrainingSettings quick(gpt::TrainingSettings settings) {
  settings.steps = 40;
  settings.batch = 8;
  settings.warmup_steps = 5;
  settings.evaluate_every = 20;
  return settings;
}

std::vector<Run> runs_for(const std::vector<std::uint64_t>& seeds,
                          const gpt::TrainingSettings& settings) {
  std::vector<Run> runs;
  for (const arma::uword layers : {1, 2})
    for (const std::uint64_t seed : seeds) {
      Run run{.layers = layers, .settings = settings};
      run.settings.seed = seed;
      runs.push_back(run);
    }
  return runs;
}

gpt::NextBatch repeated_segments(arma::uword window, arma::uword batch) {
  return [window, batch](std::int64_t, numpy::Generator& rng) {
    std::vector<arma::uvec> windows;
    const double lengths = static_cast<double>(kLongestSegment - kShortestSegment + 1);
    for (arma::uword b = 0; b < batch; ++b) {
      const arma::uword length =
          kShortestSegment + static_cast<arma::uword>(std::floor(rng.random() * lengths));
      const arma::uvec segment = random_tokens(rng, kVocabulary, length);
      arma::uvec w(window + 1);
      for (arma::uword i = 0; i < w.n_elem; ++i)
        w(i) = segment(i % length);
      windows.push_back(w);
    }
    return gpt::pack_sentences(windows);
  };
}

namespace {

// A point of a run's curves: the copy test's second-copy loss as the held-out number, its
// first-copy loss and the best head's induction score as the others.
gpt::Evaluation on_the_copy_test(const CopyTest& test) {
  return [test](const gpt::TransformerWeights& weights, gpt::Step&) {
    const CopyReading reading =
        read_copies(weights, test, {}, true);  // one pass a sequence for both
    return gpt::Measurement{.held_out = reading.losses.second,
                            .training = {},
                            .others = {reading.losses.first, reading.scores.max()}};
  };
}

const std::string kData = fmt::format(
    "windows of random tokens from {}, a segment of {} to {} tokens repeated, from the run's "
    "stream",
    kVocabulary, kShortestSegment, kLongestSegment);
const std::string kEvaluation = fmt::format(
    "copy test of {} sequences, period {}, default_rng({}): second copy's loss; first copy's loss "
    "and the best induction score",
    kTestSequences, kTestPeriod, kTestSeed);

gpt::TrainingState trained(std::ostream& log, const Run& run, const std::string& folder) {
  const gpt::TransformerConfig c = attention_only(run.layers);
  const gpt::TrainingSettings& settings = run.settings;
  const std::string fingerprint = gpt::run_fingerprint(c, settings, kData, kEvaluation);
  const std::string path =
      folder.empty() ? std::string()
                     : (std::filesystem::path(folder) /
                        fmt::format("{}-layer-seed{}.checkpoint", run.layers, settings.seed))
                           .string();
  return gpt::trained_once(log, path, fingerprint, c, settings, [&](gpt::TrainingState& state) {
    const auto start = std::chrono::steady_clock::now();
    const CopyTest test = copy_test(kVocabulary, kTestPeriod, kTestSequences, kTestSeed);
    gpt::train(state, settings, repeated_segments(c.max_length, settings.batch),
               on_the_copy_test(test), settings.steps);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print(log, "{} layer(s), seed {}: {} steps took {:.1f} s (measured; it varies)\n",
               run.layers, settings.seed, settings.steps, seconds);
  });
}

}  // namespace

std::vector<Result> train_all(std::ostream& out, const std::vector<Run>& runs,
                              const std::string& folder) {
  std::vector<Result> results(runs.size());
  std::mutex log_lock;
  fast::side_by_side(runs.size(), [&](std::size_t r) {
    std::ostringstream log;
    gpt::TrainingState state = trained(log, runs[r], folder);
    Result& result = results[r];
    const std::size_t points = state.curve.size();
    result.run = runs[r];
    result.steps.set_size(points);
    result.first.set_size(points);
    result.second.set_size(points);
    result.induction.set_size(points);
    for (std::size_t p = 0; p < points; ++p) {
      const gpt::CurvePoint& point = state.curve[p];
      if (point.measured.others.size() != 2)
        throw math::InputError(
            fmt::format("{} layer(s), seed {}: curve point {} holds {} other measurements, not 2",
                        runs[r].layers, runs[r].settings.seed, p, point.measured.others.size()));
      result.steps(p) = static_cast<double>(point.step);
      result.second(p) = point.measured.held_out;
      result.first(p) = point.measured.others[0];
      result.induction(p) = point.measured.others[1];
    }
    result.weights = std::move(state.weights);
    const std::lock_guard<std::mutex> hold(log_lock);
    fmt::print(out, "{}", log.str());
  });
  return results;
}

}  // namespace attn::ch13
