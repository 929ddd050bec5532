// Chapter 12: from GPT-2's attention to today's, each change measured. Chapter 11's corpus and
// recipe at a size the book's machine trains many times over: GPT-2's block, then one change at
// a time (rotary positions, no positions, grouped-query and multi-query attention, a sliding
// window, RMSNorm, SwiGLU) and all of them together, from many seeds, each difference judged by
// an interval (attn::stats); what each change does to the KV cache; and every change decoded
// through the cache against the whole forward pass.
// The model, its choices, its training, its checkpoints and its decoder are the GPT layer's
// (attn::gpt); the Bible, the tokenizer and the recipe are chapter 11's (small_gpt.hpp); the
// experiment, its worked example and the released models it is set beside are this chapter's
// (experiment.hpp, example.hpp, released_models.hpp). Its page:
// chapters/12_todays_attention/chapter.md.

#include "example.hpp"
#include "experiment.hpp"
#include "released_models.hpp"

#include <11_small_gpt/small_gpt.hpp>

#include <attn/book/chapter.hpp>
#include <attn/book/palette.hpp>
#include <attn/gpt/decoder.hpp>
#include <attn/gpt/model.hpp>
#include <attn/gpt/trainer.hpp>
#include <attn/math/attention.hpp>
#include <attn/stats/experiment.hpp>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace {
namespace colour = attn::book::colour;
namespace gpt = attn::gpt;
namespace ch11 = attn::ch11;
namespace ch12 = attn::ch12;

//! [article-numbers]
const double kCacheTolerance = 1e-12;  // a cached decoder against the whole forward pass
//! [article-numbers]

// The released models' caches, as the chapter prints them.
const std::size_t kHalfPrecisionBytes = 2;  // fp16 or bf16, as these models are served
const std::vector<std::size_t> kGenerated = {4096, 32768};  // tokens in the context
const double kBytesPerKibibyte = 1024.0;
const double kBytesPerGibibyte = 1024.0 * 1024.0 * 1024.0;

// What every run reads: chapter 11's corpus and tokenizer.
ch11::EncodedCorpus the_corpus(attn::book::Chapter& ch) {
  ch11::EncodedCorpus data = ch11::encode_corpus(ch11::read_split_bible().corpus);
  fmt::print(ch.out, "Chapter 11's corpus and tokenizer: the King James Bible, {} training\n",
             data.corpus.training_lines);
  fmt::print(ch.out,
             "verses ({} tokens) and {} validation verses ({} tokens), a vocabulary of {}.\n",
             data.training.tokens.n_elem, data.corpus.validation_lines,
             data.validation.tokens.n_elem, data.tokenizer.vocab_size());
  return data;
}

// Each piece on a few tokens: grouped-query attention with RoPE inside a sliding window, RMSNorm
// and SwiGLU, every number printed so that PyTorch's can be set beside it.
void the_example(attn::book::Chapter& ch) {
  const ch12::Example example = ch12::worked_example();
  const std::vector<attn::math::Attention>& heads = example.attention.heads;
  fmt::print(ch.out, "\nToday's attention on {} tokens, drawn from default_rng({}): d_model {},\n",
             ch12::kExampleTokens, ch12::kExampleSeed, ch12::kExampleWidth);
  fmt::print(ch.out,
             "{} query heads, {} key/value heads, RoPE, a window of {}. Query heads 0 and 1\n",
             ch12::kExampleHeads, ch12::kExampleKvHeads, ch12::kExampleWindow);
  fmt::print(ch.out, "read key/value head 0; their weights, a query a row:\n");
  for (arma::uword i = 0; i < ch12::kExampleTokens; ++i)
    fmt::print(ch.out, "{}   {}\n", ch12::decimals(heads[0].weights.row(i)),
               ch12::decimals(heads[1].weights.row(i)).substr(2));
  fmt::print(ch.out, "The layer's output for the last token:\n{}\n",
             ch12::decimals(example.attention.output.row(ch12::kExampleTokens - 1)));
  fmt::print(ch.out, "RMSNorm (gamma 1) of the first token:\n{}\n",
             ch12::decimals(example.rms_norm));
  fmt::print(ch.out, "SwiGLU (hidden width {}) of the first token:\n{}\n", ch12::kExampleHidden,
             ch12::decimals(example.swiglu));
  ch.checks.claim(fmt::format("every head's weights are 0 outside the window of {} and sum to 1",
                              ch12::kExampleWindow),
                  ch12::banded(example, kCacheTolerance));
}

