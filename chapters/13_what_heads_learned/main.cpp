// Chapter 13: what the heads learned. Chapter 11's GPT trained its sixteen heads on the King
// James Bible; this chapter looks at what each one does: its weights on a verse, where it looks
// on average, which heads copy (induction heads, on random tokens repeated), and what the model
// loses when a head is switched off. Then a controlled experiment shows where induction heads
// come from: attention-only models of one and of two layers, trained here from several seeds on
// repeated random segments.
// The GPT layer measures (attn/gpt/heads.hpp: attention weights, profiles, induction scores;
// attn/gpt/head_mask.hpp: ablations); chapter 11 gives its trained model (small_gpt.hpp); the
// copying test and the experiment are this chapter's (induction.hpp). Its page:
// chapters/13_what_heads_learned/chapter.md.

#include "induction.hpp"
#include "sinks.hpp"

#include <11_small_gpt/small_gpt.hpp>
#include <12_todays_attention/experiment.hpp>

#include <attn/book/chapter.hpp>
#include <attn/book/palette.hpp>
#include <attn/fast/threads.hpp>
#include <attn/gpt/forward.hpp>
#include <attn/gpt/head_mask.hpp>
#include <attn/gpt/heads.hpp>
#include <attn/gpt/text.hpp>
#include <attn/math/validate.hpp>
#include <attn/stats/experiment.hpp>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace {
namespace colour = attn::book::colour;
namespace gpt = attn::gpt;
namespace ch11 = attn::ch11;
namespace ch12 = attn::ch12;
namespace ch13 = attn::ch13;
namespace stats = attn::stats;

//! [settings]
// A head has a role when at least this share of its weight, averaged over queries, goes to one
// place: the token before, the first token, or the query's own.
const double kRoleShare = 0.5;
// Chapter 11's model's copying tests: a segment of 50 tokens repeated (100 of its 128
// positions), random tokens of its whole vocabulary from their own stream, or its validation
// text's tokens, segment after segment.
const arma::uword kCopyPeriod = 50;
const std::uint64_t kCopySeed = 13;
// Ablations: a head's output replaced by its mean over windows of the training text, the cost
// measured on windows of the validation text; heads ablated together while the rise in bits per
// byte is below this, with 95% confidence (an amount chosen for this chapter: a few percent of
// the model's bits per byte).
const double kAllowedRise = 0.05;
const double kFamilyConfidence = 0.95;  // that every interval of a family holds at once
// How much each measurement reads: the book's run, and --quick's.
struct Sizes {
  arma::uword profile_windows;  // validation windows the profiles average over
  std::size_t copy_sequences;   // sequences of random tokens in the copying test
  std::size_t text_sequences;   // segments of the validation text in the copying test
  arma::uword mean_windows;     // training windows the heads' means are taken over
  arma::uword scored_windows;   // validation windows the ablations are scored on
  arma::uword streamed_tokens;  // tokens each cache reads
};
const Sizes kSizes{.profile_windows = 16,
                   .copy_sequences = 24,
                   .text_sequences = 24,
                   .mean_windows = 16,
                   .scored_windows = 32,
                   .streamed_tokens = ch13::kStreamedTokens};
const Sizes kQuickSizes{.profile_windows = 2,
                        .copy_sequences = 3,
                        .text_sequences = 3,
                        .mean_windows = 2,
                        .scored_windows = 3,
                        .streamed_tokens = 256};
//! [settings]

// What the command line chose: which of chapter 11's models the chapter looks inside.
struct Choices {
  bool quick = false;
  std::string checkpoint = ATTN_DEFAULT_CHECKPOINT;
  std::string text;  // --text: the reader's file the model was trained on; empty: the Bible
};

//! [article-numbers]
const double kRowSumTolerance = 1e-12;  // a row of weights against 1
//! [article-numbers]
const double kCacheTolerance = 1e-12;  // two caches' bits per byte while they hold the same

// The checks of the experiment's outcome, thresholds set after the measured runs, well clear of
// every seed's value (the page shows them): a two-layer model ends with the second copy below
// kCopiedLoss (nats a token) and a head of induction score above kInductionHead; a one-layer model
// above kCopiedLoss, with no head above kNoInduction. Mean-ablating a two-layer model's induction
// heads (block 1's heads of score above kInductionHead) removes at least kGainRemoved of its
// in-context gain, and mean-ablating one of block 0's heads takes at least kComposition of the top
// induction head's score away.
const double kCopiedLoss = 1.5;
const double kInductionHead = 0.5;
const double kNoInduction = 0.2;
const double kGainRemoved = 0.5;
const double kComposition = 0.5;

std::string head_name(arma::uword layer, arma::uword head) {
  return fmt::format("block {}, head {}", layer, head);
}

// Up to `count` windows of `length` tokens, one after another from the start of a text.
std::vector<arma::uvec> windows_of(const arma::uvec& tokens, arma::uword length,
                                   arma::uword count) {
  std::vector<arma::uvec> windows;
  for (arma::uword w = 0; w < count && (w + 1) * length <= tokens.n_elem; ++w)
    windows.push_back(tokens.subvec(w * length, (w + 1) * length - 1));
  return windows;
}

// A head that spreads every query's weight evenly over the window, query i over its i + 1
// tokens: its mean weight on the first token and its mean entropy (nats), over the queries
// profile() averages, 1 ... n - 1.
double even_first_token(arma::uword n) {
  double sum = 0.0;
  for (arma::uword i = 1; i < n; ++i)
    sum += 1.0 / static_cast<double>(i + 1);
  return sum / static_cast<double>(n - 1);
}
double even_entropy(arma::uword n) {
  double sum = 0.0;
  for (arma::uword i = 1; i < n; ++i)
    sum += std::log(static_cast<double>(i + 1));
  return sum / static_cast<double>(n - 1);
}

