// A program of a reader's own that uses the installed library: it includes the layers' headers
// from the install prefix, links attn::math, attn::fast, attn::text, attn::numpy, attn::stats and
// attn::gpt,
// and prints one checked result of each. Exit status: 0 when every check holds, 1 when one does
// not.
#include <attn/fast/streaming.hpp>
#include <attn/gpt/decoder.hpp>
#include <attn/gpt/text.hpp>
#include <attn/gpt/trainer.hpp>
#include <attn/math/attention.hpp>
#include <attn/math/mask.hpp>
#include <attn/numpy/numpy_random.hpp>
#include <attn/stats/experiment.hpp>
#include <attn/text/bpe.hpp>

#include <fmt/format.h>
#include <armadillo>

#include <cmath>
#include <string>
#include <string_view>

namespace {

bool all_hold = true;

void check(bool holds, std::string_view what) {
  if (!holds) {
    fmt::print("FAILED: {}\n", what);
    all_hold = false;
  }
}

// Causal scaled dot-product attention on three tokens: the last one sees all three, with
// weights softmax((1, 2, 2) / sqrt 2); the first sees only itself.
arma::mat three_tokens() {
  return {{1.0, 0.0}, {0.0, 2.0}, {1.0, 1.0}};
}

void use_math() {
  const arma::mat E = three_tokens();
  const auto a =
      attn::math::attend(E, E, E, attn::math::score_scale(2), attn::math::Mask::causal(3));
  fmt::print("math: causal attention, last token's weights {:.10f} {:.10f} {:.10f}\n",
             a.weights(2, 0), a.weights(2, 1), a.weights(2, 2));
  check(a.weights(0, 1) == 0.0 && a.weights(0, 2) == 0.0, "the first token sees only itself");
  check(std::abs(a.weights(2, 0) - 1.0 / (1.0 + 2.0 * std::exp(1.0 / std::sqrt(2.0)))) < 1e-14,
        "the last token's first weight is 1 / (1 + 2 e^(1/sqrt 2))");
}

// The same attention by the fast layer's streaming pass (BLAS, OpenMP).
void use_fast() {
  const arma::mat E = three_tokens();
  const auto fast =
      attn::fast::streaming_attention(E, E, E, attn::math::score_scale(2), {.causal = true});
  const auto plain =
      attn::math::attend(E, E, E, attn::math::score_scale(2), attn::math::Mask::causal(3));
  const bool same = arma::approx_equal(fast.output, plain.output, "absdiff", 1e-12);
  fmt::print("fast: streaming attention {} attend()\n", same ? "equals" : "differs from");
  check(same, "the fast layer's streaming attention equals the math layer's attend()");
}

// A byte-level BPE tokenizer learned from one sentence, and the sentence round-tripped.
void use_text() {
  const std::string sentence = "the cat sat on the mat, and the cat sat on the hat";
  const auto tokenizer = attn::text::train_bpe(sentence, 256 + 8);
  const auto ids = tokenizer.encode(sentence);
  const bool round_trip = tokenizer.decode(ids) == sentence;
  fmt::print("text: {} merges, {} bytes as {} tokens, decoded {}\n", tokenizer.merges().size(),
             sentence.size(), ids.size(), round_trip ? "to the same text" : "wrongly");
  check(round_trip, "the tokenizer decodes what it encoded");
}

// numpy's default_rng(0).normal(), which numpy gives as 0.1257302210933933.
void use_numpy() {
  auto rng = attn::numpy::default_rng(0);
  const double x = rng.normal();
  fmt::print("numpy: default_rng(0).normal() = {:.10f}\n", x);
  check(std::abs(x - 0.1257302210933933) < 1e-14, "numpy's first normal of seed 0");
}

// Student's t quantile at 0.975 with 10 degrees of freedom, 2.2281388519862742 to the last
// bit (mpmath at 40 digits; scipy.stats.t.ppf gives 2.2281388519649385, 1e-11 off).
void use_stats() {
  const double t = attn::stats::t_quantile(0.975, 10.0);
  fmt::print("stats: Student's t at 0.975 with 10 degrees of freedom = {:.10f}\n", t);
  check(std::abs(t - 2.2281388519862742) < 1e-14, "the t quantile, to the last bits");
}

// A tiny GPT trained a few steps on a sentence repeated, with chapter 11's recipe, then asked
// to continue it: the loss falls, and greedy decoding through the KV cache writes tokens.
void use_gpt() {
  std::string text;
  for (int k = 0; k < 20; ++k)
    text += "the cat sat on the mat. ";
  const auto tokenizer = attn::text::train_bpe(text, 256 + 8);
  const attn::gpt::TokenText tokens = attn::gpt::encode(tokenizer, text);
  const attn::gpt::TransformerConfig model{.vocabulary = tokenizer.vocab_size(),
                                           .d_model = 16,
                                           .heads = 2,
                                           .layers = 1,
                                           .d_ff = 32,
                                           .max_length = 8,
                                           .positions = attn::gpt::Positions::learned,
                                           .tied_embeddings = true};
  const attn::gpt::TrainingSettings settings{.steps = 30,
                                             .batch = 4,
                                             .peak_learning_rate = 1e-2,
                                             .final_learning_rate = 1e-3,
                                             .warmup_steps = 3,
                                             .weight_decay = 0.1,
                                             .clip_norm = 1.0,
                                             .evaluate_every = 30,
                                             .evaluate_at_start = true,
                                             .seed = 1};
  attn::gpt::TrainingState state = attn::gpt::start(model, settings);
  attn::gpt::train(state, settings,
                   attn::gpt::window_batches(tokens.tokens, model.max_length, settings.batch),
                   attn::gpt::held_out_bits(tokens, 0), settings.steps);
  const double before = state.curve.front().measured.held_out;
  const double after = state.curve.back().measured.held_out;
  const auto continued = attn::gpt::continue_greedily(state.weights, tokens.tokens.head(3), 5);
  fmt::print("gpt: {} steps, bits per byte {} after training, {} tokens continued\n", state.step,
             after < before ? "lower" : "not lower", continued.tokens.n_elem);
  check(after < before, "training lowers the bits per byte of its own text");
  check(continued.tokens.n_elem == 5, "the decoder continues the text");
}

}  // namespace

int main() {
  use_math();
  use_fast();
  use_text();
  use_numpy();
  use_stats();
  use_gpt();
  return all_hold ? 0 : 1;
}