// Every change, cached and whole: a random model of each decodes a text token by token through
// its KV cache, and each token's logits equal the whole forward pass's.
void the_pieces(attn::book::Chapter& ch) {
  const std::uint64_t seed = ch12::kSeeds.front();
  fmt::print(ch.out, "\nEach change in a random model, decoded token by token through its KV\n");
  fmt::print(ch.out, "cache, against the whole forward pass over the same {} tokens:\n",
             ch12::kGpt2Block.max_length);
  for (const ch12::Change& change : ch12::kChanges) {
    const gpt::TransformerConfig c = ch12::changed(change.variants);
    const gpt::TransformerWeights w = ch12::random_model(c, seed);
    arma::uvec text(c.max_length);  // any tokens will do
    for (arma::uword t = 0; t < text.n_elem; ++t)
      text(t) = (7 * t + 3) % c.vocabulary;
    const double largest = gpt::largest_cache_difference(w, text);
    fmt::print(ch.out, "  {:<34} within {:g}\n", change.label, kCacheTolerance);
    fmt::print(ch.log, "{}: largest difference {:.3g}\n", change.label, largest);
    ch.checks.claim(fmt::format("{}: the cached decoder equals the forward pass within {:g}",
                                change.label, kCacheTolerance),
                    largest <= kCacheTolerance);
  }
}

// The four attention choices' KV caches while a random model of each decodes a whole context.
void the_cache(attn::book::Chapter& ch) {
  struct Choice {
    std::string label;
    gpt::TransformerConfig config;
    std::string colour;
  };
  const std::vector<Choice> choices = {{.label = "multi-head, 4 key/value heads",
                                        .config = ch12::kGpt2Block,
                                        .colour = colour::blue},
                                       {.label = "grouped-query, 2",
                                        .config = ch12::changed({gpt::Variant::grouped_query}),
                                        .colour = colour::orange},
                                       {.label = "multi-query, 1",
                                        .config = ch12::changed({gpt::Variant::multi_query}),
                                        .colour = colour::teal},
                                       {.label = "multi-head, window of 16",
                                        .config = ch12::changed({gpt::Variant::sliding_window}),
                                        .colour = colour::purple}};
  const arma::uword length = ch12::kGpt2Block.max_length;
  const arma::rowvec decoded = arma::regspace<arma::rowvec>(1, static_cast<double>(length));
  fmt::print(ch.out, "\nThe KV cache holds, per token, 2 (keys and values) x {} layers x g\n",
             ch12::kGpt2Block.layers);
  fmt::print(ch.out, "key/value heads x d_k {} x 8 bytes (doubles); held while decoding:\n",
             ch12::kGpt2Block.d_model / ch12::kGpt2Block.heads);
  fmt::print(ch.out, "  {:<30} {:>15} {:>18} {:>18}\n", "", "bytes a token",
             fmt::format("after {} tokens", ch12::kWindow), fmt::format("after {} tokens", length));
  std::vector<attn::book::Series> series;
  for (const Choice& choice : choices) {
    const gpt::TransformerConfig& c = choice.config;
    const gpt::TransformerWeights weights = ch12::random_model(c, ch12::kSeeds.front());
    gpt::Decoder decoder(weights);  // reads the weights it is given, so they must outlive it
    const std::size_t per_token = ch12::cache_bytes_per_token(c.layers, gpt::key_value_heads(c),
                                                              c.d_model / c.heads, sizeof(double));
    arma::rowvec bytes(length);
    bool as_the_formula_says = true;  // after every token
    for (arma::uword t = 0; t < length; ++t) {
      decoder.append(t % c.vocabulary);
      bytes(t) = static_cast<double>(decoder.cache_bytes());
      const arma::uword held = c.sliding_window == 0 ? t + 1 : std::min(t + 1, c.sliding_window);
      as_the_formula_says = as_the_formula_says && decoder.cache_bytes() == held * per_token;
    }
    fmt::print(ch.out, "  {:<30} {:>15} {:>18} {:>18}\n", choice.label, per_token,
               bytes(ch12::kWindow - 1), bytes(length - 1));
    ch.checks.claim(fmt::format("{}: after every token the cache holds 2 L g d_k 8 bytes for each "
                                "token it holds",
                                choice.label),
                    as_the_formula_says);
    series.push_back({.label = choice.label,
                      .y = bytes / kBytesPerKibibyte,
                      .colour = choice.colour,
                      .dashed = c.sliding_window > 0});
  }
  const arma::rowvec& windowed = series.back().y;
  ch.checks.claim(fmt::format("the window's cache stops growing after {} tokens", ch12::kWindow),
                  arma::all(windowed.tail(length - ch12::kWindow) == windowed(ch12::kWindow - 1)));
  ch.plots.lines({.name = "12-02-kv-cache",
                  .title = "The KV cache while decoding",
                  .x_label = "tokens decoded",
                  .y_label = "KiB held (doubles)",
                  .x = decoded,
                  .series = series,
                  .y_from_zero = true});
}