// The sizes the measurements of chapter 11's model want, cut to what its text holds: a reader's
// text (--text) may be short. (The random tokens and chapter 12's models on the Bible keep theirs.)
// Refuses a text whose validation part cannot give the ablations two windows to order the heads
// on and two others to test them on: an interval needs two.
Sizes fitted(const Sizes& wanted, const ch11::EncodedCorpus& text, const Choices& choices) {
  const arma::uword length = ch11::kModel.max_length;
  const arma::uword validation = text.validation.tokens.n_elem;
  const arma::uword training = text.training.tokens.n_elem;
  const arma::uword least = 2;
  Sizes sizes = wanted;
  sizes.profile_windows = std::min(wanted.profile_windows, validation / length);
  sizes.text_sequences = std::min<std::size_t>(wanted.text_sequences, validation / kCopyPeriod);
  sizes.mean_windows = std::min(wanted.mean_windows, training / length);
  sizes.scored_windows = std::min(wanted.scored_windows, validation / (2 * (length + 1)));
  if (sizes.scored_windows < least) {
    const arma::uword needed = 2 * least * (length + 1);
    const ch11::TextNeeded bytes = ch11::text_needed(needed, text.corpus.validation.size(),
                                                     validation, ch11::kValidationTenths);
    throw attn::book::CommandLineError(
        "--text",
        fmt::format("{}: its validation part encodes to {} tokens, and the ablations need {} (two "
                    "windows of {} tokens and the one after each to order the heads, two others "
                    "to test them); at {:.1f} bytes a token, a text of some {:.0f} bytes or more",
                    choices.text, validation, needed, length, bytes.bytes_per_token,
                    bytes.text_bytes));
  }
  return sizes;
}

// Chapter 11's model, from its checkpoint (of a run on the reader's text, with --text, whose
// size is judged first); --quick: a random model of its sizes (every piece is measured, none of
// it means anything).
ch11::TrainedModel the_model(attn::book::Chapter& ch, const Choices& choices, const Sizes& wanted) {
  if (choices.quick) {
    ch11::TrainedModel model{.recipe = ch11::kRecipe,
                             .text = ch11::encode_corpus(ch11::read_split_bible().corpus),
                             .state = gpt::start(ch11::kModel, ch11::kTraining)};
    fmt::print(ch.out,
               "--quick: a random model of chapter 11's sizes, untrained ({} blocks of {}\n",
               ch11::kModel.layers, ch11::kModel.heads);
    fmt::print(ch.out, "heads): every measurement runs, none of them means anything.\n");
    return model;
  }
  std::optional<ch11::ReaderText> text;
  if (!choices.text.empty()) {
    try {
      text = ch11::read_reader_text(choices.text);
    } catch (const attn::math::InputError& e) {  // no tokenizer learns from a text of a few bytes
      throw attn::book::CommandLineError("--text", e.what());
    }
    fitted(wanted, text->encoded, choices);  // too short a text is refused before anything else
  }
  ch11::TrainedModel model;
  try {
    model = text ? ch11::load_text_model(choices.checkpoint, std::move(*text))
                 : ch11::load_trained_model(choices.checkpoint);
  } catch (const attn::math::InputError& e) {  // no such file, not a checkpoint, another run's
    throw attn::book::CommandLineError("--checkpoint", e.what());
  }
  fmt::print(ch.out,
             "Chapter 11's model, read from its checkpoint: {} blocks of {} heads, d_model\n",
             model.recipe.model.layers, model.recipe.model.heads);
  fmt::print(ch.out, "{}, a context of {} tokens, trained {} steps on {}.\n",
             model.recipe.model.d_model, model.recipe.model.max_length, model.state.step,
             choices.text.empty()
                 ? std::string("the King James Bible")
                 : std::filesystem::path(choices.text).filename().string() + " (--text)");
  return model;
}

// The validation part's first line that is not empty (a verse, in the Bible), at most a context
// of tokens of it.
gpt::TokenText first_line(const ch11::TrainedModel& model) {
  const std::string line = ch11::first_line(model.text.corpus.validation);
  // A validation part of line ends only has no such line: its first tokens stand in.
  gpt::TokenText encoded =
      line.empty() ? model.text.validation : gpt::encode(model.text.tokenizer, line);
  const arma::uword length = model.recipe.model.max_length;
  if (encoded.tokens.n_elem > length) {
    encoded.tokens = encoded.tokens.head(length);
    encoded.lengths = encoded.lengths.head(length);
  }
  return encoded;
}

