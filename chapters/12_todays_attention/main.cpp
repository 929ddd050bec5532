// Chapter 12: from GPT-2's attention to today's, each change measured. Chapter 11's corpus and
// recipe at a size the book's machine trains many times over: GPT-2's block, then one change at
// a time (rotary positions, no positions, grouped-query and multi-query attention, a sliding
// window, RMSNorm, SwiGLU) and all of them together, from two seeds each; what each change does
// to the KV cache; and every change decoded through the cache against the whole forward pass.
// The model, its choices, its training, its checkpoints and its decoder are the GPT layer's
// (attn::gpt); the Bible is chapter 11's. Its page: chapters/12_todays_attention/chapter.md.

#include <11_small_gpt/kjv.hpp>

#include <attn/book/chapter.hpp>
#include <attn/book/palette.hpp>
#include <attn/fast/threads.hpp>
#include <attn/gpt/checkpoint.hpp>
#include <attn/gpt/decoder.hpp>
#include <attn/gpt/forward.hpp>
#include <attn/gpt/model.hpp>
#include <attn/gpt/text.hpp>
#include <attn/gpt/trainer.hpp>
#include <attn/math/layers.hpp>
#include <attn/math/mask.hpp>
#include <attn/math/multi_head.hpp>
#include <attn/math/validate.hpp>
#include <attn/numpy/numpy_random.hpp>
#include <attn/text/bpe.hpp>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