// The same formula for models a reader downloads, in fp16.
void real_caches(attn::book::Chapter& ch) {
  fmt::print(ch.out, "\nThe same for released models (their config.json), {} bytes a number:\n",
             kHalfPrecisionBytes);
  fmt::print(ch.out, "  {:<16} {:>6} {:>10} {:>6} {:>6} {:>9}", "", "layers", "kv heads", "d_head",
             "window", "KiB/token");
  for (const std::size_t tokens : kGenerated)
    fmt::print(ch.out, " {:>12}", fmt::format("GiB at {}", tokens));
  fmt::print(ch.out, "\n");
  std::vector<std::string> shorter;  // the models whose context is shorter than a length shown
  for (const ch12::RealModel& m : ch12::kRealModels) {
    const std::size_t per_token =
        ch12::cache_bytes_per_token(m.layers, m.kv_heads, m.d_head, kHalfPrecisionBytes);
    fmt::print(ch.out, "  {:<16} {:>6} {:>10} {:>6} {:>6} {:>9}", m.name, m.layers,
               fmt::format("{} of {}", m.kv_heads, m.heads), m.d_head,
               m.window == 0 ? std::string("-") : fmt::format("{}", m.window),
               static_cast<double>(per_token) / kBytesPerKibibyte);
    for (const std::size_t tokens : kGenerated) {
      const std::size_t held = m.window == 0 ? tokens : std::min<std::size_t>(tokens, m.window);
      const double gibibytes = static_cast<double>(per_token * held) / kBytesPerGibibyte;
      fmt::print(ch.out, " {:>12}",
                 tokens > m.context ? std::string("-") : fmt::format("{:.2f}", gibibytes));
    }
    fmt::print(ch.out, "\n");
    if (m.context < kGenerated.back())
      shorter.push_back(fmt::format("{}'s is {}", m.name, m.context));
  }
  fmt::print(ch.out, "(-: beyond the model's max_position_embeddings in its config.json;\n");
  fmt::print(ch.out, "{})\n", fmt::join(shorter, ", "));
}

// The scale of this chapter's runs beside the released models whose training is published.
void the_scale(attn::book::Chapter& ch, const gpt::TrainingSettings& settings) {
  const double ours = static_cast<double>(gpt::parameter_count(ch12::kGpt2Block));
  const double read = static_cast<double>(settings.steps) *
                      static_cast<double>(settings.batch * ch12::kGpt2Block.max_length);
  fmt::print(ch.out, "\nThe scale of these runs, beside released models whose training is\n");
  fmt::print(ch.out, "published:\n");
  fmt::print(ch.out, "  {:<16} {:>12} {:>6} {:>6} {:>8} {:>14} {:>10}\n", "", "parameters", "width",
             "layers", "context", "tokens read", "per param");
  fmt::print(ch.out, "  {:<16} {:>12} {:>6} {:>6} {:>8} {:>14} {:>10.1f}\n", "these runs", ours,
             ch12::kGpt2Block.d_model, ch12::kGpt2Block.layers, ch12::kGpt2Block.max_length, read,
             read / ours);
  for (const ch12::RealModel& m : ch12::kRealModels) {
    if (m.training_tokens == 0.0)
      continue;
    const double count = ch12::parameter_count(m);
    fmt::print(ch.out, "  {:<16} {:>12.4g} {:>6} {:>6} {:>8} {:>14.2g} {:>10.0f}\n", m.name, count,
               m.d_model, m.layers, m.context, m.training_tokens, m.training_tokens / count);
  }
}