// Every head's weights on the first verse of the validation text (the first line of a reader's),
// one panel a head.
void the_gallery(attn::book::Chapter& ch, const ch11::TrainedModel& model, const Choices& choices) {
  const gpt::TransformerWeights& w = model.state.weights;
  const std::string unit = choices.text.empty() ? "verse" : "line";
  const arma::uvec tokens = first_line(model).tokens;
  std::vector<attn::text::TokenId> ids(tokens.begin(), tokens.end());
  const std::string words = attn::text::printable(model.text.tokenizer.decode(ids));
  std::vector<std::string> labels;
  for (const arma::uword id : tokens)
    labels.push_back(ch11::axis_label(model.text.tokenizer.token_bytes(id)));
  const gpt::TransformerForward pass = gpt::transformer_forward(w, tokens, {0});
  const gpt::HeadWeights heads = gpt::attention_weights(pass);
  fmt::print(ch.out, "\nThe validation text's first {}, {} tokens:\n  {}\n", unit, tokens.n_elem,
             words);

  // What the chapter reads is what the model computed with: rows of weights that sum to 1,
  // nothing on a later token, and a pass with an empty mask is the plain pass to the bit.
  bool rows_sum_to_one = true;
  bool causal = true;
  std::vector<attn::book::Heatmap> panels;
  for (arma::uword l = 0; l < w.config.layers; ++l)
    for (arma::uword k = 0; k < w.config.heads; ++k) {
      const arma::mat& a = heads[l][k];
      rows_sum_to_one =
          rows_sum_to_one && arma::abs(arma::sum(a, 1) - 1.0).max() <= kRowSumTolerance;
      causal = causal && arma::accu(arma::abs(arma::trimatu(a, 1))) == 0.0;
      panels.push_back({.title = head_name(l, k),
                        .queries = labels,
                        .keys = labels,
                        .values = a,
                        .write_values = false,
                        .x_label = "",
                        .y_label = ""});
    }
  const arma::mat masked_nothing = gpt::sentence_logits(w, tokens, gpt::HeadMask{});
  const bool plain = arma::all(arma::vectorise(masked_nothing == pass.logits));
  ch.checks.claim(fmt::format("every head's weights on the {}: each row sums to 1 within {:g}",
                              unit, kRowSumTolerance),
                  rows_sum_to_one);
  ch.checks.claim(fmt::format("every head's weights on the {}: none on a later token", unit),
                  causal);
  ch.checks.claim(
      "a head mask that masks nothing gives the plain forward pass, every logit to "
      "the bit",
      plain);
  ch.plots.heatmaps(
      {.name = "13-01-heads",
       .title = fmt::format("Every head of chapter 11's model on a {} (a block a row)", unit),
       .panels = panels,
       .columns = w.config.heads});
}

// Each head's profile, averaged over windows of the validation text.
std::vector<std::vector<gpt::HeadProfile>> the_profiles(attn::book::Chapter& ch,
                                                        const ch11::TrainedModel& model,
                                                        const Sizes& sizes) {
  const gpt::TransformerWeights& w = model.state.weights;
  const std::vector<arma::uvec> windows =
      windows_of(model.text.validation.tokens, w.config.max_length, sizes.profile_windows);
  std::vector<std::vector<gpt::HeadProfile>> profiles(
      w.config.layers, std::vector<gpt::HeadProfile>(w.config.heads));
  const double share = 1.0 / static_cast<double>(windows.size());
  for (const arma::uvec& window : windows) {
    const gpt::HeadWeights heads = gpt::attention_weights(w, window);
    for (arma::uword l = 0; l < w.config.layers; ++l)
      for (arma::uword k = 0; k < w.config.heads; ++k) {
        const gpt::HeadProfile p = gpt::profile(heads[l][k]);
        gpt::HeadProfile& sum = profiles[l][k];
        sum.previous_token += share * p.previous_token;
        sum.first_token += share * p.first_token;
        sum.self += share * p.self;
        sum.mean_distance += share * p.mean_distance;
        sum.entropy += share * p.entropy;
      }
  }
  fmt::print(ch.out, "\nWhere each head looks, averaged over the queries of {} windows of {}\n",
             windows.size(), w.config.max_length);
  fmt::print(ch.out, "validation tokens: its weight on the token before, on the window's first\n");
  fmt::print(ch.out,
             "token and on itself, how far back it looks (tokens) and its entropy (nats;\n");
  fmt::print(ch.out, "spread evenly over the window it would be {:.2f}). A role where one\n",
             even_entropy(w.config.max_length));
  fmt::print(ch.out, "place takes at least {:g} of the weight:\n", kRoleShare);
  fmt::print(ch.out, "  {:<16} {:>8} {:>7} {:>6} {:>9} {:>8}  {}\n", "", "previous", "first",
             "self", "distance", "entropy", "role");
  for (arma::uword l = 0; l < w.config.layers; ++l)
    for (arma::uword k = 0; k < w.config.heads; ++k) {
      const gpt::HeadProfile& p = profiles[l][k];
      const std::string role = p.previous_token >= kRoleShare ? "previous token"
                               : p.first_token >= kRoleShare  ? "first token"
                               : p.self >= kRoleShare         ? "itself"
                                                              : "-";
      fmt::print(ch.out, "  {:<16} {:>8.2f} {:>7.2f} {:>6.2f} {:>9.1f} {:>8.2f}  {}\n",
                 head_name(l, k), p.previous_token, p.first_token, p.self, p.mean_distance,
                 p.entropy, role);
    }
  return profiles;
}

// A copying test's in-context gain with its interval over the sequences, in words.
std::string gain_in_words(const ch13::CopyLosses& losses) {
  const stats::Difference gain =
      stats::paired(losses.gains, arma::zeros(losses.gains.n_elem), 0.95);
  return fmt::format(
      "first copy {:.2f}, second {:.2f}: a gain of {:+.2f} nats, 95% interval "
      "[{:+.2f}, {:+.2f}]",
      losses.first, losses.second, losses.gain(), gain.low, gain.high);
}

