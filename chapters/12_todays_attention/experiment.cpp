#include "experiment.hpp"

#include <attn/book/chapter.hpp>
#include <attn/fast/threads.hpp>
#include <attn/gpt/checkpoint.hpp>
#include <attn/gpt/text.hpp>
#include <attn/math/validate.hpp>
#include <attn/numpy/numpy_random.hpp>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <mutex>
#include <ostream>
#include <sstream>

namespace attn::ch12 {

namespace {

// The training text's windows, drawn from a stream of their own (kBatchStream) rather than the
// run's: the run's stream first draws the weights, as many numbers as the change's shapes hold,
// so each change would read other windows.
gpt::NextBatch same_windows(const arma::uvec& tokens, const gpt::TrainingSettings& settings) {
  const gpt::NextBatch windows = gpt::window_batches(tokens, kGpt2Block.max_length, settings.batch);
  auto stream =
      std::make_shared<numpy::Generator>(numpy::default_rng(settings.seed + kBatchStream));
  return [windows, stream](std::int64_t step, numpy::Generator&) {
    return windows(step, *stream);
  };
}

}  // namespace

gpt::TrainingSettings quick(gpt::TrainingSettings settings) {
  settings.steps = 6;
  settings.batch = 2;
  settings.warmup_steps = 2;
  settings.evaluate_every = 3;
  return settings;
}

void check_seeds(const std::vector<std::uint64_t>& seeds) {
  if (seeds.size() < 2)
    throw book::CommandLineError("--seeds",
                                 "needs at least two seeds: one run cannot measure its own spread");
  std::vector<std::uint64_t> sorted = seeds;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    throw book::CommandLineError("--seeds", "names a seed twice");
  if (sorted.back() > kLargestSeed)
    throw book::CommandLineError(
        "--seeds", fmt::format("takes seeds from 0 to {}, not {}", kLargestSeed, sorted.back()));
}

arma::uword matched_swiglu_width() {
  gpt::TransformerConfig c = kGpt2Block;
  c.mlp = gpt::Mlp::swiglu;
  const auto gap = [&](arma::uword h) {
    c.d_ff = h;
    const auto count = static_cast<double>(gpt::parameter_count(c));
    return std::abs(count - static_cast<double>(gpt::parameter_count(kGpt2Block)));
  };
  arma::uword best = 1;
  for (arma::uword h = 1; h <= kGpt2Block.d_ff; ++h)
    if (gap(h) < gap(best))
      best = h;
  return best;
}

gpt::VariantSizes variant_sizes() {
  static const gpt::VariantSizes sizes{.kv_heads = kGroupedKvHeads,
                                       .sliding_window = kWindow,
                                       .swiglu_d_ff = matched_swiglu_width()};  // searched once
  return sizes;
}

const std::vector<Change> kChanges = {
    {.label = "GPT-2's block", .name = "gpt2", .variants = {}, .rate_checked = true},
    {.label = "rotary positions (RoPE)",
     .name = "rope",
     .variants = {gpt::Variant::rotary},
     .rate_checked = true},
    {.label = "no positions (NoPE)", .name = "nope", .variants = {gpt::Variant::no_positions}},
    {.label = "grouped-query, 2 key/value heads",
     .name = "gqa",
     .variants = {gpt::Variant::grouped_query}},
    {.label = "multi-query, 1 key/value head",
     .name = "mqa",
     .variants = {gpt::Variant::multi_query}},
    {.label = "sliding window of 16", .name = "window", .variants = {gpt::Variant::sliding_window}},
    {.label = "RMSNorm",
     .name = "rmsnorm",
     .variants = {gpt::Variant::rms_norm},
     .rate_checked = true},
    {.label = "SwiGLU, as many parameters",
     .name = "swiglu",
     .variants = {gpt::Variant::swiglu},
     .rate_checked = true},
    {.label = "today's block: all of them",
     .name = "today",
     .variants = {gpt::Variant::rotary, gpt::Variant::grouped_query, gpt::Variant::sliding_window,
                  gpt::Variant::rms_norm, gpt::Variant::swiglu},
     .rate_checked = true},
};

gpt::TransformerConfig changed(const std::vector<gpt::Variant>& variants) {
  return gpt::with(variants, kGpt2Block, variant_sizes());
}

bool in_todays_block(const Change& change) {
  const std::vector<gpt::Variant>& today = kChanges.back().variants;
  return change.variants.size() == 1 &&
         std::find(today.begin(), today.end(), change.variants.front()) != today.end();
}

std::vector<std::size_t> every_change() {
  std::vector<std::size_t> rows;
  for (std::size_t k = 1; k < kChanges.size(); ++k)
    rows.push_back(k);
  return rows;
}

gpt::TransformerWeights random_model(const gpt::TransformerConfig& c, std::uint64_t seed) {
  return gpt::start(c, {.seed = seed}).weights;
}

gpt::TrainingState trained(std::ostream& log, const ch11::EncodedCorpus& data, const Run& run,
                           std::size_t scored, const std::string& folder) {
  const Change& change = kChanges[run.change];
  const gpt::TrainingSettings& settings = run.settings;
  const gpt::TransformerConfig c = changed(change.variants);
  const std::string fingerprint = gpt::run_fingerprint(
      c, settings, data.tokenizer, data.corpus.training,
      fmt::format("batches from default_rng(seed + {}); bits per byte on the validation part's "
                  "first {} tokens",
                  kBatchStream, scored));
  const std::string path = folder.empty()
                               ? std::string()
                               : (std::filesystem::path(folder) /
                                  fmt::format("{}-rate{:g}-seed{}.checkpoint", change.name,
                                              settings.peak_learning_rate, settings.seed))
                                     .string();
  return gpt::trained_once(log, path, fingerprint, c, settings, [&](gpt::TrainingState& state) {
    const auto start = std::chrono::steady_clock::now();
    gpt::train(state, settings, same_windows(data.training.tokens, settings),
               gpt::held_out_bits(data.validation, scored), settings.steps);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print(log, "{}, rate {:g}, seed {}: {} steps took {:.1f} s (measured; it varies)\n",
               change.label, settings.peak_learning_rate, settings.seed, settings.steps, seconds);
  });
}

Seeds seeds_for(const std::vector<std::uint64_t>& seeds) {
  Seeds s{.changes = seeds, .baseline = seeds, .rate = {}};
  std::uint64_t next = *std::max_element(seeds.begin(), seeds.end());
  while (s.baseline.size() < kBaselineTimes * seeds.size())
    s.baseline.push_back(++next);
  const std::size_t rate_seeds = std::min(kRateSeeds, seeds.size());
  s.rate.assign(seeds.begin(), seeds.begin() + static_cast<std::ptrdiff_t>(rate_seeds));
  return s;
}

gpt::TrainingSettings at_second_rate(gpt::TrainingSettings settings) {
  settings.peak_learning_rate *= kRateFactor;
  settings.final_learning_rate *= kRateFactor;
  return settings;
}

std::vector<Run> runs_for(const Seeds& seeds, const gpt::TrainingSettings& settings) {
  std::vector<Run> runs;
  const auto add = [&](std::size_t change, std::uint64_t seed, bool second_rate) {
    Run run{.change = change,
            .second_rate = second_rate,
            .settings = second_rate ? at_second_rate(settings) : settings};
    run.settings.seed = seed;
    runs.push_back(run);
  };
  for (std::size_t k = 0; k < kChanges.size(); ++k)
    for (const std::uint64_t seed : k == 0 ? seeds.baseline : seeds.changes)
      add(k, seed, false);
  for (std::size_t k = 0; k < kChanges.size(); ++k)
    if (kChanges[k].rate_checked)
      for (const std::uint64_t seed : seeds.rate)
        add(k, seed, true);
  return runs;
}

std::vector<Result> train_all(std::ostream& out, const ch11::EncodedCorpus& data,
                              const std::vector<Run>& runs, std::size_t scored,
                              const std::string& folder) {
  std::vector<Result> results(runs.size());
  std::mutex log_lock;
  fast::side_by_side(runs.size(), [&](std::size_t r) {
    std::ostringstream log;
    const gpt::TrainingState state = trained(log, data, runs[r], scored, folder);
    Result& result = results[r];
    result.run = runs[r];
    result.steps.set_size(state.curve.size());
    result.bits.set_size(state.curve.size());
    for (std::size_t p = 0; p < state.curve.size(); ++p) {
      result.steps(p) = static_cast<double>(state.curve[p].step);
      result.bits(p) = state.curve[p].measured.held_out;
    }
    const std::lock_guard<std::mutex> hold(log_lock);
    fmt::print(out, "{}", log.str());
  });
  return results;
}

arma::vec final_bits(const std::vector<Result>& results, std::size_t k, bool second_rate) {
  std::vector<double> bits;
  for (const Result& r : results)
    if (r.run.change == k && r.run.second_rate == second_rate)
      bits.push_back(r.bits.back());
  return arma::vec(bits);
}

arma::mat curves(const std::vector<Result>& results, std::size_t k) {
  arma::mat rows;
  for (const Result& r : results)
    if (r.run.change == k && !r.run.second_rate)
      rows = arma::join_cols(rows, r.bits);
  return rows;
}

std::string seed_list(const std::vector<std::uint64_t>& seeds) {
  bool counting = seeds.size() > 2;
  for (std::size_t k = 1; k < seeds.size(); ++k)
    counting = counting && seeds[k] == seeds[k - 1] + 1;
  if (counting)
    return fmt::format("{} to {}", seeds.front(), seeds.back());
  const std::vector<std::uint64_t> all_but_last(seeds.begin(), seeds.end() - 1);
  return fmt::format("{} and {}", fmt::join(all_but_last, ", "), seeds.back());
}

std::string verdict(const stats::Difference& d) {
  switch (stats::finding(d)) {
    case stats::Finding::lower:
      return "better";
    case stats::Finding::higher:
      return "worse";
    case stats::Finding::not_detectable:
      break;
  }
  return "not detectable at this size";
}

std::string interval(const stats::Difference& d) {
  return fmt::format("[{:+.3f}, {:+.3f}]", d.low, d.high);
}

}  // namespace attn::ch12