const int kColumn = 8;  // the width of a change's column in the tables of runs

// The first line of a table a row per seed: "seed", then each column's change by name.
void print_header(attn::book::Chapter& ch, const std::vector<std::size_t>& columns) {
  fmt::print(ch.out, "  {:<6}", "seed");
  for (const std::size_t k : columns)
    fmt::print(ch.out, "{:>{}}", ch12::kChanges[k].name, kColumn);
  fmt::print(ch.out, "\n");
}

// A table of runs, a row per seed and a column per change (blank where a change has no run of
// that seed), then each column's mean and, if asked, its model's parameters. Four decimals, so
// that a reader (and tests/chapters/12_todays_attention) can recompute every interval from it.
void print_runs(attn::book::Chapter& ch, const std::vector<std::size_t>& columns,
                const std::vector<arma::vec>& bits, const std::vector<std::uint64_t>& seeds,
                const std::vector<std::vector<std::uint64_t>>& seeds_of, bool with_parameters) {
  print_header(ch, columns);
  for (const std::uint64_t seed : seeds) {
    std::string row = fmt::format("  {:>6}", seed);
    for (std::size_t c = 0; c < columns.size(); ++c) {
      const auto& own = seeds_of[c];
      const auto at = std::find(own.begin(), own.end(), seed);
      row += at == own.end()
                 ? std::string(kColumn, ' ')
                 : fmt::format("{:>{}.4f}", bits[c](static_cast<arma::uword>(at - own.begin())),
                               kColumn);
    }
    fmt::print(ch.out, "{}\n", row.substr(0, row.find_last_not_of(' ') + 1));
  }
  fmt::print(ch.out, "  {:<6}", "mean");
  for (const arma::vec& b : bits)
    fmt::print(ch.out, "{:>{}.4f}", arma::mean(b), kColumn);
  fmt::print(ch.out, "\n");
  if (with_parameters) {
    fmt::print(ch.out, "  {:<6}", "params");
    for (const std::size_t k : columns)
      fmt::print(ch.out, "{:>{}}", gpt::parameter_count(ch12::changed(ch12::kChanges[k].variants)),
                 kColumn);
    fmt::print(ch.out, "\n");
  }
}

// Each change's interval against the baseline, and what it supports.
void print_verdicts(attn::book::Chapter& ch, const std::vector<std::size_t>& changes,
                    const attn::stats::AgainstBaseline& comparison, double family) {
  fmt::print(ch.out, "  {:<32} {:>7}  {:<18} {}\n", "", "change",
             fmt::format("{:g}% for all {}", 100.0 * family, changes.size()), "verdict");
  for (std::size_t c = 0; c < changes.size(); ++c) {
    const attn::stats::Difference& d = comparison.differences[c];
    fmt::print(ch.out, "  {:<32} {:>+7.3f}  {:<18} {}\n", ch12::kChanges[changes[c]].label,
               d.estimate, ch12::interval(d), ch12::verdict(d));
  }
}

// The pooled spread assumes every row is as noisy as the others. Welch's intervals give each row
// its own spread instead; at the same correction, do they support the same verdicts?
void the_unequal_spreads(attn::book::Chapter& ch, const arma::vec& baseline,
                         const std::vector<arma::vec>& changes,
                         const attn::stats::AgainstBaseline& comparison) {
  std::vector<std::string> differ;
  for (std::size_t c = 0; c < changes.size(); ++c) {
    const attn::stats::Difference own =
        attn::stats::welch(changes[c], baseline, comparison.each_confidence);
    if (attn::stats::finding(own) != attn::stats::finding(comparison.differences[c]))
      differ.push_back(fmt::format("{} ({})", ch12::kChanges[c + 1].name, ch12::verdict(own)));
  }
  fmt::print(ch.out, "Each row with its own spread (Welch's intervals, the same correction): {}.\n",
             differ.empty() ? std::string("the same verdicts")
                            : fmt::format("other verdicts for {}", fmt::join(differ, ", ")));
}