// Chapter 11's model's two copying tests: every head's induction score and the in-context gain
// on random tokens (Olsson et al.'s test), and the gain on its own kind of text repeated.
// Returns the repeated text, which the ablations measure the gain on.
ch13::CopyTest the_copying(attn::book::Chapter& ch, const ch11::TrainedModel& model,
                           const Sizes& sizes) {
  const gpt::TransformerWeights& w = model.state.weights;
  const ch13::CopyTest random =
      ch13::copy_test(w.config.vocabulary, kCopyPeriod, sizes.copy_sequences, kCopySeed);
  const ch13::CopyTest text =
      ch13::repeated_text(model.text.validation.tokens, kCopyPeriod, sizes.text_sequences);
  const arma::mat scores = ch13::induction_scores(w, random);
  fmt::print(ch.out, "\nRandom tokens of the whole vocabulary, a segment of {} repeated once, {}\n",
             random.period, random.sequences.size());
  fmt::print(ch.out, "sequences from default_rng({}). Each head's induction score (its mean\n",
             kCopySeed);
  fmt::print(ch.out, "weight, from a token of the second copy, on the token that followed the\n");
  fmt::print(ch.out,
             "same token in the first copy; a head that always looked there would score 1):\n");
  fmt::print(ch.out, "  {:<8}", "");
  for (arma::uword k = 0; k < w.config.heads; ++k)
    fmt::print(ch.out, " {:>7}", fmt::format("head {}", k));
  fmt::print(ch.out, "\n");
  for (arma::uword l = 0; l < w.config.layers; ++l) {
    fmt::print(ch.out, "  {:<8}", fmt::format("block {}", l));
    for (arma::uword k = 0; k < w.config.heads; ++k)
      fmt::print(ch.out, " {:>7.2f}", scores(l, k));
    fmt::print(ch.out, "\n");
  }
  fmt::print(ch.out,
             "The cost in nats a token (ln V = {:.2f}), 95% intervals over the sequences:\n",
             std::log(static_cast<double>(w.config.vocabulary)));
  fmt::print(ch.out, "  random tokens:  {}\n", gain_in_words(ch13::copy_losses(w, random)));
  fmt::print(ch.out, "  validation text, {} segments of {} tokens each repeated:\n    {}\n",
             text.sequences.size(), text.period, gain_in_words(ch13::copy_losses(w, text)));
  return text;
}

// Each head of chapter 11's model replaced by its mean output, alone: the change in bits per
// byte and in the in-context gain on repeated text, each with an interval that holds for all
// heads at once; then heads ablated together.
void the_ablations(attn::book::Chapter& ch, const ch11::TrainedModel& model,
                   const ch13::CopyTest& text, const Sizes& sizes) {
  const gpt::TransformerWeights& w = model.state.weights;
  const gpt::TransformerConfig& c = w.config;
  const arma::uword length = c.max_length;
  const std::vector<arma::uvec> reference =
      windows_of(model.text.training.tokens, length, sizes.mean_windows);
  const std::vector<std::vector<arma::rowvec>> means = ch13::head_means_over(w, reference);
  std::vector<arma::uword> scored;  // windows of length + 1 tokens, one after another
  for (arma::uword k = 0; k < sizes.scored_windows; ++k)
    scored.push_back(k * (length + 1));
  const arma::vec plain_bits = gpt::window_bits(w, model.text.validation, scored, length, {});
  const arma::vec plain_gains = ch13::copy_losses(w, text).gains;
  const std::size_t heads = c.layers * c.heads;
  const double each = stats::bonferroni_confidence(kFamilyConfidence, heads);
  fmt::print(ch.out,
             "\nEach head replaced by its mean output over {} windows of the training text\n",
             reference.size());
  fmt::print(ch.out,
             "(mean-ablation), alone. Bits per byte on {} windows of {} validation tokens\n",
             scored.size(), length);
  fmt::print(ch.out, "({:.3f} with every head) rise, and the gain on repeated text ({:.2f} nats)\n",
             arma::mean(plain_bits), arma::mean(plain_gains));
  fmt::print(ch.out, "changes; each column's intervals hold for all {} heads at once ({:g}%,\n",
             heads, 100.0 * kFamilyConfidence);
  fmt::print(ch.out, "paired over the windows and the sequences):\n");
  fmt::print(ch.out, "  {:<16} {:>9}  {:<18} {:>6}  {}\n", "", "rise", "interval", "change",
             "interval");
  // Head k of block l is job l·h + k; the jobs run side by side, each writing its own slot.
  std::vector<stats::Difference> bits(heads);
  std::vector<stats::Difference> gains(heads);
  attn::fast::side_by_side(heads, [&](std::size_t job) {
    const arma::uword l = job / c.heads;
    const arma::uword k = job % c.heads;
    const gpt::HeadMask mask = gpt::HeadMask{}.replace(l, k, means[l][k]);
    bits[job] = stats::paired(gpt::window_bits(w, model.text.validation, scored, length, mask),
                              plain_bits, each);
    gains[job] = stats::paired(ch13::copy_losses(w, text, mask).gains, plain_gains, each);
  });
  arma::mat bits_change(c.layers, c.heads);
  for (std::size_t job = 0; job < heads; ++job) {
    const arma::uword l = job / c.heads;
    const arma::uword k = job % c.heads;
    const stats::Difference& b = bits[job];
    const stats::Difference& g = gains[job];
    bits_change(l, k) = b.estimate;
    fmt::print(ch.out, "  {:<16} {:>+9.3f}  [{:+.3f}, {:+.3f}]   {:>+6.2f}  [{:+.2f}, {:+.2f}]\n",
               head_name(l, k), b.estimate, b.low, b.high, g.estimate, g.low, g.high);
  }

  // Heads switched off together, the cheapest alone first. The order comes from the windows
  // above; the rise is measured on as many other windows, which chose nothing. The heads are
  // tested in that fixed order, and the count stops at the first whose interval reaches
  // kAllowedRise: a fixed sequence of tests needs no correction for their number.
  std::vector<arma::uword> other;  // the next windows of the validation text
  for (arma::uword k = 0; k < sizes.scored_windows; ++k)
    other.push_back((sizes.scored_windows + k) * (length + 1));
  const arma::vec plain_other = gpt::window_bits(w, model.text.validation, other, length, {});
  // bits_change is (layers × heads), stored a column at a time: entry l + k·layers is head k of
  // block l.
  const arma::uvec order = arma::sort_index(arma::vectorise(bits_change));
  const auto head_at = [&](arma::uword r) {  // (block, head) of the r-th cheapest
    return std::pair{order(r) % c.layers, order(r) / c.layers};
  };
  std::vector<stats::Difference> rises(order.n_elem);  // job r: the r + 1 cheapest, together
  attn::fast::side_by_side(order.n_elem, [&](std::size_t r) {
    gpt::HeadMask together;
    for (arma::uword q = 0; q <= r; ++q) {
      const auto [l, k] = head_at(q);
      together.replace(l, k, means[l][k]);
    }
    rises[r] = stats::paired(gpt::window_bits(w, model.text.validation, other, length, together),
                             plain_other, 0.95);
  });
  arma::uword gone = 0;  // heads that can go together, by the test
  fmt::print(ch.out, "Heads ablated together, the cheapest alone first, on {} other windows:\n",
             other.size());
  fmt::print(ch.out,
             "the rise in bits per byte after each head (95% intervals paired over them):\n");
  for (arma::uword r = 0; r < order.n_elem; ++r) {
    const auto [l, k] = head_at(r);
    const stats::Difference& rise = rises[r];
    if (gone == r && rise.high < kAllowedRise)
      gone = r + 1;
    fmt::print(ch.out, "  {:>2} {:<16} {:+.3f} [{:+.3f}, {:+.3f}]\n", r + 1, head_name(l, k),
               rise.estimate, rise.low, rise.high);
  }
  fmt::print(ch.out, "{} of the {} heads can go together with the rise's interval below {:g}\n",
             gone, heads, kAllowedRise);
  fmt::print(ch.out, "(tested in that order, stopping at the first that is not).\n");
}

