// Chapter 11: a small GPT trained here on real text. The King James Bible from Debian's
// bible-kjv-text package, a byte-level BPE tokenizer learned from it, chapter 10's GPT grown into
// GPT-2's shape (tied embeddings, learned positions), the training recipe of real models (AdamW,
// warm-up and cosine decay, gradient clipping), and text sampled through chapter 09's KV cache.
// The model, its training, its checkpoints and its decoder are the GPT layer's (attn::gpt); the
// Bible and the story are this chapter's. Its page: chapters/11_small_gpt/chapter.md.

#include "compressors.hpp"
#include "kjv.hpp"
#include "resume.hpp"
#include "small_gpt.hpp"
#include "text_file.hpp"

#include <attn/book/chapter.hpp>
#include <attn/book/palette.hpp>
#include <attn/gpt/checkpoint.hpp>
#include <attn/gpt/decoder.hpp>
#include <attn/gpt/forward.hpp>
#include <attn/gpt/model.hpp>
#include <attn/gpt/text.hpp>
#include <attn/gpt/trainer.hpp>
#include <attn/math/sampling.hpp>
#include <attn/math/validate.hpp>
#include <attn/text/bpe.hpp>
#include <attn/text/ngram.hpp>

#include <fmt/ostream.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <numbers>
#include <string>
#include <utility>
#include <vector>