// The comparison: every change against GPT-2's block at the chapter's rate. Returns the
// intervals, for the figures.
attn::stats::AgainstBaseline the_verdicts(attn::book::Chapter& ch, const ch11::EncodedCorpus& data,
                                          const std::vector<ch12::Result>& results,
                                          const ch12::Seeds& seeds,
                                          const gpt::TrainingSettings& settings, std::size_t scored,
                                          bool is_quick) {
  const std::int64_t tokens_read =
      settings.steps * static_cast<std::int64_t>(settings.batch * ch12::kGpt2Block.max_length);
  const double rate = settings.peak_learning_rate;
  fmt::print(ch.out,
             "\nEach change trained {} AdamW steps of {} windows of {} tokens ({} tokens,\n",
             settings.steps, settings.batch, ch12::kGpt2Block.max_length, tokens_read);
  fmt::print(ch.out, "{:.2g} per parameter of GPT-2's block), peak learning rate {:g}: GPT-2's\n",
             static_cast<double>(tokens_read) /
                 static_cast<double>(gpt::parameter_count(ch12::kGpt2Block)),
             rate);
  fmt::print(ch.out, "block from seeds {}, every change from seeds {}. Bits per byte on the\n",
             ch12::seed_list(seeds.baseline), ch12::seed_list(seeds.changes));
  fmt::print(ch.out, "validation part's first {} tokens, a row per seed:\n", scored);
  std::vector<std::size_t> all_rows = {0};
  std::vector<arma::vec> bits = {ch12::final_bits(results, 0, false)};
  std::vector<std::vector<std::uint64_t>> seeds_of = {seeds.baseline};
  const std::vector<std::size_t> changes = ch12::every_change();
  std::vector<arma::vec> change_bits;
  for (const std::size_t k : changes) {
    all_rows.push_back(k);
    bits.push_back(ch12::final_bits(results, k, false));
    seeds_of.push_back(seeds.changes);
    change_bits.push_back(bits.back());
  }
  print_runs(ch, all_rows, bits, seeds.baseline, seeds_of, true);
  const double uniform = std::log2(static_cast<double>(data.tokenizer.vocab_size())) /
                         (static_cast<double>(data.corpus.training.size()) /
                          static_cast<double>(data.training.tokens.n_elem));
  bool learned = true;  // every run of the comparison
  for (const arma::vec& b : bits)
    learned = learned && arma::all(b < uniform);
  if (!is_quick)  // after --quick's few steps a model may not have left the uniform guess yet
    ch.checks.claim("every run ends below the uniform guess's bits per byte", learned);

  const attn::stats::AgainstBaseline comparison =
      attn::stats::against_baseline(bits[0], change_bits, ch12::kFamilyConfidence);
  fmt::print(ch.out, "\nEach change minus GPT-2's block, with an interval that holds the true\n");
  fmt::print(ch.out, "difference for all {} changes at once with {:g}% confidence (each at\n",
             changes.size(), 100.0 * ch12::kFamilyConfidence);
  fmt::print(ch.out, "{:g}%, Bonferroni), from one run's spread pooled over the {} rows,\n",
             100.0 * comparison.each_confidence, ch12::kChanges.size());
  fmt::print(ch.out, "{:.4f} bits per byte ({:g} degrees of freedom):\n", comparison.spread.sd,
             comparison.spread.df);
  print_verdicts(ch, changes, comparison, ch12::kFamilyConfidence);
  the_unequal_spreads(ch, bits[0], change_bits, comparison);

  const attn::stats::Design design{.changes = changes.size(),
                                   .change_seeds = seeds.changes.size(),
                                   .baseline_seeds = seeds.baseline.size(),
                                   .family_confidence = ch12::kFamilyConfidence,
                                   .power = ch12::kPower};
  fmt::print(ch.out, "With {} runs of each change and {} of the baseline, these intervals find\n",
             design.change_seeds, design.baseline_seeds);
  fmt::print(ch.out,
             "a true difference of {:.3f} bits per byte {:g}% of the time at the measured\n",
             attn::stats::design_minimum_detectable_effect(design, comparison.spread.sd),
             100.0 * ch12::kPower);
  fmt::print(ch.out, "spread ({:.3f} at the {:g} the design was planned for); smaller ones they\n",
             attn::stats::design_minimum_detectable_effect(design, ch12::kPlannedSpread),
             ch12::kPlannedSpread);
  fmt::print(ch.out, "may miss. Where no change does anything, all {} hold 0 at least {:g}% of\n",
             changes.size(), 100.0 * ch12::kFamilyConfidence);
  fmt::print(ch.out, "the time.\n");
  return comparison;
}