// The experiment: attention-only models of one and two layers, trained from several seeds.
void the_experiment(attn::book::Chapter& ch, bool is_quick, const std::string& folder) {
  const gpt::TrainingSettings settings =
      is_quick ? ch13::quick(ch13::training_settings()) : ch13::training_settings();
  const std::vector<std::uint64_t>& seeds = is_quick ? ch13::kQuickSeeds : ch13::kSeeds;
  const std::vector<ch13::Result> results =
      ch13::train_all(ch.log, ch13::runs_for(seeds, settings), folder);
  fmt::print(ch.out,
             "\nAttention-only models (no MLP; {} heads, rotary positions, d_model {}) of\n",
             ch13::attention_only(1).heads, ch13::attention_only(1).d_model);
  fmt::print(ch.out, "one and of two layers, each trained {} steps of {} windows from seeds {}\n",
             settings.steps, settings.batch, fmt::join(seeds, ", "));
  fmt::print(ch.out, "on random segments of {} to {} tokens from {} repeated to fill a window.\n",
             ch13::kShortestSegment, ch13::kLongestSegment, ch13::kVocabulary);
  fmt::print(ch.out, "The copy test ({} sequences, a segment of {} repeated): the loss on the\n",
             ch13::kTestSequences, ch13::kTestPeriod);
  fmt::print(ch.out, "first and second copy (nats a token; ln {} = {:.2f}) and the best head's\n",
             ch13::kVocabulary, std::log(static_cast<double>(ch13::kVocabulary)));
  fmt::print(ch.out, "induction score, at the end:\n");
  fmt::print(ch.out, "  {:<6} {:>8} {:>8} {:>9}   {:>8} {:>8} {:>9}\n", "seed", "1 layer", "", "",
             "2 layers", "", "");
  fmt::print(ch.out, "  {:<6} {:>8} {:>8} {:>9}   {:>8} {:>8} {:>9}\n", "", "first", "second",
             "induction", "first", "second", "induction");
  const std::size_t n = seeds.size();
  arma::vec second_1(n), second_2(n), induction_1(n), induction_2(n);
  for (std::size_t s = 0; s < n; ++s) {
    const ch13::Result& one = results[s];
    const ch13::Result& two = results[n + s];
    second_1(s) = one.second.back();
    second_2(s) = two.second.back();
    induction_1(s) = one.induction.back();
    induction_2(s) = two.induction.back();
    fmt::print(ch.out, "  {:<6} {:>8.3f} {:>8.3f} {:>9.2f}   {:>8.3f} {:>8.3f} {:>9.2f}\n",
               seeds[s], one.first.back(), second_1(s), induction_1(s), two.first.back(),
               second_2(s), induction_2(s));
  }
  const stats::Difference d = stats::welch(second_2, second_1, 0.95);
  fmt::print(ch.out,
             "Second copy, two layers minus one: {:+.2f} nats, 95% interval [{:+.2f}, {:+.2f}]\n",
             d.estimate, d.low, d.high);
  fmt::print(ch.out, "(Welch's, over the seeds).\n");
  if (!is_quick) {
    ch.checks.claim(fmt::format("every two-layer model ends below {:g} nats on the second copy, "
                                "with a head of induction score above {:g}",
                                kCopiedLoss, kInductionHead),
                    arma::all(second_2 < kCopiedLoss) && arma::all(induction_2 > kInductionHead));
    ch.checks.claim(fmt::format("every one-layer model ends above {:g} nats on the second copy, "
                                "with no head of induction score above {:g}",
                                kCopiedLoss, kNoInduction),
                    arma::all(second_1 > kCopiedLoss) && arma::all(induction_1 < kNoInduction));
  }
  std::vector<attn::book::Series> losses;
  std::vector<attn::book::Series> scores;
  for (const ch13::Result& r : results) {
    const std::string label = fmt::format("{} layer{}, seed {}", r.run.layers,
                                          r.run.layers == 1 ? "" : "s", r.run.settings.seed);
    const char* tint = r.run.layers == 1 ? colour::blue : colour::red;
    losses.push_back({.label = label, .y = r.second, .colour = tint, .dashed = r.run.layers == 1});
    scores.push_back(
        {.label = label, .y = r.induction, .colour = tint, .dashed = r.run.layers == 1});
  }
  ch.plots.lines({.name = "13-03-phase-change",
                  .title = "Loss on the second copy through training",
                  .x_label = "steps",
                  .y_label = "nats a token",
                  .x = results.front().steps,
                  .series = losses,
                  .key_at = "center right",
                  .y_from_zero = true});
  ch.plots.lines({.name = "13-04-induction-score",
                  .title = "The best head's induction score through training",
                  .x_label = "steps",
                  .y_label = "induction score",
                  .x = results.front().steps,
                  .series = scores,
                  .y_from_zero = true});

  // In each two-layer model: what the top induction head is worth, and which heads of block 0
  // it reads (composition). Every head is mean-ablated, its mean taken over a second draw of the
  // copy test, which the measurements do not read.
  const ch13::CopyTest test =
      ch13::copy_test(ch13::kVocabulary, ch13::kTestPeriod, ch13::kTestSequences, ch13::kTestSeed);
  const ch13::CopyTest reference = ch13::copy_test(ch13::kVocabulary, ch13::kTestPeriod,
                                                   ch13::kTestSequences, ch13::kReferenceSeed);
  fmt::print(ch.out, "\nIn each two-layer model, its top induction head: its score, and the\n");
  fmt::print(ch.out, "in-context gain (nats) with every head, with that head mean-ablated, and\n");
  fmt::print(ch.out, "with every head of block 1 whose score is above {:g} mean-ablated; then\n",
             kInductionHead);
  fmt::print(ch.out, "the top head's score when one head of block 0 is mean-ablated, and in\n");
  fmt::print(ch.out, "brackets that block-0 head's weight on the previous token:\n");
  // What each two-layer model shows, measured side by side, a model to a job.
  struct Composition {
    arma::uword top = 0;       // block 1's top induction head
    double score = 0.0;        // its score
    double gain = 0.0;         // the in-context gain with every head
    double without = 0.0;      // ... with the top head mean-ablated
    double without_all = 0.0;  // ... with every induction head of block 1 mean-ablated
    std::size_t induction_heads = 0;
    arma::rowvec reads;     // the top head's score with each head of block 0 ablated
    arma::rowvec previous;  // each head of block 0's weight on the previous token
  };
  std::vector<Composition> found(n);
  attn::fast::side_by_side(n, [&](std::size_t s) {
    const gpt::TransformerWeights& w = results[n + s].weights;
    const std::vector<std::vector<arma::rowvec>> means =
        ch13::head_means_over(w, reference.sequences);
    const arma::mat induction = ch13::induction_scores(w, test);
    Composition& f = found[s];
    f.top = induction.row(1).index_max();
    f.score = induction(1, f.top);
    f.gain = ch13::copy_losses(w, test).gain();
    f.without =
        ch13::copy_losses(w, test, gpt::HeadMask{}.replace(1, f.top, means[1][f.top])).gain();
    gpt::HeadMask every_induction_head;
    for (arma::uword k = 0; k < w.config.heads; ++k)
      if (induction(1, k) > kInductionHead)
        every_induction_head.replace(1, k, means[1][k]);
    f.induction_heads = every_induction_head.masked().size();
    f.without_all = ch13::copy_losses(w, test, every_induction_head).gain();
    f.previous = ch13::previous_token_weights(w, test).row(0);
    f.reads.set_size(w.config.heads);
    for (arma::uword k = 0; k < w.config.heads; ++k)
      f.reads(k) =
          ch13::induction_scores(w, test, gpt::HeadMask{}.replace(0, k, means[0][k]))(1, f.top);
  });
  bool gain_removed = true;          // in every model
  bool composes = true;              // in every model
  arma::vec top_share(n);            // of the gain the top induction head carries
  arma::vec all_share(n);            // ... and all of block 1's
  std::size_t previous_matters = 0;  // models where the block-0 head that matters most is the
                                     // one with the most weight on the previous token
  for (std::size_t s = 0; s < n; ++s) {
    const Composition& f = found[s];
    top_share(s) = 1.0 - f.without / f.gain;
    all_share(s) = 1.0 - f.without_all / f.gain;
    previous_matters += f.reads.index_min() == f.previous.index_max() ? 1 : 0;
    gain_removed = gain_removed && f.gain - f.without_all >= kGainRemoved * f.gain;
    composes = composes && f.reads.min() <= (1.0 - kComposition) * f.score;
    std::string reads;
    for (arma::uword k = 0; k < f.reads.n_elem; ++k)
      reads += fmt::format(" {:.2f} ({:.2f})", f.reads(k), f.previous(k));
    fmt::print(ch.out,
               "  seed {}: block 1, head {}: {:.2f}; gain {:.2f}, ablated {:.2f}, with all {}\n",
               seeds[s], f.top, f.score, f.gain, f.without, f.induction_heads);
    fmt::print(ch.out, "          induction heads ablated {:.2f};\n", f.without_all);
    fmt::print(ch.out, "          block 0's heads ablated:{}\n", reads);
  }
  fmt::print(ch.out, "The top induction head carries {:.0f}% to {:.0f}% of the gain, block 1's\n",
             100.0 * top_share.min(), 100.0 * top_share.max());
  fmt::print(ch.out, "induction heads together {:.0f}% to {:.0f}%. The head of block 0 whose\n",
             100.0 * all_share.min(), 100.0 * all_share.max());
  fmt::print(ch.out, "ablation costs the most is the one with the most weight on the previous\n");
  fmt::print(ch.out, "token in {} of the {} models.\n", previous_matters, n);
  if (!is_quick) {
    ch.checks.claim(
        fmt::format("in every two-layer model, mean-ablating its induction heads removes "
                    "at least {:g}% of the in-context gain",
                    100.0 * kGainRemoved),
        gain_removed);
    ch.checks.claim(
        fmt::format("in every two-layer model, mean-ablating one head of block 0 takes at "
                    "least {:g}% of the top induction head's score away",
                    100.0 * kComposition),
        composes);
  }
}