namespace {
namespace colour = attn::book::colour;
namespace gpt = attn::gpt;
namespace ch11 = attn::ch11;
using attn::text::BpeTokenizer;

// The byte n-gram models the transformer is compared with: of order 1 to kLongestNgram.
const int kLongestNgram = 5;

//! [compressors]
// General-purpose compressors, each at its strongest setting and on one thread, as Debian installs
// them (./scripts/install-deps): each compresses the training text alone, then the training text
// followed by the test text (ch11::bits_per_byte()). must_beat: the chapter checks that the
// transformer's test bits per byte are below the compressor's.
struct Rival {
  ch11::Compressor compressor = {};
  bool must_beat = true;
};
const std::vector<Rival> kCompressors = {
    // LZMA2 (LZ77 with a range coder), a 64 MiB window, the slowest search.
    {.compressor = {.label = "xz -9e",
                    .programs = {"xz"},
                    .arguments = {"-9e", "-T1", "-c"},
                    .package = "xz-utils"}},
    // The Burrows-Wheeler transform, in blocks of 900 kB.
    {.compressor = {.label = "bzip2 -9",
                    .programs = {"bzip2"},
                    .arguments = {"-9", "-c"},
                    .package = "bzip2"}},
    // LZ77 with entropy coding at zstd's highest level, a 128 MiB window and long-range matching.
    {.compressor = {.label = "zstd --ultra -22",
                    .programs = {"zstd"},
                    .arguments = {"--ultra", "-22", "--long=27", "-T1", "-q", "-c"},
                    .package = "zstd"}},
    // PPMd (prediction by partial matching) at 7-Zip's longest context, 32 bytes, with memory
    // to spare (256 MB). Fed through a pipe, 7-Zip cannot see the input's size, which it would
    // otherwise use to cut the memory to 64 MB here, where the model fills up and restarts.
    // Debian 12's package names the program 7zz, Debian 13's 7z. No claim: the two are even.
    {.compressor = {.label = "PPMd o32 (7-Zip)",
                    .programs = {"7zz", "7z"},
                    .arguments = {"a", "-t7z", "-m0=PPMd:mem=256m:o=32", "-bd", "-bso0", "-bsp0",
                                  "-sitext", ch11::kOutputFile},
                    .output_name = "text.7z",
                    .package = "7zip"},
     .must_beat = false},
    // Context mixing: zpaq's strongest method mixes the predictions of many context models.
    {.compressor = {.label = "zpaq -m5",
                    .programs = {"zpaq"},
                    .arguments = {"a", ch11::kOutputFile, ch11::kInputFile, "-method", "5",
                                  "-threads", "1"},
                    .output_name = "text.zpaq",  // zpaq adds .zpaq to an archive's name
                    .package = "zpaq"}},
};
//! [compressors]

// --quick (the tests and CI): the same model and recipe, a few steps, to check every piece but
// the model's quality.
ch11::Recipe quick(ch11::Recipe recipe) {
  recipe.training.steps = 8;
  recipe.training.batch = 4;
  recipe.training.warmup_steps = 2;
  recipe.training.evaluate_every = 4;
  recipe.evaluation_tokens = 512;
  return recipe;
}

// Where GPT-2's recipe differs from this chapter's, printed beside it. GPT-2's paper gives no
// betas; nanoGPT, which reproduces GPT-2, and GPT-3's paper take β2 = 0.95. The initialisation
// is GPT-2's paper's (0.02, after GPT-1, and the residual layers scaled by 1/√N), as nanoGPT
// implements it; OpenAI's released GPT-2 code scales nothing.
const double kGpt2Beta2 = 0.95;    // AdamW's β2
const double kGpt2InitStd = 0.02;  // every matrix drawn from N(0, 0.02²)...
// ...and the projections into the residual stream, W_O and W2, further divided by
// √(kGpt2ResidualBranches · layers): two branches a block add to the stream.
const double kGpt2ResidualBranches = 2;

//! [article-numbers]
// What the chapter must show (issue 28 and the book's table of contents).
const int kMustBeatUpTo = 5;           // the byte n-grams the transformer must beat: n = 1 to 5
const double kCacheTolerance = 1e-12;  // KV-cache logits against a whole forward pass
// Before any update the model knows nothing: its first loss is that of the uniform guess over
// the vocabulary, ln V nats per token, give or take what its small initial logits add.
const double kStartTolerance = 0.1;  // nats per token
//! [article-numbers]

// What the chapter prints.
const std::size_t kMergesShown = 12;
const char* const kExampleVerse = "And God said, Let there be light: and there was light.";
const char* const kSamplePrompt = "And it came to pass";
// With --text: the test part's first line that is not empty, at most kExampleBytes of it, is the
// example the tokenizer encodes, and its first kPromptTokens tokens are the samples' prompt.
const std::size_t kExampleBytes = 80;
const std::size_t kPromptTokens = 5;
const std::size_t kSampleTokens = 60;
const std::uint64_t kSampleSeed = 7;

// The sampling settings the chapter compares; the last continues a --prompt.
struct Setting {
  std::string label;
  attn::math::SamplingOptions options;
};
const std::vector<Setting> kSettings = {
    {"temperature 0.5", {.temperature = 0.5}},
    {"temperature 0.8", {.temperature = 0.8}},
    {"temperature 1.2", {.temperature = 1.2}},
    {"temperature 0.8, top-k 40", {.temperature = 0.8, .top_k = 40}},
    {"temperature 0.8, top-p 0.9", {.temperature = 0.8, .top_p = 0.9}},
};

// What the command line chose.
struct Choices {
  bool quick = false;
  std::string checkpoint;  // empty: keep none
  std::string prompt;      // empty: none given (an empty --prompt is refused)
  std::string text;        // --text: the reader's file; empty: the King James Bible
};

// Everything the story builds once and every later step reads.
struct Run {
  ch11::Recipe recipe;          // the model, its training and its measurements
  std::string text_file;        // --text's file; empty for the King James Bible
  std::size_t bible_bytes = 0;  // or the reader's text's
  std::size_t verses = 0;       // or its lines
  std::string example;          // what the_tokenizer() encodes
  std::string sample_prompt;    // what the_samples() continues
  std::string text_named;       // --text: the fingerprint's line naming the whole text
  ch11::EncodedCorpus text;     // the three parts, the tokenizer, the parts encoded
  double tokenizer_seconds = 0.0;
  double training_bytes_per_token = 0.0;
  std::string fingerprint;  // what a checkpoint of this run must carry
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Token ids as the model reads them, and back as the tokenizer reads them.
arma::uvec token_vector(const std::vector<attn::text::TokenId>& ids) {
  return arma::uvec(std::vector<arma::uword>(ids.begin(), ids.end()));
}
std::vector<attn::text::TokenId> token_ids(const arma::uvec& tokens) {
  return {tokens.begin(), tokens.end()};
}

// The King James Bible, split by chapter: the corpus of the story.
ch11::Corpus read_the_bible(Run& run) {
  ch11::Bible bible = ch11::read_split_bible();
  run.bible_bytes = bible.bytes;
  run.verses = bible.verses;
  run.example = kExampleVerse;
  run.sample_prompt = kSamplePrompt;
  return std::move(bible.corpus);
}

// A reader's text (--text), split by position.
ch11::Corpus read_the_text(Run& run, const std::string& path) {
  const std::string text = ch11::read_text_file(path);
  run.text_file = path;
  run.bible_bytes = text.size();
  run.verses = ch11::count_lines(text);
  ch11::Corpus corpus = ch11::split_by_position(text);
  run.text_named = ch11::text_fingerprint(text);
  // The test part's first line that is not empty, at most kExampleBytes of it.
  const std::string& test = corpus.test;
  run.example = ch11::first_line(test).substr(0, kExampleBytes);
  if (run.example.empty())  // a test part of line ends only
    run.example = test.substr(0, kExampleBytes);
  return corpus;
}

// Refuses (exit 2) a reader's text with a part too short for one window: the trainer draws
// windows of max_length + 1 tokens from the training part, and each held-out part should fill
// at least one such window to be scored from a whole context.
void check_part(const Run& run, const char* part, std::size_t tenths, const std::string& bytes,
                const gpt::TokenText& tokens) {
  const arma::uword needed = ch11::kModel.max_length + 1;
  if (tokens.tokens.n_elem >= needed)
    return;
  const ch11::TextNeeded text =
      ch11::text_needed(needed, bytes.size(), tokens.tokens.n_elem, tenths);
  throw attn::book::CommandLineError(
      "--text",
      fmt::format("{} is too short: its {} part ({} of its {} bytes, split by position) encodes "
                  "to {} tokens, and each part needs at least {}, a window of {} tokens and the "
                  "one after it (at this part's {:.1f} bytes per token, a text of some {:.0f} "
                  "bytes or more); nothing was trained or written",
                  run.text_file, part, bytes.size(), run.bible_bytes, tokens.tokens.n_elem, needed,
                  ch11::kModel.max_length, text.bytes_per_token, text.text_bytes));
}

// The corpus, the tokenizer learned from it, the parts encoded: the run, built once.
Run prepare(const Choices& choices) {
  Run run;
  run.recipe = choices.quick ? quick(ch11::kRecipe) : ch11::kRecipe;
  ch11::Corpus corpus =
      choices.text.empty() ? read_the_bible(run) : read_the_text(run, choices.text);
  const auto start = std::chrono::steady_clock::now();
  run.text = ch11::encode_corpus(std::move(corpus));
  run.tokenizer_seconds = seconds_since(start);
  if (!choices.text.empty()) {
    check_part(run, "training", ch11::kTrainingTenths, run.text.corpus.training, run.text.training);
    check_part(run, "validation", ch11::kValidationTenths, run.text.corpus.validation,
               run.text.validation);
    check_part(run, "test", ch11::kTestTenths, run.text.corpus.test, run.text.test);
    const arma::uvec example = token_vector(run.text.tokenizer.encode(run.example));
    const arma::uword prompt_tokens = std::min<arma::uword>(kPromptTokens, example.n_elem);
    run.sample_prompt = run.text.tokenizer.decode(token_ids(example.head(prompt_tokens)));
  }
  run.training_bytes_per_token = static_cast<double>(run.text.corpus.training.size()) /
                                 static_cast<double>(run.text.training.tokens.n_elem);
  run.fingerprint = ch11::fingerprint(run.recipe, run.text, run.text_named);
  return run;
}

// A reader's text (--text) and its three parts.
void the_text(attn::book::Chapter& ch, const Run& run) {
  fmt::print(ch.out, "The corpus: {}, {} bytes, {} lines, in three parts by position:\n",
             std::filesystem::path(run.text_file).filename().string(), run.bible_bytes, run.verses);
  const auto part = [&](const char* name, std::size_t lines, std::size_t bytes, const char* where) {
    fmt::print(ch.out, "  {:<10} {:>8} lines, {:>9} bytes ({})\n", name, lines, bytes, where);
  };
  part("training", run.text.corpus.training_lines, run.text.corpus.training.size(),
       "the first 80%");
  part("validation", run.text.corpus.validation_lines, run.text.corpus.validation.size(),
       "the next 10%");
  part("test", run.text.corpus.test_lines, run.text.corpus.test.size(), "the last 10%");
}

void the_corpus(attn::book::Chapter& ch, const Run& run) {
  if (!run.text_file.empty()) {
    the_text(ch, run);
    return;
  }
  fmt::print(ch.out, "The corpus: the King James Bible (public domain), {} in Debian's\n",
             ch11::kBiblePath);
  fmt::print(ch.out, "bible-kjv-text: {} bytes decoded, {} verses, in three parts by chapter:\n",
             run.bible_bytes, run.verses);
  fmt::print(ch.out, "  training     {:>6} verses, {:>9} bytes (the other chapters)\n",
             run.text.corpus.training_lines, run.text.corpus.training.size());
  fmt::print(ch.out, "  validation   {:>6} verses, {:>9} bytes (chapters 5, 15, 25, ...)\n",
             run.text.corpus.validation_lines, run.text.corpus.validation.size());
  fmt::print(ch.out, "  test         {:>6} verses, {:>9} bytes (chapters 10, 20, 30, ...)\n",
             run.text.corpus.test_lines, run.text.corpus.test.size());
}

void the_tokenizer(attn::book::Chapter& ch, const Run& run) {
  const BpeTokenizer& tokenizer = run.text.tokenizer;
  const std::vector<attn::text::TokenId> verse = tokenizer.encode(run.example);
  const bool round_trip = tokenizer.decode(token_ids(run.text.test.tokens)) == run.text.corpus.test;
  fmt::print(ch.log, "the tokenizer trained and the parts encoded in {:.2f} s (measured)\n",
             run.tokenizer_seconds);
  fmt::print(ch.out, "\nA byte-level BPE tokenizer learned from the training part: 256 bytes,\n");
  fmt::print(ch.out, "{} merges. The first {}:\n ", tokenizer.merges().size(), kMergesShown);
  for (std::size_t k = 0; k < kMergesShown; ++k) {
    const attn::text::Merge& m = tokenizer.merges()[k];
    fmt::print(ch.out, " \"{}\"+\"{}\"", attn::text::printable(tokenizer.token_bytes(m.left)),
               attn::text::printable(tokenizer.token_bytes(m.right)));
  }
  fmt::print(ch.out,
             "\n{} in {} tokens:", run.text_file.empty() ? "A verse" : "The test part's first line",
             verse.size());
  for (const attn::text::TokenId id : verse)
    fmt::print(ch.out, " [{}]", attn::text::printable(tokenizer.token_bytes(id)));
  fmt::print(ch.out, "\n");
  ch.checks.claim("decoding the encoded test text gives back every byte", round_trip);
}

// What the tokenizer buys: bytes per token, on the text it learned from and on text it has
// not seen.
void compression(attn::book::Chapter& ch, const Run& run) {
  const double test_bytes_per_token = static_cast<double>(run.text.corpus.test.size()) /
                                      static_cast<double>(run.text.test.tokens.n_elem);
  fmt::print(ch.out, "The training part is {} tokens, {:.3f} bytes per token; the test part\n",
             run.text.training.tokens.n_elem, run.training_bytes_per_token);
  fmt::print(ch.out, "{} tokens, {:.3f} bytes per token.\n", run.text.test.tokens.n_elem,
             test_bytes_per_token);
}

// What the byte n-grams spend: on the test part, and on the validation bytes the learning
// curve measures.
struct NgramBits {
  std::vector<double> test;        // n = 1 ... kLongestNgram, on the whole test part
  std::vector<double> validation;  // on the bytes of the validation tokens the curve scores
};

// Bits per byte of `model` on the bytes that gpt::bits_per_byte() scores in the first `tokens`
// tokens of `text`: those of tokens 1 ... tokens − 1, token 0's bytes being context only.
double ngram_bits_on_scored_bytes(const attn::text::NgramModel& model,
                                  const BpeTokenizer& tokenizer, const gpt::TokenText& text,
                                  std::size_t tokens) {
  const arma::uword n = std::min<arma::uword>(tokens, text.tokens.n_elem);
  return model.bits_per_byte(tokenizer.decode(token_ids(text.tokens.head(n))), text.lengths(0));
}

NgramBits the_baselines(attn::book::Chapter& ch, const Run& run) {
  NgramBits bits;
  for (int n = 1; n <= kLongestNgram; ++n) {
    const attn::text::NgramModel model(n, run.text.corpus.training);
    bits.test.push_back(model.bits_per_byte(run.text.corpus.test));
    bits.validation.push_back(ngram_bits_on_scored_bytes(
        model, run.text.tokenizer, run.text.validation, run.recipe.evaluation_tokens));
  }
  fmt::print(ch.out, "\nByte n-gram models counted from the training part (interpolated\n");
  fmt::print(ch.out, "Kneser-Ney), scored on the test part:\n");
  for (int n = 1; n <= kLongestNgram; ++n)
    fmt::print(ch.out, "  n = {}: {:.3f} bits per byte\n", n, bits.test[n - 1]);
  return bits;
}

// AdamW's betas and the initial weights' scales, beside GPT-2's.
void against_gpt2(attn::book::Chapter& ch, const gpt::TrainingSettings& settings) {
  const double d = static_cast<double>(ch11::kModel.d_model);
  const double d_ff = static_cast<double>(ch11::kModel.d_ff);
  const double layers = static_cast<double>(ch11::kModel.layers);
  fmt::print(ch.out, "AdamW's β1 {} and β2 {} are PyTorch's defaults (nanoGPT and GPT-3: β2 {}).\n",
             settings.beta1, settings.beta2, kGpt2Beta2);
  fmt::print(ch.out, "Initial weights, standard deviations: W_Q, W_K, W_V, W_O and W1 {:.3f}, W2\n",
             1.0 / std::sqrt(d));
  fmt::print(ch.out, "{:.3f} (1/√fan-in), the embedding and positions {}. GPT-2's paper, as\n",
             1.0 / std::sqrt(d_ff), gpt::kSmallInitStd);
  fmt::print(ch.out, "nanoGPT implements it: {} for every matrix, and {:.4f} for W_O and W2\n",
             kGpt2InitStd, kGpt2InitStd / std::sqrt(kGpt2ResidualBranches * layers));
  fmt::print(ch.out, "({}/√({} · {} layers)).\n", kGpt2InitStd, kGpt2ResidualBranches,
             ch11::kModel.layers);
}

// Trains, or resumes from the checkpoint, or reads a finished run from it; saves as it goes.
gpt::TrainingState the_training(attn::book::Chapter& ch, const Run& run,
                                const std::string& checkpoint, gpt::Step& step) {
  gpt::TrainingState state =
      ch11::opening_state(checkpoint, run.fingerprint, ch11::kModel, run.recipe.training);
  fmt::print(ch.out, "\nThe model: {} blocks, d_model {}, {} heads, MLP width {}, {} tokens of\n",
             ch11::kModel.layers, ch11::kModel.d_model, ch11::kModel.heads, ch11::kModel.d_ff,
             ch11::kModel.max_length);
  fmt::print(ch.out, "context, tied embeddings, learned positions: {} parameters.\n",
             gpt::parameter_count(ch11::kModel));
  fmt::print(ch.out, "Training: {} AdamW steps of {} windows of {} tokens; the learning rate\n",
             run.recipe.training.steps, run.recipe.training.batch, ch11::kModel.max_length);
  fmt::print(ch.out, "warms up over {} steps to {} and decays to {} along a cosine; weight\n",
             run.recipe.training.warmup_steps, run.recipe.training.peak_learning_rate,
             run.recipe.training.final_learning_rate);
  fmt::print(ch.out, "decay {}; gradients clipped to norm {}; seed {}; each step in float32.\n",
             run.recipe.training.weight_decay, run.recipe.training.clip_norm,
             run.recipe.training.seed);
  const std::int64_t tokens_seen =
      run.recipe.training.steps *
      static_cast<std::int64_t>(run.recipe.training.batch * ch11::kModel.max_length);
  fmt::print(
      ch.out, "It reads {} tokens, {:.3g} per parameter.\n", tokens_seen,
      static_cast<double>(tokens_seen) / static_cast<double>(gpt::parameter_count(ch11::kModel)));
  against_gpt2(ch, run.recipe.training);
  if (state.step > 0)
    fmt::print(ch.log, "read {} at step {} of {}\n", checkpoint, state.step,
               run.recipe.training.steps);
  const gpt::NextBatch windows = gpt::window_batches(
      run.text.training.tokens, ch11::kModel.max_length, run.recipe.training.batch);
  const gpt::Evaluation measure =
      gpt::bits_on_both(run.text.validation, run.text.training, run.recipe.evaluation_tokens);
  const gpt::Progress progress = gpt::progress_line(ch.log);
  const std::int64_t first_step = state.step;
  const auto start = std::chrono::steady_clock::now();
  while (state.step < run.recipe.training.steps) {  // a checkpoint at every measurement
    const std::int64_t until = state.step + run.recipe.training.evaluate_every;
    gpt::train(step, state, run.recipe.training, windows, measure, until, progress);
    if (!checkpoint.empty())
      gpt::save_checkpoint(checkpoint, run.fingerprint, state);
  }
  if (state.step > first_step)
    fmt::print(ch.log, "{} steps took {:.1f} s (measured; it varies with the machine)\n",
               state.step - first_step, seconds_since(start));
  return state;
}

// The first batch's loss, before any update, against the uniform guess's ln V.
void the_start(attn::book::Chapter& ch, const gpt::TrainingState& state) {
  const double uniform = std::log(static_cast<double>(ch11::kModel.vocabulary));
  const double first = state.history.front().loss;
  fmt::print(ch.out, "\nBefore any update the first batch costs {:.3f} nats per token; guessing\n",
             first);
  fmt::print(ch.out, "uniformly among the {} tokens costs ln {} = {:.3f}.\n",
             ch11::kModel.vocabulary, ch11::kModel.vocabulary, uniform);
  ch.checks.claim(fmt::format("the first batch's loss is within {} nats of ln V", kStartTolerance),
                  std::abs(first - uniform) <= kStartTolerance);
}

void the_curves(attn::book::Chapter& ch, const Run& run, const gpt::TrainingState& state,
                const NgramBits& ngram_bits) {
  const double to_bits_per_byte = 1.0 / (std::numbers::ln2 * run.training_bytes_per_token);
  const arma::uword points = state.curve.size();
  arma::rowvec steps(points), batches(points), training(points), validation(points);
  for (arma::uword k = 0; k < points; ++k) {
    const gpt::CurvePoint& point = state.curve[k];
    steps(k) = static_cast<double>(point.step);
    batches(k) = point.training_loss * to_bits_per_byte;
    training(k) = point.measured.training.value();  // bits_on_both() measures both
    validation(k) = point.measured.held_out;
  }
  fmt::print(ch.out, "\nBits per byte while training (the first {} tokens of each text):\n",
             run.recipe.evaluation_tokens);
  fmt::print(ch.out, "  step   learning rate   training batches   training text   validation\n");
  for (arma::uword k = 0; k < points; ++k)
    fmt::print(ch.out, "  {:>4}   {:>13.6f}   {:>16.3f}   {:>13.3f}   {:>10.3f}\n",
               state.curve[k].step, state.curve[k].learning_rate, batches(k), training(k),
               validation(k));
  fmt::print(ch.out, "(training batches: the batches' mean loss since the row before, in nats\n");
  fmt::print(ch.out, "per token, over ln 2 and the training part's {:.3f} bytes per token)\n",
             run.training_bytes_per_token);
  const auto level = [&](int n, const char* shade) {
    return attn::book::Series{.label = fmt::format("byte {}-gram", n),
                              .y = arma::rowvec(steps.n_elem).fill(ngram_bits.validation[n - 1]),
                              .colour = shade,
                              .dashed = true};
  };
  ch.plots.lines(
      {.name = "11-01-loss",
       .title = "Bits per byte while training",
       .x_label = "AdamW step",
       .y_label = "bits per byte",
       .x = steps,
       .series = {{.label = "training batches", .y = batches, .colour = colour::light_orange},
                  {.label = "training text", .y = training, .colour = colour::dark_orange},
                  {.label = "validation text", .y = validation, .colour = colour::teal},
                  level(3, colour::grey),
                  level(kLongestNgram, colour::dark_grey)},
       .key_at = "top right"});
  // The schedule and the gradient norm are known at every step: drawn at every step.
  const attn::math::WarmupCosine schedule = gpt::schedule_of(run.recipe.training);
  const auto taken = static_cast<arma::uword>(state.history.size());
  arma::rowvec every_step(taken), rate_at(taken), norm_at(taken);
  for (arma::uword t = 0; t < taken; ++t) {
    every_step(t) = static_cast<double>(t + 1);  // the step taken at this rate, counted from 1
    rate_at(t) = attn::math::learning_rate(schedule, static_cast<std::int64_t>(t));
    norm_at(t) = state.history[t].gradient_norm;
  }
  ch.plots.lines({.name = "11-02-learning-rate",
                  .title = "The learning rate: linear warm-up, then cosine decay",
                  .x_label = "AdamW step",
                  .y_label = "learning rate",
                  .x = every_step,
                  .series = {{.label = "AdamW's rate", .y = rate_at, .colour = colour::violet}},
                  .key_at = "top right"});
  const arma::uvec clipped = arma::find(norm_at > run.recipe.training.clip_norm);
  fmt::print(ch.out, "The gradient's norm was above {} (and clipped) in {} of {} steps",
             run.recipe.training.clip_norm, clipped.n_elem, taken);
  if (!clipped.is_empty()) {
    fmt::print(ch.out, ", the last\nat step {}", every_step(clipped.back()));
  }
  const arma::uword last_tenth = std::max<arma::uword>(1, taken / 10);
  const double late_median = arma::median(norm_at.tail(last_tenth));
  fmt::print(ch.out, "; its median over the last tenth of the steps was {:.2f}.\n", late_median);
  ch.plots.lines({.name = "11-03-gradient-norm",
                  .title = "The gradient's global norm, before clipping",
                  .x_label = "AdamW step",
                  .y_label = "norm",
                  .x = every_step,
                  .series = {{.label = "global norm", .y = norm_at, .colour = colour::mid_blue},
                             {.label = "clipped above",
                              .y = arma::rowvec(taken).fill(run.recipe.training.clip_norm),
                              .colour = colour::dark_grey,
                              .dashed = true}},
                  .log_y = true,
                  .key_at = "top right"});
}

// The compressors on the whole test part, given the training part, beside the transformer; in
// the full run only (their sizes differ between the compressors' versions, and xz, zstd and zpaq
// take seconds each, too long for the tests' --quick run).
void the_compressors(attn::book::Chapter& ch, const Run& run, double model_bits, bool quick) {
  if (quick) {
    fmt::print(ch.out, "  (the general-purpose compressors: in the full run only)\n");
    return;
  }
  for (const Rival& rival : kCompressors) {
    const ch11::Compressor& c = rival.compressor;
    const ch11::CompressorRun r =
        ch11::bits_per_byte(c, run.text.corpus.training, run.text.corpus.test);
    if (!r.ran()) {
      fmt::print(ch.out, "  {:<18} {}\n", c.label, r.problem);
      fmt::print(ch.log, "{}: {}\n", c.label, r.problem);
      continue;
    }
    const double margin = r.bits_per_byte - model_bits;
    fmt::print(ch.out, "  {:<18} {:.3f}   ({} by {:.3f})\n", c.label, r.bits_per_byte,
               margin > 0 ? "the transformer is better" : "the compressor is better",
               std::abs(margin));
    fmt::print(ch.log,
               "{} ({}): {} bytes for the training part, {} with the test part after it; "
               "{:.1f} s (measured)\n",
               c.label, r.program, r.training_bytes, r.both_bytes, r.seconds);
    if (rival.must_beat && run.text_file.empty())
      ch.checks.claim(fmt::format("the transformer's test bits per byte are below {}'s", c.label),
                      model_bits < r.bits_per_byte);
  }
  fmt::print(ch.out, "(a compressor: 8 × (C(training + test) − C(training)) / test bytes, C its\n");
  fmt::print(ch.out,
             "output's size in bytes; it reads the training part first, as the model did,\n");
  fmt::print(ch.out, "and may learn from the test part as it codes it)\n");
}

void the_comparison(attn::book::Chapter& ch, const Run& run, const gpt::TrainingState& state,
                    const NgramBits& ngram_bits, bool quick, gpt::Step& step) {
  const std::size_t scored = quick ? run.recipe.evaluation_tokens : 0;  // 0: all of it
  const double model_bits = gpt::bits_per_byte(state.weights, run.text.test, scored, step);
  fmt::print(ch.out, "\nTest bits per byte{}, measured once, after training:\n",
             quick ? fmt::format(" (--quick: its first {} tokens)", scored) : "");
  fmt::print(ch.out, "  the transformer    {:.3f}\n", model_bits);
  for (int n = 1; n <= kLongestNgram; ++n) {
    const double margin = ngram_bits.test[n - 1] - model_bits;
    fmt::print(ch.out, "  byte {}-gram        {:.3f}   ({} by {:.3f})\n", n, ngram_bits.test[n - 1],
               margin > 0 ? "the transformer is better" : "the n-gram is better", std::abs(margin));
  }
  if (!quick && run.text_file.empty())  // a claim about the King James Bible, not any text
    for (int n = 1; n <= kMustBeatUpTo; ++n)
      ch.checks.claim(fmt::format("the transformer's test bits per byte are below the byte "
                                  "{}-gram's",
                                  n),
                      model_bits < ngram_bits.test[n - 1]);
  the_compressors(ch, run, model_bits, quick);
}

// The text as it reads: newlines kept (indented), other unprintable bytes escaped.
std::string shown(const std::string& bytes) {
  std::string out;
  for (const char c : bytes)
    out += c == '\n' ? std::string("\n    ") : attn::text::printable(std::string(1, c));
  return out;
}

// The continuation of `prompt` with `setting`, from the sampling seed.
gpt::Continuation sampled(const gpt::TrainingState& state, const arma::uvec& prompt,
                          const Setting& setting) {
  attn::numpy::Generator rng = attn::numpy::default_rng(kSampleSeed);
  return gpt::continue_text(state.weights, prompt, kSampleTokens, setting.options, rng);
}

// What a filter left to draw from at each token of a continuation.
struct Kept {
  arma::uvec tokens;  // how many tokens kept a probability above 0
  arma::vec mass;     // their share of the probability before the filter (at the temperature)
};

// What `setting`'s filter kept at each token of the continuation `c` of `prompt` (which fits the
// window).
Kept what_was_kept(const gpt::TrainingState& state, const arma::uvec& prompt,
                   const gpt::Continuation& c, const Setting& setting) {
  const arma::uvec text = arma::join_cols(prompt, c.tokens);
  const arma::mat logits = gpt::sentence_logits(state.weights, text.head(text.n_elem - 1));
  const attn::math::SamplingOptions unfiltered{.temperature = setting.options.temperature};
  Kept kept{.tokens = arma::uvec(c.tokens.n_elem), .mass = arma::vec(c.tokens.n_elem)};
  for (arma::uword t = 0; t < c.tokens.n_elem; ++t) {
    const arma::rowvec z = logits.row(prompt.n_elem - 1 + t);
    const arma::rowvec q = attn::math::next_token_distribution(z, setting.options);
    const arma::rowvec before = attn::math::next_token_distribution(z, unfiltered);
    kept.tokens(t) = arma::accu(q > 0.0);
    kept.mass(t) = arma::accu(before.elem(arma::find(q > 0.0)));
  }
  return kept;
}

// What top-k and top-p did at the sample's draws: top-k's share of the probability, top-p's
// number of tokens (the other is fixed: k tokens; at least p of the probability).
void what_the_filter_kept(attn::book::Chapter& ch, const Kept& kept, const Setting& setting) {
  if (setting.options.top_k > 0)
    fmt::print(ch.out,
               "    (its {} tokens held from {:.3f} to {:.3f} of the probability at its {} draws,\n"
               "    {:.3f} or more at half of them)\n",
               setting.options.top_k, kept.mass.min(), kept.mass.max(), kept.mass.n_elem,
               arma::median(kept.mass));
  if (setting.options.top_p < 1.0)
    fmt::print(ch.out,
               "    (it kept from {} to {} tokens at its {} draws, {} or fewer at half of them,\n"
               "    a single token at {})\n",
               kept.tokens.min(), kept.tokens.max(), kept.tokens.n_elem, arma::median(kept.tokens),
               arma::accu(kept.tokens == 1));
}

void the_samples(attn::book::Chapter& ch, const Run& run, const gpt::TrainingState& state) {
  const arma::uvec prompt = token_vector(run.text.tokenizer.encode(run.sample_prompt));
  fmt::print(ch.out, "\nSamples of {} tokens after \"{}\", seed {}, through the KV cache:\n",
             kSampleTokens, shown(run.sample_prompt), kSampleSeed);
  for (const Setting& setting : kSettings) {
    const gpt::Continuation c = sampled(state, prompt, setting);
    fmt::print(ch.out, "  {}:\n    {}{}\n", setting.label, shown(run.sample_prompt),
               shown(run.text.tokenizer.decode(token_ids(c.tokens))));
    what_the_filter_kept(ch, what_was_kept(state, prompt, c, setting), setting);
  }
}

// The KV cache against a whole forward pass over each prefix of a test verse (with --text, of
// the test part's first window).
void the_cache(attn::book::Chapter& ch, const Run& run, const gpt::TrainingState& state) {
  const std::string verse = run.text.corpus.test.substr(0, run.text.corpus.test.find('\n') + 1);
  const arma::uvec tokens = run.text_file.empty()
                                ? token_vector(run.text.tokenizer.encode(verse))
                                : arma::uvec(run.text.test.tokens.head(ch11::kModel.max_length));
  const double largest = gpt::largest_cache_difference(state.weights, tokens);
  fmt::print(ch.out, "\nThe {}, {} tokens, token by token through the KV cache:\n",
             run.text_file.empty() ? "first test verse" : "test part's first window",
             tokens.n_elem);
  fmt::print(ch.out, "every logit within {:g} of a whole forward pass over the prefix.\n",
             kCacheTolerance);
  fmt::print(ch.log, "largest difference between cached and whole logits: {:.3g}\n", largest);
  ch.checks.claim(
      fmt::format("the KV cache's logits equal a whole forward pass within {:g}", kCacheTolerance),
      largest <= kCacheTolerance);
}

// One head's weights on the example verse, every query a token.
void one_head(attn::book::Chapter& ch, const Run& run, const gpt::TrainingState& state) {
  const std::size_t layer = ch11::kModel.layers - 1;  // the last block
  const std::size_t head = 0;
  const std::vector<attn::text::TokenId> ids = run.text.tokenizer.encode(kExampleVerse);
  std::vector<std::string> labels;
  for (const attn::text::TokenId id : ids)
    labels.push_back(ch11::axis_label(run.text.tokenizer.token_bytes(id)));
  const gpt::TransformerForward f = gpt::transformer_forward(state.weights, token_vector(ids), {0});
  ch.plots.heatmap({.name = "11-04-head",
                    .title = fmt::format("Block {}, head {}, on a verse", layer, head),
                    .queries = labels,
                    .keys = labels,
                    .values = f.blocks[layer].attention.front().heads[head].weights,
                    .decimals = 1});
}

void continue_prompt(attn::book::Chapter& ch, const Run& run, const gpt::TrainingState& state,
                     const std::string& prompt) {
  const Setting& setting = kSettings.back();
  const arma::uvec tokens = token_vector(run.text.tokenizer.encode(prompt));
  const gpt::Continuation c = sampled(state, tokens, setting);
  fmt::print(ch.out, "\nYour prompt, {} bytes in {} tokens, continued ({}, seed {}):\n",
             prompt.size(), tokens.n_elem, setting.label, kSampleSeed);
  fmt::print(ch.out, "    {} | {}\n", shown(prompt),
             shown(run.text.tokenizer.decode(token_ids(c.tokens))));
  if (c.prompt_read < tokens.n_elem)
    fmt::print(ch.out, "(the model has {} positions: it read only the prompt's last {} tokens)\n",
               ch11::kModel.max_length, c.prompt_read);
  if (c.restarts > 0)
    fmt::print(ch.out,
               "(the window filled {} time(s); each time the model went on from the "
               "last {} tokens)\n",
               c.restarts, gpt::kept_context(ch11::kModel));
}

// Why the checkpoint at `path` cannot be this run's, as far as the file alone can tell, or
// nothing: a folder that is not there, a file that is not a whole checkpoint. Whether it is
// this run's, its fingerprint says once the corpus and tokenizer are built (opening_state()).
std::string checkpoint_problem(const std::string& path) {
  std::error_code error;
  if (path.empty())
    return {};
  if (!std::filesystem::exists(path, error)) {  // to be written: its folder must be there
    const std::filesystem::path folder = std::filesystem::absolute(path, error).parent_path();
    if (!std::filesystem::is_directory(folder, error))
      return fmt::format("the folder {} of the checkpoint {} does not exist", folder.string(),
                         path);
    return {};
  }
  try {
    gpt::check_checkpoint_file(path);
  } catch (const std::exception& e) {  // InputError, or the file system's own errors
    return fmt::format("{} (delete it to train again, or name another file with --checkpoint)",
                       e.what());
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  const attn::book::ChapterInfo info{
      .executable = "ch11_small_gpt",
      .summary =
          "Chapter 11: a small GPT trained here on the King James Bible, against byte "
          "n-gram models, sampled through the KV cache",
      .reference = "the reference"};
  Choices choices;
  std::string checkpoint = ATTN_DEFAULT_CHECKPOINT;
  bool checkpoint_given = false;
  const auto options = [&](CLI::App& app) {
    app.add_flag("--quick", choices.quick,
                 "train a few steps only, without a checkpoint (the tests' run: every piece "
                 "checked but the model's quality)");
    app.add_option("--prompt", choices.prompt, "text to continue, e.g. \"And the LORD said\"")
        ->check([](const std::string& text) {
          return text.empty() ? std::string("the prompt is empty: give at least one byte")
                              : std::string();
        });
    app.add_option("--checkpoint", checkpoint,
                   "where the trained model is kept: read if it is there, written if not "
                   "(default: in the build folder)")
        ->each([&](const std::string&) { checkpoint_given = true; });
    app.add_option("--text", choices.text,
                   "train on this file instead of the King James Bible: any bytes, split by "
                   "position into training (the first 80%), validation and test (10% each), "
                   "with a checkpoint of its own (default: in the build folder, named after the "
                   "file)");
    app.parse_complete_callback([&] {
      if (app.count("--text") > 0) {
        const std::string problem = ch11::text_file_problem(choices.text);
        if (!problem.empty())
          throw CLI::ValidationError("--text", problem + "; nothing was trained or written");
        if (!checkpoint_given)
          checkpoint = ch11::text_checkpoint(choices.text);
      }
      // --quick keeps no checkpoint unless one is named.
      choices.checkpoint = choices.quick && !checkpoint_given ? std::string() : checkpoint;
      const std::string problem = checkpoint_problem(choices.checkpoint);
      if (!problem.empty())
        throw CLI::ValidationError("--checkpoint", problem + "; nothing was trained or written");
    });
  };
  return attn::book::run_chapter(argc, argv, info, options, [&](attn::book::Chapter& ch) {
    const Run run = prepare(choices);
    the_corpus(ch, run);
    the_tokenizer(ch, run);
    compression(ch, run);
    const NgramBits ngram_bits = the_baselines(ch, run);
    // The run's one step, with its float32 working memory: for training and for scoring.
    gpt::Step step = gpt::make_step(ch11::kModel, run.recipe.training.precision);
    const gpt::TrainingState state = the_training(ch, run, choices.checkpoint, step);
    the_start(ch, state);
    the_curves(ch, run, state, ngram_bits);
    the_comparison(ch, run, state, ngram_bits, choices.quick, step);
    the_samples(ch, run, state);
    the_cache(ch, run, state);
    if (choices.text.empty())  // a verse of Genesis
      one_head(ch, run, state);
    if (!choices.prompt.empty())
      continue_prompt(ch, run, state, choices.prompt);
  });
}