// Pairing: a change's run and the baseline's of the same seed read the same batches (the
// window's and RMSNorm's start from the same weights too). Whether that makes their difference
// less noisy is measured: the paired differences' spread against what runs sharing nothing give.
void the_pairing(attn::book::Chapter& ch, const std::vector<ch12::Result>& results,
                 const ch12::Seeds& seeds, double spread) {
  const arma::vec baseline = ch12::final_bits(results, 0, false).head(seeds.changes.size());
  const std::vector<std::size_t> changes = ch12::every_change();
  std::vector<arma::vec> differences;
  std::vector<attn::stats::Summary> summaries;
  for (const std::size_t k : changes) {
    differences.push_back(ch12::final_bits(results, k, false) - baseline);
    summaries.push_back(attn::stats::summarise(differences.back()));
  }
  fmt::print(ch.out,
             "\nEach change minus the baseline's run of the same seed (the same batches;\n");
  fmt::print(ch.out, "for the window and RMSNorm, the same starting weights too):\n");
  print_header(ch, changes);
  for (std::size_t s = 0; s < seeds.changes.size(); ++s) {
    fmt::print(ch.out, "  {:>6}", seeds.changes[s]);
    for (const arma::vec& d : differences)
      fmt::print(ch.out, "{:>+{}.4f}", d(s), kColumn);
    fmt::print(ch.out, "\n");
  }
  fmt::print(ch.out, "  {:<6}", "spread");
  for (const attn::stats::Summary& d : summaries)
    fmt::print(ch.out, "{:>{}.4f}", d.sd, kColumn);
  fmt::print(ch.out, "\n");
  const attn::stats::PooledSpread paired = attn::stats::pooled(summaries);
  fmt::print(ch.out, "Pooled over the {} changes, the paired differences spread {:.4f} ({:g}\n",
             changes.size(), paired.sd, paired.df);
  fmt::print(ch.out, "degrees of freedom); runs that share nothing would spread sqrt(2) x {:.4f}\n",
             spread);
  fmt::print(ch.out, "= {:.4f}.\n", std::sqrt(2.0) * spread);
}

// Do today's changes add up? Together minus the sum of each alone: the contrast
// today - (rope + gqa + window + rmsnorm + swiglu) + 4 baseline, from the pooled spread.
void the_interaction(attn::book::Chapter& ch, const std::vector<ch12::Result>& results,
                     const attn::stats::PooledSpread& spread) {
  std::vector<attn::stats::Summary> groups = {
      attn::stats::summarise(ch12::final_bits(results, 0, false))};
  std::vector<double> weights = {0.0};
  double alone = 0.0;  // the changes' differences from the baseline, each alone, added up
  for (std::size_t k = 1; k < ch12::kChanges.size(); ++k) {
    if (!ch12::in_todays_block(ch12::kChanges[k]))
      continue;
    groups.push_back(attn::stats::summarise(ch12::final_bits(results, k, false)));
    weights.push_back(-1.0);
    weights.front() += 1.0;
    alone += groups.back().mean - groups.front().mean;
  }
  const std::size_t today = ch12::kChanges.size() - 1;  // the last row makes them all
  groups.push_back(attn::stats::summarise(ch12::final_bits(results, today, false)));
  weights.push_back(1.0);
  weights.front() -= 1.0;
  const double confidence = ch12::kFamilyConfidence;
  const attn::stats::Difference d = attn::stats::contrast(groups, weights, spread, confidence);
  fmt::print(ch.out,
             "\nToday's block's {} changes, each alone, add up to {:+.3f}; together, {:+.3f}.\n",
             groups.size() - 2, alone, groups.back().mean - groups.front().mean);
  fmt::print(ch.out, "Together minus the sum: {:+.3f}, {:g}% interval {}: ", d.estimate,
             100.0 * confidence, ch12::interval(d));
  switch (attn::stats::finding(d)) {
    case attn::stats::Finding::lower:
      fmt::print(ch.out, "they gain more together.\n");
      break;
    case attn::stats::Finding::higher:
      fmt::print(ch.out, "they gain less together.\n");
      break;
    case attn::stats::Finding::not_detectable:
      fmt::print(ch.out, "not detectable at this size.\n");
      break;
  }
}