// Each head's mean weight on its window's first token, over the queries of windows of the
// validation text. Returns `(layers × heads)`.
arma::mat first_token_weights(const gpt::TransformerWeights& w, const gpt::TokenText& text,
                              arma::uword count) {
  const std::vector<arma::uvec> windows = windows_of(text.tokens, w.config.max_length, count);
  arma::mat weight(w.config.layers, w.config.heads, arma::fill::zeros);
  for (const arma::uvec& window : windows) {
    const gpt::HeadWeights heads = gpt::attention_weights(w, window);
    for (arma::uword l = 0; l < w.config.layers; ++l)
      for (arma::uword k = 0; k < w.config.heads; ++k)
        weight(l, k) += gpt::profile(heads[l][k]).first_token;
  }
  return weight / static_cast<double>(windows.size());
}

// A line of first-token weights: each block's mean over its heads, and its largest head's.
std::string by_block(const arma::mat& weights) {
  std::string line;
  for (arma::uword l = 0; l < weights.n_rows; ++l)
    line += fmt::format(" block {} {:.3f} ({:.3f})", l, arma::mean(weights.row(l)),
                        weights.row(l).max());
  return line;
}

// Attention sinks: the weight on the first token, in chapter 11's model and in chapter 12's
// models with rotary positions; then those models read a long text through a cache of one
// context that keeps the first k tokens.
void the_sinks(attn::book::Chapter& ch, const ch11::TrainedModel& model,
               const std::vector<std::vector<gpt::HeadProfile>>& profiles, const Sizes& sizes,
               const Choices& choices) {
  // `sizes` as wanted, not cut to a reader's text: chapter 11's model's weights come from its
  // profiles, and chapter 12's models read the King James Bible, whatever chapter 11's read.
  std::optional<ch11::EncodedCorpus> bible;
  if (!choices.text.empty())
    bible = ch11::encode_corpus(ch11::read_split_bible().corpus);
  const ch11::EncodedCorpus& data = bible ? *bible : model.text;
  const std::vector<std::uint64_t>& seeds = choices.quick ? ch12::kQuickSeeds : ch12::kSeeds;
  const std::vector<gpt::TransformerWeights> rotary = ch13::rotary_models(
      ch.log, data, seeds, choices.quick ? std::string() : std::string(ATTN_DEFAULT_CHECKPOINTS));
  const gpt::TokenText& text = data.validation;
  // Chapter 11's model: its profiles (the_profiles(), the same windows) hold each head's weight.
  arma::mat ch11_weight(profiles.size(), profiles.front().size());
  for (arma::uword l = 0; l < ch11_weight.n_rows; ++l)
    for (arma::uword h = 0; h < ch11_weight.n_cols; ++h)
      ch11_weight(l, h) = profiles[l][h].first_token;
  // Every seed's heads side by side, (layers × heads · seeds): a head of one seed has nothing to
  // do with the head in the same place of another, so they are not averaged place by place.
  arma::mat rotary_weight;
  for (const gpt::TransformerWeights& w : rotary)
    rotary_weight =
        arma::join_rows(rotary_weight, first_token_weights(w, text, sizes.profile_windows));
  fmt::print(ch.out,
             "\nThe weight on a window's first token, on windows of the validation text,\n");
  fmt::print(ch.out, "each block's mean over its heads and queries (in brackets its largest\n");
  fmt::print(ch.out, "head's), against a head that spreads its weight evenly:\n");
  fmt::print(ch.out, "  chapter 11's model{} ({} tokens; evenly {:.3f}):\n   {}\n",
             choices.text.empty()
                 ? std::string()
                 : ", on " + std::filesystem::path(choices.text).filename().string(),
             model.state.weights.config.max_length,
             even_first_token(model.state.weights.config.max_length), by_block(ch11_weight));
  fmt::print(
      ch.out,
      "  chapter 12's rotary models, the heads of seeds {} ({} tokens; evenly {:.3f}):\n   {}\n",
      fmt::join(seeds, ", "), rotary.front().config.max_length,
      even_first_token(rotary.front().config.max_length), by_block(rotary_weight));

  // The long text, through each cache.
  const arma::uword context = rotary.front().config.max_length;
  const arma::uword points = sizes.streamed_tokens / context;
  std::vector<arma::mat> bits(ch13::kSinks.size(), arma::mat(rotary.size(), points));
  const std::size_t caches = ch13::kSinks.size();
  attn::fast::side_by_side(rotary.size() * caches, [&](std::size_t job) {  // a model and a cache
    const std::size_t m = job / caches;
    const std::size_t k = job % caches;
    bits[k].row(m) = ch13::streamed_bits(rotary[m], text, sizes.streamed_tokens,
                                         {.size = context, .sinks = ch13::kSinks[k]}, context);
  });
  bool same_while_it_fits = true;  // the first context: no cache has dropped anything yet
  for (std::size_t k = 1; k < ch13::kSinks.size(); ++k)
    same_while_it_fits =
        same_while_it_fits && arma::abs(bits[k].col(0) - bits[0].col(0)).max() <= kCacheTolerance;
  ch.checks.claim("while the text fits in the cache, every cache gives the same bits per byte",
                  same_while_it_fits);
  fmt::print(ch.out, "\nThe validation text's first {} tokens read through a cache of {} tokens\n",
             sizes.streamed_tokens, context);
  fmt::print(ch.out,
             "that keeps the text's first k (StreamingLLM) and the most recent ones, each\n");
  fmt::print(ch.out, "key turned at its place in the cache; bits per byte after the first {},\n",
             context);
  fmt::print(ch.out, "the mean of its {} stretches of {}, a row per seed:\n", points - 1, context);
  fmt::print(ch.out, "  {:<6}", "seed");
  for (const arma::uword k : ch13::kSinks)
    fmt::print(ch.out, " {:>8}", fmt::format("k = {}", k));
  fmt::print(ch.out, "\n");
  std::vector<arma::vec> after(ch13::kSinks.size());
  for (std::size_t k = 0; k < ch13::kSinks.size(); ++k)
    after[k] = arma::mean(bits[k].cols(1, points - 1), 1);
  for (std::size_t m = 0; m < rotary.size(); ++m) {
    fmt::print(ch.out, "  {:<6}", seeds[m]);
    for (std::size_t k = 0; k < ch13::kSinks.size(); ++k)
      fmt::print(ch.out, " {:>8.4f}", after[k](m));
    fmt::print(ch.out, "\n");
  }
  fmt::print(ch.out, "  {:<6}", "mean");
  for (std::size_t k = 0; k < ch13::kSinks.size(); ++k)
    fmt::print(ch.out, " {:>8.4f}", arma::mean(after[k]));
  fmt::print(ch.out, "\n");
  const std::size_t comparisons = ch13::kSinks.size() - 1;
  const double each = stats::bonferroni_confidence(kFamilyConfidence, comparisons);
  fmt::print(ch.out, "Each cache minus the plain window, paired over the seeds, intervals that\n");
  fmt::print(ch.out, "hold for both at once ({:g}%), and the smallest difference each could\n",
             100.0 * kFamilyConfidence);
  fmt::print(ch.out, "find with power 0.8:\n");
  for (std::size_t k = 1; k < ch13::kSinks.size(); ++k) {
    const stats::Difference d = stats::paired(after[k], after[0], each);
    const double floor = stats::minimum_detectable_effect(d.se, d.df, 1.0 - each, 0.8);
    const std::string finding = stats::finding(d) == stats::Finding::lower ? "lower"
                                : stats::finding(d) == stats::Finding::higher
                                    ? "higher"
                                    : "not detectable at this size";
    fmt::print(ch.out, "  k = {}: {:+.4f} [{:+.4f}, {:+.4f}], smallest {:.4f}: {}\n",
               ch13::kSinks[k], d.estimate, d.low, d.high, floor, finding);
  }
  // Each cache against the plain window, stretch by stretch: the text's own ups and downs,
  // which every cache shares, cancel.
  const char* tints[] = {colour::dark_grey, colour::blue, colour::red};
  std::vector<attn::book::Series> series;
  for (std::size_t k = 0; k < ch13::kSinks.size(); ++k)
    series.push_back({.label = ch13::kSinks[k] == 0
                                   ? std::string("k = 0, a sliding window (the reference)")
                                   : fmt::format("k = {}", ch13::kSinks[k]),
                      .y = arma::mean(bits[k] - bits[0], 0),
                      .colour = tints[k % 3],
                      .dashed = ch13::kSinks[k] == 0});
  ch.plots.lines(
      {.name = "13-05-streaming",
       .title = "Keeping the first tokens in a cache of one context",
       .x_label = "tokens read",
       .y_label = "bits per byte minus the sliding window's",
       .x = arma::regspace<arma::rowvec>(static_cast<double>(context), static_cast<double>(context),
                                         static_cast<double>(points * context)),
       .series = series,
       .key_at = "bottom left"});
}

}  // namespace