namespace {
namespace colour = attn::book::colour;
namespace gpt = attn::gpt;
namespace ch11 = attn::ch11;

//! [settings]
const std::size_t kVocabulary = 1024;  // chapter 11's tokenizer: 256 bytes and 768 merges
// GPT-2's block, the baseline every change is measured against: chapter 11's shape, smaller, so
// that the book's build can train it and its eight variants from two seeds each.
const gpt::TransformerConfig kGpt2Block{
    .vocabulary = kVocabulary,
    .d_model = 64,
    .heads = 4,
    .layers = 2,
    .d_ff = 256,       // the MLP's hidden width, 4 d_model as in GPT-2
    .max_length = 64,  // tokens of context
    .positions = gpt::Positions::learned,
    .tied_embeddings = true,
};
// Chapter 11's recipe, shorter.
const gpt::TrainingSettings kTraining{
    .steps = 800,
    .batch = 8,  // windows of max_length + 1 tokens: 512 tokens a step
    .peak_learning_rate = 3e-3,
    .final_learning_rate = 3e-4,
    .warmup_steps = 40,
    .weight_decay = 0.1,
    .beta1 = 0.9,
    .beta2 = 0.999,
    .clip_norm = 1.0,
    .evaluate_every = 800,  // one measurement, after the last step
    .precision = gpt::Precision::float32,
};
const std::vector<std::uint64_t> kSeeds = {11, 12};
// A run's batches come from default_rng(seed + kBatchStream), a stream of their own, so every
// change reads the same windows in the same order for a seed; the weights come from
// default_rng(seed), as gpt::start() draws them.
const std::uint64_t kBatchStream = 1000;
const arma::uword kWindow = 16;         // the sliding window: a quarter of the context
const arma::uword kGroupedKvHeads = 2;  // of 4 query heads: each pair shares a key/value head
// Bits per byte are measured on the validation part's first tokens, the same for every run.
const std::size_t kScoredTokens = 32768;
//! [settings]

// --quick (the tests and CI): the same changes, a few steps, to check every piece but the
// models' quality.
gpt::TrainingSettings quick(gpt::TrainingSettings settings) {
  settings.steps = 6;
  settings.batch = 2;
  settings.warmup_steps = 2;
  settings.evaluate_every = 6;
  return settings;
}
const std::size_t kQuickScoredTokens = 512;  // --quick scores the validation part's first tokens

//! [article-numbers]
const double kCacheTolerance = 1e-12;  // a cached decoder against the whole forward pass
//! [article-numbers]

// The worked example: today's attention on a few tokens, small enough to print two heads' weights.
// tests/data/generate_modern_fixtures.py draws the same numbers with numpy and computes the same
// lines with PyTorch (tests/golden/ch12_todays_attention.torch.txt; the test ch12.torch).
const std::uint64_t kExampleSeed = 2026;
const arma::uword kExampleTokens = 5;
const arma::uword kExampleWidth = 16;  // d_model: heads of 4, two rotary pairs each
const arma::uword kExampleHeads = 4;
const arma::uword kExampleKvHeads = 2;
const arma::uword kExampleWindow = 3;
const arma::uword kExampleHidden = 24;  // SwiGLU's width

// Real models' KV caches, from their published configurations (config.json), in fp16.
struct RealModel {
  std::string name;
  arma::uword layers = 0;
  arma::uword heads = 0;
  arma::uword kv_heads = 0;
  arma::uword d_head = 0;
  arma::uword context = 0;  // max_position_embeddings in config.json
  arma::uword window = 0;   // 0: none
};
const std::vector<RealModel> kRealModels = {
    {.name = "Llama 2 7B",
     .layers = 32,
     .heads = 32,
     .kv_heads = 32,
     .d_head = 128,
     .context = 4096},
    {.name = "Llama 2 70B",
     .layers = 80,
     .heads = 64,
     .kv_heads = 8,
     .d_head = 128,
     .context = 4096},
    {.name = "Mistral 7B v0.1",
     .layers = 32,
     .heads = 32,
     .kv_heads = 8,
     .d_head = 128,
     .context = 32768,
     .window = 4096},
};
const std::size_t kHalfPrecisionBytes = 2;  // fp16 or bf16, as these models are served
const std::vector<std::size_t> kGenerated = {4096, 32768};  // tokens in the context
const double kBytesPerKibibyte = 1024.0;
const double kBytesPerGibibyte = 1024.0 * 1024.0 * 1024.0;

// One row of the comparison: GPT-2's block with one thing changed, or all of them.
struct Change {
  std::string label;  // as the table prints it
  std::string name;   // its checkpoints' file names
  std::function<void(gpt::TransformerConfig&)> apply;
  bool in_todays_block = false;  // one of the changes the last row makes together
};

// SwiGLU's hidden width h at GPT-2's parameter count: its three matrices hold 3 d h weights
// where GELU's two hold 2 d d_ff and their biases d_ff + d; the h whose model comes closest.
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

void to_rotary(gpt::TransformerConfig& c) {
  c.positions = gpt::Positions::rotary;
}
void to_grouped(gpt::TransformerConfig& c) {
  c.kv_heads = kGroupedKvHeads;
}
void to_window(gpt::TransformerConfig& c) {
  c.window = kWindow;
}
void to_multi_query(gpt::TransformerConfig& c) {
  c.kv_heads = 1;
}
void to_rms_norm(gpt::TransformerConfig& c) {
  c.norm = gpt::Norm::rms_norm;
}
void to_swiglu(gpt::TransformerConfig& c) {
  c.mlp = gpt::Mlp::swiglu;
  c.d_ff = matched_swiglu_width();
}

const std::vector<Change> kChanges = {
    {"GPT-2's block", "gpt2",
     [](gpt::TransformerConfig&) {
     }},
    {"rotary positions (RoPE)", "rope", to_rotary, true},
    {"no positions (NoPE)", "nope",
     [](auto& c) {
       c.positions = gpt::Positions::none;
     }},
    {"grouped-query, 2 key/value heads", "gqa", to_grouped, true},
    {"multi-query, 1 key/value head", "mqa", to_multi_query},
    {"sliding window of 16", "window", to_window, true},
    {"RMSNorm", "rmsnorm", to_rms_norm, true},
    {"SwiGLU, as many parameters", "swiglu", to_swiglu, true},
    {"today's block: all of them", "today",
     [](auto& c) {
       to_rotary(c);
       to_grouped(c);
       to_window(c);
       to_rms_norm(c);
       to_swiglu(c);
     }},
};

// GPT-2's block with `apply`'s change.
gpt::TransformerConfig changed(const std::function<void(gpt::TransformerConfig&)>& apply) {
  gpt::TransformerConfig c = kGpt2Block;
  apply(c);
  return c;
}

// What every run reads: chapter 11's corpus and tokenizer.
struct Data {
  std::string training_text;  // the training part's bytes, which a checkpoint's fingerprint names
  attn::text::BpeTokenizer tokenizer;
  gpt::TokenText training;
  gpt::TokenText validation;
};

Data the_corpus(attn::book::Chapter& ch) {
  const auto verses = ch11::parse_verses(ch11::read_bible(ch11::kBiblePath));
  ch11::Corpus parts = ch11::split_corpus(verses);
  Data data;
  data.tokenizer = attn::text::train_bpe(parts.training, kVocabulary);
  data.training = gpt::encode(data.tokenizer, parts.training);
  data.validation = gpt::encode(data.tokenizer, parts.validation);
  fmt::print(ch.out, "Chapter 11's corpus and tokenizer: the King James Bible, {} training\n",
             parts.training_lines);
  fmt::print(ch.out,
             "verses ({} tokens) and {} validation verses ({} tokens), a vocabulary of {}.\n",
             data.training.tokens.n_elem, parts.validation_lines, data.validation.tokens.n_elem,
             kVocabulary);
  data.training_text = std::move(parts.training);
  return data;
}

// Numbers as the example prints them: four decimals each, at most eight to a line, each line
// indented by two spaces.
const arma::uword kNumbersPerLine = 8;
std::string decimals(const arma::rowvec& row) {
  std::string lines;
  for (arma::uword k = 0; k < row.n_elem; ++k)
    lines +=
        fmt::format("{}{:7.4f}", k % kNumbersPerLine == 0 ? (k == 0 ? "  " : "\n  ") : " ", row(k));
  return lines;
}

// `rows` x `cols` standard normals divided by √fan_in, the fan-in being `rows`.
arma::mat scaled_normal(attn::numpy::Generator& rng, arma::uword rows, arma::uword cols) {
  return rng.normal(rows, cols) / std::sqrt(static_cast<double>(rows));
}

// Each piece on a few tokens: grouped-query attention with RoPE inside a sliding window, RMSNorm
// and SwiGLU, every number printed so that PyTorch's can be set beside it.
void the_example(attn::book::Chapter& ch) {
  attn::numpy::Generator rng = attn::numpy::default_rng(kExampleSeed);
  const arma::uword d_k = kExampleWidth / kExampleHeads;
  const arma::mat x = rng.normal(kExampleTokens, kExampleWidth);
  attn::math::MultiHeadWeights W;
  W.heads = kExampleHeads;
  W.kv_heads = kExampleKvHeads;
  W.W_Q = scaled_normal(rng, kExampleWidth, kExampleWidth);
  W.W_K = scaled_normal(rng, kExampleWidth, kExampleKvHeads * d_k);
  W.W_V = scaled_normal(rng, kExampleWidth, kExampleKvHeads * d_k);
  W.W_O = scaled_normal(rng, kExampleWidth, kExampleWidth);
  attn::math::SwiGluWeights mlp;
  mlp.W_gate = scaled_normal(rng, kExampleWidth, kExampleHidden);
  mlp.W_up = scaled_normal(rng, kExampleWidth, kExampleHidden);
  mlp.W_down = scaled_normal(rng, kExampleHidden, kExampleWidth);
  const arma::vec positions = arma::regspace<arma::vec>(0, kExampleTokens - 1);
  const attn::math::Mask band = attn::math::Mask::causal_window(kExampleTokens, kExampleWindow);
  const attn::math::MultiHead attention =
      attn::math::multi_head_attention(x, x, x, W, band, {.queries = positions, .keys = positions});
  fmt::print(ch.out, "\nToday's attention on {} tokens, drawn from default_rng({}): d_model {},\n",
             kExampleTokens, kExampleSeed, kExampleWidth);
  fmt::print(ch.out,
             "{} query heads, {} key/value heads, RoPE, a window of {}. Query heads 0 and 1\n",
             kExampleHeads, kExampleKvHeads, kExampleWindow);
  fmt::print(ch.out, "read key/value head 0; their weights, a query a row:\n");
  bool banded = true;  // nothing outside the window, every row a distribution
  for (arma::uword i = 0; i < kExampleTokens; ++i) {
    fmt::print(ch.out, "{}   {}\n", decimals(attention.heads[0].weights.row(i)),
               decimals(attention.heads[1].weights.row(i)).substr(2));
    for (const attn::math::Attention& head : attention.heads) {
      const arma::rowvec row = head.weights.row(i);
      banded = banded && std::abs(arma::accu(row) - 1.0) < kCacheTolerance;
      for (arma::uword j = 0; j < kExampleTokens; ++j)
        banded = banded && (band.allows(i, j) || row(j) == 0.0);
    }
  }
  fmt::print(ch.out, "The layer's output for the last token:\n{}\n",
             decimals(attention.output.row(kExampleTokens - 1)));
  const arma::rowvec ones(kExampleWidth, arma::fill::ones);
  fmt::print(ch.out, "RMSNorm (gamma 1) of the first token:\n{}\n",
             decimals(attn::math::rms_norm(x.row(0), ones).y));
  fmt::print(ch.out, "SwiGLU (hidden width {}) of the first token:\n{}\n", kExampleHidden,
             decimals(attn::math::swiglu(x.row(0), mlp).y));
  ch.checks.claim(fmt::format("every head's weights are 0 outside the window of {} and sum to 1",
                              kExampleWindow),
                  banded);
}

// A random model of `c` from `seed`: the weights a run from that seed starts from.
gpt::TransformerWeights random_model(const gpt::TransformerConfig& c, std::uint64_t seed) {
  return gpt::start(c, {.seed = seed}).weights;
}

// Every change, cached and whole: a random model of each decodes a text token by token through
// its KV cache, and each token's logits equal the whole forward pass's.
void the_pieces(attn::book::Chapter& ch) {
  const std::uint64_t seed = kSeeds.front();
  fmt::print(ch.out, "\nEach change in a random model, decoded token by token through its KV\n");
  fmt::print(ch.out, "cache, against the whole forward pass over the same {} tokens:\n",
             kGpt2Block.max_length);
  for (const Change& change : kChanges) {
    const gpt::TransformerConfig c = changed(change.apply);
    const gpt::TransformerWeights w = random_model(c, seed);
    arma::uvec text(c.max_length);  // any tokens will do
    for (arma::uword t = 0; t < text.n_elem; ++t)
      text(t) = (7 * t + 3) % c.vocabulary;
    const arma::mat whole = gpt::sentence_logits(w, text);
    gpt::Decoder decoder(w);
    double largest = 0.0;
    for (arma::uword t = 0; t < text.n_elem; ++t)
      largest = std::max(largest, arma::abs(decoder.append(text(t)) - whole.row(t)).max());
    fmt::print(ch.out, "  {:<34} within {:g}\n", change.label, kCacheTolerance);
    fmt::print(ch.log, "{}: largest difference {:.3g}\n", change.label, largest);
    ch.checks.claim(fmt::format("{}: the cached decoder equals the forward pass within {:g}",
                                change.label, kCacheTolerance),
                    largest <= kCacheTolerance);
  }
}

// 2 (keys and values) · L layers · g key/value heads · d_k · bytes per number.
std::size_t cache_bytes_per_token(arma::uword layers, arma::uword kv_heads, arma::uword d_head,
                                  std::size_t bytes_per_number) {
  return 2 * layers * kv_heads * d_head * bytes_per_number;
}

// The four attention choices' KV caches while a random model of each decodes a whole context.
void the_cache(attn::book::Chapter& ch) {
  struct Choice {
    std::string label;
    gpt::TransformerConfig config;
    std::string colour;
  };
  const std::vector<Choice> choices = {
      {"multi-head, 4 key/value heads", kGpt2Block, colour::blue},
      {"grouped-query, 2", changed(to_grouped), colour::orange},
      {"multi-query, 1", changed(to_multi_query), colour::teal},
      {"multi-head, window of 16", changed(to_window), colour::purple}};
  const arma::uword length = kGpt2Block.max_length;
  const arma::rowvec decoded = arma::regspace<arma::rowvec>(1, static_cast<double>(length));
  fmt::print(ch.out, "\nThe KV cache holds, per token, 2 (keys and values) x {} layers x g\n",
             kGpt2Block.layers);
  fmt::print(ch.out, "key/value heads x d_k {} x 8 bytes (doubles); held while decoding:\n",
             kGpt2Block.d_model / kGpt2Block.heads);
  fmt::print(ch.out, "  {:<30} {:>15} {:>18} {:>18}\n", "", "bytes a token",
             fmt::format("after {} tokens", kWindow), fmt::format("after {} tokens", length));
  std::vector<attn::book::Series> series;
  for (const Choice& choice : choices) {
    const gpt::TransformerConfig& c = choice.config;
    const gpt::TransformerWeights weights = random_model(c, kSeeds.front());
    gpt::Decoder decoder(weights);  // reads the weights it is given, so they must outlive it
    const std::size_t per_token = cache_bytes_per_token(c.layers, gpt::key_value_heads(c),
                                                        c.d_model / c.heads, sizeof(double));
    arma::rowvec bytes(length);
    bool as_the_formula_says = true;  // after every token
    for (arma::uword t = 0; t < length; ++t) {
      decoder.append(t % c.vocabulary);
      bytes(t) = static_cast<double>(decoder.cache_bytes());
      const arma::uword held = c.window == 0 ? t + 1 : std::min(t + 1, c.window);
      as_the_formula_says = as_the_formula_says && decoder.cache_bytes() == held * per_token;
    }
    fmt::print(ch.out, "  {:<30} {:>15} {:>18} {:>18}\n", choice.label, per_token,
               bytes(kWindow - 1), bytes(length - 1));
    ch.checks.claim(fmt::format("{}: after every token the cache holds 2 L g d_k 8 bytes for each "
                                "token it holds",
                                choice.label),
                    as_the_formula_says);
    series.push_back({.label = choice.label,
                      .y = bytes / kBytesPerKibibyte,
                      .colour = choice.colour,
                      .dashed = c.window > 0});
  }
  const arma::rowvec& windowed = series.back().y;
  ch.checks.claim(fmt::format("the window's cache stops growing after {} tokens", kWindow),
                  arma::all(windowed.tail(length - kWindow) == windowed(kWindow - 1)));
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
  for (const RealModel& m : kRealModels) {
    const std::size_t per_token =
        cache_bytes_per_token(m.layers, m.kv_heads, m.d_head, kHalfPrecisionBytes);
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
  fmt::print(ch.out, "(-: more tokens than the model has positions; {})\n",
             fmt::join(shorter, ", "));
}

// The training text's windows, drawn from a stream of their own (kBatchStream) rather than the
// run's: the run's stream first draws the weights, as many numbers as the change's shapes hold,
// so each change would read other windows.
gpt::NextBatch same_windows(const arma::uvec& tokens, const gpt::TrainingSettings& settings) {
  const gpt::NextBatch windows = gpt::window_batches(tokens, kGpt2Block.max_length, settings.batch);
  auto stream = std::make_shared<attn::numpy::Generator>(
      attn::numpy::default_rng(settings.seed + kBatchStream));
  return [windows, stream](std::int64_t step, attn::numpy::Generator&) {
    return windows(step, *stream);
  };
}

// One change trained from one seed, or read back from the checkpoint an earlier run of the
// chapter left in `folder` (empty: keep none). A checkpoint of another run is trained again.
// What it has to say goes to `log`: the run's own, as runs train side by side.
gpt::TrainingState trained(std::ostream& log, const Data& data, const Change& change,
                           const gpt::TrainingSettings& settings, const std::string& folder) {
  const gpt::TransformerConfig c = changed(change.apply);
  const std::string fingerprint = gpt::run_fingerprint(
      c, settings, data.tokenizer, data.training_text,
      fmt::format("batches from default_rng(seed + {}); bits per byte, measured after training",
                  kBatchStream));
  const std::string path = folder.empty()
                               ? std::string()
                               : (std::filesystem::path(folder) /
                                  fmt::format("{}-seed{}.checkpoint", change.name, settings.seed))
                                     .string();
  std::error_code error;
  if (!path.empty() && std::filesystem::exists(path, error)) {
    try {
      return gpt::load_checkpoint(path, fingerprint, c);
    } catch (const attn::math::InputError& e) {
      fmt::print(log, "{}; training it again\n", e.what());
    }
  }
  gpt::TrainingState state = gpt::start(c, settings);
  const gpt::Evaluation nothing = [](const gpt::TransformerWeights&) {
    return gpt::Measurement{};
  };
  const auto start = std::chrono::steady_clock::now();
  gpt::train(state, settings, same_windows(data.training.tokens, settings), nothing,
             settings.steps);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print(log, "{}, seed {}: {} steps took {:.1f} s (measured; it varies with the machine)\n",
             change.label, settings.seed, settings.steps, seconds);
  if (!path.empty())
    gpt::save_checkpoint(path, fingerprint, state);
  return state;
}

// Where a change's seeds fall against the baseline's. With two seeds a range is a rough
// measure of the noise: of a change that does nothing, the two ranges land apart one time in
// three. So a difference is called clear only when the gap between the ranges is wider than both
// ranges; even then, a change that does nothing passes about one time in eleven.
std::string verdict(double low, double high, double baseline_low, double baseline_high) {
  const double gap = std::max(baseline_low - high, low - baseline_high);
  const double spread = std::max(high - low, baseline_high - baseline_low);
  const std::string direction = high < baseline_low ? "better" : "worse";
  if (gap <= 0.0)
    return "within the seeds' spread";
  if (gap <= spread)
    return fmt::format("apart ({}), by less than a spread", direction);
  return fmt::format("{}, clear by more than the seeds' spread", direction);
}

// Trains every change from every seed and measures bits per byte on the validation part.
void the_comparison(attn::book::Chapter& ch, const Data& data, bool is_quick,
                    const std::string& folder) {
  const gpt::TrainingSettings settings = is_quick ? quick(kTraining) : kTraining;
  const std::size_t scored = is_quick ? kQuickScoredTokens : kScoredTokens;
  const std::int64_t tokens_read =
      settings.steps * static_cast<std::int64_t>(settings.batch * kGpt2Block.max_length);
  fmt::print(ch.out,
             "\nEach change trained {} AdamW steps of {} windows of {} tokens ({} tokens,\n",
             settings.steps, settings.batch, kGpt2Block.max_length, tokens_read);
  fmt::print(
      ch.out, "{:.2g} per parameter of GPT-2's block), from seeds {} and {}; bits per byte\n",
      static_cast<double>(tokens_read) / static_cast<double>(gpt::parameter_count(kGpt2Block)),
      kSeeds[0], kSeeds[1]);
  fmt::print(ch.out, "on the validation part's first {} tokens:\n", scored);
  fmt::print(ch.out, "  {:<34} {:>10} {:>8} {:>8} {:>8} {:>8}\n", "", "parameters",
             fmt::format("seed {}", kSeeds[0]), fmt::format("seed {}", kSeeds[1]), "mean",
             "change");
  const std::size_t rows = kChanges.size();
  std::vector<std::string> labels;
  arma::rowvec mean(rows), low(rows), high(rows);
  std::vector<std::string> verdicts;
  const double uniform = std::log2(static_cast<double>(kVocabulary)) /
                         (static_cast<double>(data.training_text.size()) /
                          static_cast<double>(data.training.tokens.n_elem));
  // Every change from every seed, trained (or read back) and scored side by side, a run to a
  // core (attn::fast::side_by_side() says why). Runs end in any order; each prints its log
  // lines, whole, as it ends.
  const std::size_t seeds = kSeeds.size();
  const std::size_t runs = rows * seeds;
  arma::mat scores(rows, seeds);  // bits per byte: a row per change, a column per seed
  std::mutex log_lock;
  attn::fast::side_by_side(runs, [&](std::size_t r) {
    const std::size_t k = r / seeds;
    const std::size_t seed_index = r % seeds;
    gpt::TrainingSettings run_settings = settings;
    run_settings.seed = kSeeds[seed_index];
    std::ostringstream log;
    const gpt::TrainingState state = trained(log, data, kChanges[k], run_settings, folder);
    scores(k, seed_index) =
        gpt::bits_per_byte(state.weights, data.validation, scored, run_settings.precision);
    const std::lock_guard<std::mutex> hold(log_lock);
    fmt::print(ch.log, "{}", log.str());
  });
  const bool below_uniform = arma::all(arma::vectorise(scores) < uniform);  // all learned
  for (std::size_t k = 0; k < rows; ++k) {
    const Change& change = kChanges[k];
    const arma::rowvec bits = scores.row(k);
    labels.push_back(change.label);
    mean(k) = arma::mean(bits);
    low(k) = bits.min();
    high(k) = bits.max();
    fmt::print(ch.out, "  {:<34} {:>10} {:>8.3f} {:>8.3f} {:>8.3f} {:>8}\n", change.label,
               gpt::parameter_count(changed(change.apply)), bits(0), bits(1), mean(k),
               k == 0 ? std::string("baseline") : fmt::format("{:+.3f}", mean(k) - mean(0)));
    verdicts.push_back(verdict(low(k), high(k), low(0), high(0)));
  }
  ch.checks.claim("every run ends below the uniform guess's bits per byte", below_uniform);
  fmt::print(ch.out, "Against GPT-2's block (the seeds' ranges compared):\n");
  for (std::size_t k = 1; k < rows; ++k)
    fmt::print(ch.out, "  {:<34} {}\n", kChanges[k].label, verdicts[k]);
  double alone = 0.0;  // today's changes, each measured alone, added up
  for (std::size_t k = 0; k < rows; ++k)
    if (kChanges[k].in_todays_block)
      alone += mean(k) - mean(0);
  fmt::print(ch.out, "Today's block's changes, each alone, add up to {:+.3f}; together, {:+.3f}.\n",
             alone, mean(rows - 1) - mean(0));
  ch.plots.ranges({.name = "12-01-changes",
                   .title = "Each change against GPT-2's block, two seeds each",
                   .labels = labels,
                   .value = mean,
                   .low = low,
                   .high = high,
                   .value_label = "bits per byte on validation text (lower is better)",
                   .colour = colour::mid_blue,
                   .reference = mean(0)});
}

}  // namespace

int main(int argc, char** argv) {
  const attn::book::ChapterInfo info{
      .executable = "ch12_todays_attention",
      .summary = "Chapter 12: from GPT-2's attention to today's, each change trained and measured",
      .reference = "the reference"};
  bool is_quick = false;
  const auto options = [&](CLI::App& app) {
    app.add_flag("--quick", is_quick,
                 "train a few steps only, keeping no checkpoints (the tests' run: every piece "
                 "checked but the models' quality)");
  };
  return attn::book::run_chapter(argc, argv, info, options, [&](attn::book::Chapter& ch) {
    const std::string folder = is_quick ? std::string() : std::string(ATTN_DEFAULT_CHECKPOINTS);
    if (!folder.empty())
      std::filesystem::create_directories(folder);
    const Data data = the_corpus(ch);
    the_example(ch);
    the_pieces(ch);
    the_cache(ch);
    real_caches(ch);
    the_comparison(ch, data, is_quick, folder);
  });
}