// The learning curves: each change's mean bits per byte during training, minus the baseline's.
void the_curves(attn::book::Chapter& ch, const std::vector<ch12::Result>& results) {
  const arma::rowvec steps = results.front().steps;
  const arma::rowvec baseline = arma::mean(ch12::curves(results, 0), 0);
  fmt::print(ch.out,
             "\nDuring training, on the same validation tokens: GPT-2's block's mean bits\n");
  fmt::print(ch.out, "per byte, and each change's mean minus it, after\n");
  fmt::print(ch.out, "  {:<34}", "steps");
  for (const double step : steps)
    fmt::print(ch.out, "{:>{}}", step, kColumn);
  fmt::print(ch.out, "\n  {:<34}", ch12::kChanges[0].label);
  for (const double bits : baseline)
    fmt::print(ch.out, "{:>{}.3f}", bits, kColumn);
  fmt::print(ch.out, "\n");
  const std::vector<const char*> colours = {colour::red,      colour::dark_grey, colour::blue,
                                            colour::sky_blue, colour::purple,    colour::green,
                                            colour::orange,   colour::black};
  std::vector<attn::book::Series> series = {{.label = ch12::kChanges[0].label,
                                             .y = arma::rowvec(steps.n_elem, arma::fill::zeros),
                                             .colour = colour::grey,
                                             .dashed = true}};
  for (std::size_t k = 1; k < ch12::kChanges.size(); ++k) {
    const arma::rowvec gap = arma::mean(ch12::curves(results, k), 0) - baseline;
    fmt::print(ch.out, "  {:<34}", ch12::kChanges[k].label);
    for (const double g : gap)
      fmt::print(ch.out, "{:>+{}.3f}", g, kColumn);
    fmt::print(ch.out, "\n");
    series.push_back({.label = ch12::kChanges[k].label, .y = gap, .colour = colours[k - 1]});
  }
  ch.plots.lines({.name = "12-03-curves",
                  .title = "During training: each change's mean minus GPT-2's block's",
                  .x_label = "steps",
                  .y_label = "bits per byte, change minus GPT-2's block",
                  .x = steps,
                  .series = series,
                  .key_at = "outside right top"});
}

// The learning-rate check: the baseline and the changes marked rate_checked, again at
// ch12::kRateFactor times the rate, compared as the main comparison is.
void the_rate_check(attn::book::Chapter& ch, const std::vector<ch12::Result>& results,
                    const ch12::Seeds& seeds, const gpt::TrainingSettings& settings) {
  const gpt::TrainingSettings second = ch12::at_second_rate(settings);
  const double rate = second.peak_learning_rate;
  std::vector<std::size_t> columns;
  std::vector<std::size_t> changes;
  std::vector<arma::vec> bits;
  std::vector<arma::vec> change_bits;
  for (std::size_t k = 0; k < ch12::kChanges.size(); ++k) {
    if (!ch12::kChanges[k].rate_checked)
      continue;
    columns.push_back(k);
    bits.push_back(ch12::final_bits(results, k, true));
    if (k != 0) {
      changes.push_back(k);
      change_bits.push_back(bits.back());
    }
  }
  fmt::print(ch.out,
             "\nThe learning-rate check: GPT-2's block and {} changes again at {:g} times\n",
             changes.size(), ch12::kRateFactor);
  fmt::print(ch.out, "the rates (peak {:g}, final {:g}), seeds {}:\n", rate,
             second.final_learning_rate, ch12::seed_list(seeds.rate));
  const std::vector<std::vector<std::uint64_t>> seeds_of(columns.size(), seeds.rate);
  print_runs(ch, columns, bits, seeds.rate, seeds_of, false);
  const attn::stats::AgainstBaseline comparison =
      attn::stats::against_baseline(bits[0], change_bits, ch12::kFamilyConfidence);
  fmt::print(ch.out,
             "Against GPT-2's block at that rate (spread {:.4f}, {:g} degrees of freedom):\n",
             comparison.spread.sd, comparison.spread.df);
  print_verdicts(ch, changes, comparison, ch12::kFamilyConfidence);
}