int main(int argc, char** argv) {
  const attn::book::ChapterInfo info{
      .executable = "ch13_what_heads_learned",
      .summary =
          "Chapter 13: what the heads of chapter 11's GPT learned, and where induction "
          "heads come from, measured",
      .reference = "the reference"};
  Choices choices;
  bool checkpoint_given = false;
  const auto options = [&](CLI::App& app) {
    CLI::Option* quick = app.add_flag(
        "--quick", choices.quick,
        "a random model of chapter 11's sizes and a few training steps, without checkpoints (the "
        "tests' run: every piece, not what it finds)");
    app.add_option("--checkpoint", choices.checkpoint,
                   "chapter 11's model to look inside (default: the one the book's build "
                   "trained, or with --text the one ch11_small_gpt --text wrote)")
        ->each([&](const std::string&) { checkpoint_given = true; })
        ->excludes(quick);
    app.add_option("--text", choices.text,
                   "the file chapter 11's model was trained on (ch11_small_gpt --text FILE), "
                   "which the measurements read instead of the King James Bible")
        ->excludes(quick);
    app.parse_complete_callback([&] {
      if (app.count("--text") > 0) {
        const std::string problem = ch11::text_file_problem(choices.text);
        if (!problem.empty())
          throw CLI::ValidationError("--text", problem);
        if (!checkpoint_given)
          choices.checkpoint = ch11::text_checkpoint(choices.text);
      }
    });
  };
  return attn::book::run_chapter(argc, argv, info, options, [&](attn::book::Chapter& ch) {
    const Sizes& wanted = choices.quick ? kQuickSizes : kSizes;
    const ch11::TrainedModel model = the_model(ch, choices, wanted);
    const Sizes sizes = fitted(wanted, model.text, choices);  // what the model's text holds
    the_gallery(ch, model, choices);
    const std::vector<std::vector<gpt::HeadProfile>> profiles = the_profiles(ch, model, sizes);
    const ch13::CopyTest text = the_copying(ch, model, sizes);
    the_ablations(ch, model, text, sizes);
    the_sinks(ch, model, profiles, wanted, choices);  // chapter 12's models read the Bible
    const std::string folder = choices.quick ? std::string() : std::string(ATTN_CH13_CHECKPOINTS);
    if (!folder.empty())
      std::filesystem::create_directories(folder);
    the_experiment(ch, choices.quick, folder);
  });
}