// Trains every run of the experiment and tells what the numbers support.
void the_comparison(attn::book::Chapter& ch, const ch11::EncodedCorpus& data, bool is_quick,
                    const std::vector<std::uint64_t>& seed_choice, const std::string& folder) {
  const gpt::TrainingSettings settings = is_quick ? ch12::quick(ch12::kTraining) : ch12::kTraining;
  const std::size_t scored = is_quick ? ch12::kQuickScoredTokens : ch12::kScoredTokens;
  const ch12::Seeds seeds = ch12::seeds_for(seed_choice);
  const std::vector<ch12::Result> results =
      ch12::train_all(ch.log, data, ch12::runs_for(seeds, settings), scored, folder);
  const attn::stats::AgainstBaseline comparison =
      the_verdicts(ch, data, results, seeds, settings, scored, is_quick);
  the_pairing(ch, results, seeds, comparison.spread.sd);
  the_interaction(ch, results, comparison.spread);
  the_curves(ch, results);
  the_rate_check(ch, results, seeds, settings);
  the_scale(ch, settings);

  std::vector<std::string> labels;
  arma::rowvec change(comparison.differences.size());
  arma::rowvec low(change.n_elem);
  arma::rowvec high(change.n_elem);
  for (std::size_t c = 0; c < comparison.differences.size(); ++c) {
    labels.push_back(ch12::kChanges[c + 1].label);
    change(c) = comparison.differences[c].estimate;
    low(c) = comparison.differences[c].low;
    high(c) = comparison.differences[c].high;
  }
  ch.plots.ranges({.name = "12-01-changes",
                   .title = fmt::format("Each change minus GPT-2's block, {:g}% for all {} at once",
                                        100.0 * ch12::kFamilyConfidence, labels.size()),
                   .labels = labels,
                   .value = change,
                   .low = low,
                   .high = high,
                   .value_label = "change minus GPT-2's block, bits per byte (below 0: better)",
                   .colour = colour::mid_blue,
                   .reference = 0.0});
}

}  // namespace

int main(int argc, char** argv) {
  const attn::book::ChapterInfo info{
      .executable = "ch12_todays_attention",
      .summary = "Chapter 12: from GPT-2's attention to today's, each change trained and measured",
      .reference = "the reference"};
  bool is_quick = false;
  std::vector<std::uint64_t> seeds;
  const auto options = [&](CLI::App& app) {
    app.add_flag("--quick", is_quick,
                 "train a few steps only, keeping no checkpoints (the tests' run: every piece "
                 "checked but the models' quality)");
    app.add_option(
           "--seeds", seeds,
           fmt::format("the seeds every change is trained from, comma-separated (default "
                       "{}; --quick: {}); GPT-2's block takes {} times as many, these and the "
                       "seeds after the largest",
                       fmt::join(ch12::kSeeds, ","), fmt::join(ch12::kQuickSeeds, ","),
                       ch12::kBaselineTimes))
        ->delimiter(',');
  };
  return attn::book::run_chapter(argc, argv, info, options, [&](attn::book::Chapter& ch) {
    if (seeds.empty())
      seeds = is_quick ? ch12::kQuickSeeds : ch12::kSeeds;
    ch12::check_seeds(seeds);
    const std::string folder = is_quick ? std::string() : std::string(ATTN_DEFAULT_CHECKPOINTS);
    if (!folder.empty())
      std::filesystem::create_directories(folder);
    const ch11::EncodedCorpus data = the_corpus(ch);
    the_example(ch);
    the_pieces(ch);
    the_cache(ch);
    real_caches(ch);
    the_comparison(ch, data, is_quick, seeds, folder);
  });
}
