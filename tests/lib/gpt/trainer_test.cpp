// The GPT's training loop (attn/gpt/trainer.hpp) and its text bridge (text.hpp), as chapter 11
// runs them: bits per byte is the sum of
// each token's cost under the documented window rule, divided by its bytes and ln 2; encode()
// counts every byte once; only the blocks' matrices decay; start() draws the model from the
// seed's stream; and each step of train() is the recipe it documents, draw for draw.
#include <attn/gpt/checkpoint.hpp>
#include <attn/gpt/forward.hpp>
#include <attn/gpt/text.hpp>
#include <attn/gpt/trainer.hpp>
#include <attn/math/layers.hpp>
#include <attn/math/optimizer.hpp>
#include <attn/math/validate.hpp>
#include <attn/numpy/numpy_random.hpp>
#include <attn/text/bpe.hpp>

#include "bad_input.hpp"
#include "tiny_gpt.hpp"

#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace gpt = attn::gpt;
using attn_bad_input::ThrowsNaming;

// A vocabulary of 31 tokens, one block.
attn::gpt::TransformerConfig config(arma::uword max_length, bool tied = true) {
  return gpt_test::tiny_config(31, max_length, 1, tied);
}

attn::gpt::TransformerWeights model(arma::uword max_length) {
  attn::numpy::Generator rng = attn::numpy::default_rng(2024);
  attn::gpt::TransformerWeights w = attn::gpt::init_transformer(
      config(max_length), [&](arma::uword r, arma::uword c) { return rng.normal(r, c); });
  w.embedding = rng.normal(w.embedding.n_rows, w.embedding.n_cols);  // far from uniform
  return w;
}

// `n` tokens below 31 and their lengths, 1 to 4 bytes, from a fixed stream.
gpt::TokenText token_text(arma::uword n, std::uint64_t seed = 3) {
  attn::numpy::Generator rng = attn::numpy::default_rng(seed);
  gpt::TokenText text;
  text.tokens.set_size(n);
  text.lengths.set_size(n);
  for (arma::uword i = 0; i < n; ++i) {
    text.tokens(i) = static_cast<arma::uword>(rng.random() * 31);
    text.lengths(i) = 1 + static_cast<arma::uword>(rng.random() * 4);
  }
  return text;
}

// bits_per_byte() the slow way: token i (1 ≤ i < n) is scored from its own context, tokens
// s ... i − 1, where s = 0 while i ≤ max_length, and after that the first multiple of the
// stride max_length / 2 with s + max_length ≥ i (the window that scores i).
double direct_bits_per_byte(const attn::gpt::TransformerWeights& w, const gpt::TokenText& text,
                            arma::uword n) {
  const arma::uword window = w.config.max_length;
  const arma::uword stride = std::max<arma::uword>(1, window / 2);
  double nats = 0.0, bytes = 0.0;
  for (arma::uword i = 1; i < n; ++i) {
    const arma::uword s = i <= window ? 0 : (i - window + stride - 1) / stride * stride;
    const arma::mat logits = attn::gpt::sentence_logits(w, text.tokens.subvec(s, i - 1));
    const arma::rowvec z = logits.row(logits.n_rows - 1);
    double sum = 0.0;
    for (const double x : z)
      sum += std::exp(x - z.max());
    nats += z.max() + std::log(sum) - z(text.tokens(i));
    bytes += static_cast<double>(text.lengths(i));
  }
  return nats / (bytes * std::numbers::ln2);
}

TEST(BitsPerByte, EqualsEachTokenScoredFromItsOwnWindow) {
  const attn::gpt::TransformerWeights w8 = model(8);
  const gpt::TokenText text = token_text(40);
  // Shorter than a window, a window, one token more, and lengths that are no multiple of
  // the stride 4.
  for (const arma::uword n : {2, 5, 8, 9, 10, 13, 23, 37, 40}) {
    gpt::TokenText head{text.tokens.head(n), text.lengths.head(n)};
    EXPECT_NEAR(gpt::bits_per_byte(w8, head), direct_bits_per_byte(w8, text, n), 1e-12)
        << "n = " << n;
  }
  const attn::gpt::TransformerWeights w7 = model(7);  // stride 3
  for (const arma::uword n : {4, 7, 8, 11, 20, 40}) {
    gpt::TokenText head{text.tokens.head(n), text.lengths.head(n)};
    EXPECT_NEAR(gpt::bits_per_byte(w7, head), direct_bits_per_byte(w7, text, n), 1e-12)
        << "max_length 7, n = " << n;
  }
}

// In float32 the windows, and the tokens each scores, are the same: the two agree to float's
// rounding. (The float32 step computes no dropout, so the model here drops none.)
TEST(BitsPerByte, Float32ScoresTheSameTokensAsFloat64) {
  for (const arma::uword max_length : {7, 8}) {
    attn::gpt::TransformerWeights w = model(max_length);
    w.config.dropout = 0.0;
    const gpt::TokenText text = token_text(40);
    for (const arma::uword n : {2, 5, 8, 9, 13, 23, 40}) {
      const double reference = gpt::bits_per_byte(w, text, n);
      EXPECT_NEAR(gpt::bits_per_byte(w, text, n, gpt::Precision::float32), reference,
                  1e-5 * reference)
          << "max_length " << max_length << ", n = " << n;
    }
  }
}

TEST(BitsPerByte, ScoresTheFirstTokensAskedFor) {
  const attn::gpt::TransformerWeights w = model(8);
  const gpt::TokenText text = token_text(40, 5);
  EXPECT_NEAR(gpt::bits_per_byte(w, text, 13), direct_bits_per_byte(w, text, 13), 1e-12);
  const double all = direct_bits_per_byte(w, text, 40);
  EXPECT_NEAR(gpt::bits_per_byte(w, text), all, 1e-12);
  EXPECT_NEAR(gpt::bits_per_byte(w, text, 0), all, 1e-12);
  EXPECT_NEAR(gpt::bits_per_byte(w, text, 41), all, 1e-12);
  EXPECT_NEAR(gpt::bits_per_byte(w, text, 1000), all, 1e-12);
  // The first token is context only: its length counts for nothing.
  gpt::TokenText longer_first = text;
  longer_first.lengths(0) = 1000;
  EXPECT_EQ(gpt::bits_per_byte(w, longer_first), gpt::bits_per_byte(w, text));
}

TEST(BitsOnBoth, MeasuresBothTextsTheSameWay) {
  const attn::gpt::TransformerWeights w = model(8);
  const gpt::TokenText held_out = token_text(40, 5);
  const gpt::TokenText training = token_text(30, 6);
  gpt::Step step = gpt::make_step(w.config, gpt::Precision::float64);
  const gpt::Measurement m = gpt::bits_on_both(held_out, training, 25)(w, step);
  EXPECT_NEAR(m.held_out, direct_bits_per_byte(w, held_out, 25), 1e-12);
  ASSERT_TRUE(m.training.has_value());
  EXPECT_NEAR(*m.training, direct_bits_per_byte(w, training, 25), 1e-12);
  EXPECT_FALSE(gpt::held_out_bits(held_out, 25)(w, step).training.has_value());
}

// A run's Step scores in its precision: the float32 step's numbers are those bits_per_byte()
// gives in float32 alone, and one step scores two texts in turn, twice, its working memory
// resized between them, with the same numbers as fresh steps.
TEST(BitsPerByte, TheRunsFloat32StepScoresAsAFreshOneDoes) {
  attn::gpt::TransformerWeights w = model(8);
  w.config.dropout = 0.0;  // the float32 step's models drop nothing out; scoring never does
  const gpt::TokenText held_out = token_text(40, 5);
  const gpt::TokenText training = token_text(30, 6);
  gpt::Step step = gpt::make_step(w.config, gpt::Precision::float32);
  ASSERT_NE(step.float32(), nullptr);
  for (int round = 0; round < 2; ++round)
    for (const gpt::TokenText* text : {&held_out, &training})
      EXPECT_EQ(gpt::bits_per_byte(w, *text, 25, step),
                gpt::bits_per_byte(w, *text, 25, gpt::Precision::float32));
  EXPECT_NEAR(gpt::bits_per_byte(w, held_out, 25, step), direct_bits_per_byte(w, held_out, 25),
              1e-5);
  EXPECT_EQ(gpt::make_step(w.config, gpt::Precision::float64).float32(), nullptr);
}

TEST(BitsPerByte, NeedsTwoTokens) {
  const attn::gpt::TransformerWeights w = model(8);
  const gpt::TokenText text = token_text(5);
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] {
        gpt::bits_per_byte(w, gpt::TokenText{text.tokens.head(1), text.lengths.head(1)});
      },
      "1 token(s); scoring needs at least 2"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>([&] { gpt::bits_per_byte(w, text, 1); },
                                                   "scoring needs at least 2"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>([&] { gpt::bits_per_byte(w, gpt::TokenText{}); },
                                                   "0 token(s)"));
}

// A death test only so that a bits_per_byte() that never returns fails (SIGALRM) instead of
// hanging the suite.
TEST(BitsPerByteDeathTest, AModelOfOnePositionScoresEachTokenFromTheOneBefore) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // BLAS may have started threads
  const attn::gpt::TransformerWeights w = model(1);
  const gpt::TokenText text = token_text(6);
  const double want = direct_bits_per_byte(w, text, 6);
  EXPECT_EXIT(
      {
        ::alarm(2);
        const double got = gpt::bits_per_byte(w, text);
        std::exit(std::abs(got - want) <= 1e-12 ? 0 : 1);
      },
      testing::ExitedWithCode(0), "");
}

TEST(Encode, CountsEveryByteOnce) {
  const std::string training =
      "And God said, Let there be light: and there was light. And God saw the light, that it "
      "was good: and God divided the light from the darkness.\n";
  const attn::text::BpeTokenizer tokenizer = attn::text::train_bpe(training, 300);
  for (const std::string& text :
       {training, std::string("Lo, caf\xc3\xa9 \x00\xff bytes never seen,\r\n 12 34\n", 38),
        std::string("a"), std::string()}) {
    const gpt::TokenText t = gpt::encode(tokenizer, text);
    ASSERT_EQ(t.tokens.n_elem, t.lengths.n_elem);
    EXPECT_EQ(arma::accu(t.lengths), text.size());
    std::vector<attn::text::TokenId> ids(t.tokens.begin(), t.tokens.end());
    EXPECT_EQ(tokenizer.decode(ids), text);
    for (arma::uword i = 0; i < t.tokens.n_elem; ++i)
      EXPECT_EQ(t.lengths(i),
                tokenizer.token_bytes(static_cast<attn::text::TokenId>(t.tokens(i))).size());
  }
  EXPECT_LT(gpt::encode(tokenizer, training).tokens.n_elem, training.size() / 2)
      << "the merges learned from a text shorten it";
}

TEST(DecayedParameters, FlagsExactlyTheBlocksMatrices) {
  for (const bool tied : {true, false}) {
    attn::gpt::TransformerConfig c = config(8, tied);
    c.layers = 2;
    attn::numpy::Generator rng = attn::numpy::default_rng(1);
    attn::gpt::TransformerWeights w = attn::gpt::init_transformer(
        c, [&](arma::uword r, arma::uword k) { return rng.normal(r, k); });
    const std::vector<bool> flags = gpt::decay_flags(w);
    const std::vector<attn::gpt::Parameter> parameters = attn::gpt::parameters(w);
    ASSERT_EQ(flags.size(), parameters.size());
    // embedding, positions, then 16 per block: ln1 (2), W_Q W_K W_V W_O (2-5), 4 biases,
    // ln2 (2), W1 (12), b1, W2 (14), b2; then lnf (2) and, untied, W_U and b_U.
    std::vector<bool> want(parameters.size(), false);
    for (std::size_t block = 0; block < 2; ++block)
      for (const std::size_t k : {2, 3, 4, 5, 12, 14})
        want[2 + 16 * block + k] = true;
    EXPECT_EQ(flags, want) << (tied ? "tied" : "untied");
    for (std::size_t k = 0; k < parameters.size(); ++k)
      if (want[k]) {  // W1 is (d × d_ff), W2 (d_ff × d), the others (d × d)
        EXPECT_EQ(parameters[k].value->n_rows, (k - 2) % 16 == 14 ? 16u : 8u) << parameters[k].name;
        EXPECT_EQ(parameters[k].value->n_cols, (k - 2) % 16 == 12 ? 16u : 8u) << parameters[k].name;
      }
    EXPECT_EQ(std::count(flags.begin(), flags.end(), true), 12);
  }
}

const std::size_t kEvaluationTokens = 12;  // held-out tokens scored at each point

gpt::TrainingSettings settings() {
  return {.steps = 3,
          .batch = 2,
          .peak_learning_rate = 2e-2,
          .final_learning_rate = 2e-3,
          .warmup_steps = 1,
          .weight_decay = 0.1,
          .clip_norm = 0.5,
          .evaluate_every = 2,
          .seed = 17};
}

TEST(Start, DrawsTheModelFromTheSeedsStreamAndNothingElse) {
  const attn::gpt::TransformerConfig c = config(8);
  const gpt::TrainingState state = gpt::start(c, settings());
  attn::numpy::Generator rng = attn::numpy::default_rng(17);
  attn::gpt::TransformerWeights want = attn::gpt::init_transformer(
      c, [&](arma::uword r, arma::uword k) { return rng.normal(r, k); });
  attn::gpt::TransformerWeights got = state.weights;
  const std::vector<attn::gpt::Parameter> a = attn::gpt::parameters(got);
  const std::vector<attn::gpt::Parameter> b = attn::gpt::parameters(want);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t k = 0; k < a.size(); ++k)
    EXPECT_TRUE(arma::all(arma::vectorise(*a[k].value == *b[k].value))) << a[k].name;
  EXPECT_EQ(state.rng_state.high, rng.bit_generator().state().high);
  EXPECT_EQ(state.rng_state.low, rng.bit_generator().state().low);
  EXPECT_EQ(state.rng_increment.low, rng.bit_generator().increment().low);
  EXPECT_EQ(state.step, 0);
  EXPECT_TRUE(state.curve.empty());
  EXPECT_EQ(state.optimizer.steps, 0);
  EXPECT_TRUE(state.optimizer.first.empty());
}

TEST(ScheduleOf, WarmsUpFromTheFirstStepAndEndsAtTheFinalRate) {
  gpt::TrainingSettings s = settings();
  s.steps = 20;
  s.warmup_steps = 4;
  const attn::math::WarmupCosine schedule = gpt::schedule_of(s);
  for (std::int64_t t = 0; t < 4; ++t)
    EXPECT_NEAR(attn::math::learning_rate(schedule, t), 2e-2 * static_cast<double>(t + 1) / 5,
                1e-16)
        << "step " << t;
  EXPECT_NEAR(attn::math::learning_rate(schedule, 4), 2e-2, 1e-16);
  EXPECT_NEAR(attn::math::learning_rate(schedule, 12), (2e-2 + 2e-3) / 2, 1e-16);  // half-way down
  EXPECT_NEAR(attn::math::learning_rate(schedule, 20), 2e-3, 1e-16);
}

// train()'s documented step, done here from the library's pieces: `batch` windows of
// max_length + 1 tokens at offsets ⌊u (N − max_length)⌋, u = rng.random(); transformer_step()
// with dropout drawing from the same stream; clip_grad_norm(); AdamW at the schedule's rate.
struct Replayed {
  attn::gpt::TransformerWeights weights;
  attn::math::AdamWState optimizer;
  std::vector<double> losses;
  std::vector<double> norms;     // before clipping
  std::vector<double> held_out;  // after each step
  attn::numpy::UInt128 rng_state;
};

Replayed replay(const gpt::TrainingState& start, const gpt::TrainingSettings& s,
                const arma::uvec& training, const gpt::TokenText& held_out) {
  Replayed out{start.weights, {}, {}, {}, {}, {}};
  const arma::uword window = start.weights.config.max_length;
  attn::numpy::Generator rng(attn::numpy::PCG64(start.rng_state, start.rng_increment));
  attn::math::AdamW optimizer(gpt::decay_flags(out.weights), s.weight_decay, s.beta1, s.beta2);
  const attn::math::UniformDraws uniform = [&rng] {
    return rng.random();
  };
  for (std::int64_t t = 0; t < s.steps; ++t) {
    std::vector<arma::uvec> windows;
    for (arma::uword b = 0; b < s.batch; ++b) {
      const double u = rng.random();
      const auto offset =
          static_cast<arma::uword>(std::floor(u * static_cast<double>(training.n_elem - window)));
      windows.push_back(training.subvec(offset, offset + window));
    }
    attn::gpt::TransformerStep step =
        attn::gpt::transformer_step(out.weights, attn::gpt::pack_sentences(windows), uniform);
    std::vector<arma::mat> gradients;
    std::vector<arma::mat*> parameters;
    for (const attn::gpt::Parameter& g : attn::gpt::parameters(step.gradients))
      gradients.push_back(*g.value);
    for (const attn::gpt::Parameter& p : attn::gpt::parameters(out.weights))
      parameters.push_back(p.value);
    out.norms.push_back(attn::math::clip_grad_norm(gradients, s.clip_norm));
    optimizer.step(parameters, gradients, attn::math::learning_rate(gpt::schedule_of(s), t));
    out.losses.push_back(step.loss);
    out.held_out.push_back(gpt::bits_per_byte(out.weights, held_out, kEvaluationTokens));
  }
  out.optimizer = optimizer.state();
  out.rng_state = rng.bit_generator().state();
  return out;
}

// train() on chapter 11's batches and measurement: random windows of `training`, bits per
// byte of the first kEvaluationTokens of `held_out`.
void train_on(gpt::TrainingState& state, const gpt::TrainingSettings& s, const arma::uvec& training,
              const gpt::TokenText& held_out, std::int64_t until,
              const gpt::Progress& progress = {}) {
  const arma::uword window = state.weights.config.max_length;
  gpt::train(state, s, gpt::window_batches(training, window, s.batch),
             gpt::held_out_bits(held_out, kEvaluationTokens), until, progress);
}

// A run of config(8) and settings() on `n` training tokens and 20 held-out ones, before its
// first step.
struct SmallRun {
  gpt::TrainingSettings settings;
  arma::uvec training;
  gpt::TokenText held_out;
  gpt::TrainingState state;
};

SmallRun small_run(arma::uword n) {
  const gpt::TrainingSettings s = settings();
  return {s, token_text(n, 7).tokens, token_text(20, 8), gpt::start(config(8), s)};
}

TEST(Train, EachStepIsTheDocumentedRecipe) {
  // 11 tokens: offsets 0, 1 and 2 are the three windows of 9 tokens.
  auto [s, training, held_out, state] = small_run(11);
  const Replayed want = replay(state, s, training, held_out);
  std::vector<std::int64_t> steps;
  std::vector<double> losses;
  train_on(state, s, training, held_out, s.steps, [&](const gpt::StepReport& r) {
    steps.push_back(r.step);
    losses.push_back(r.loss);
  });
  EXPECT_EQ(steps, (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_EQ(losses, want.losses);
  std::vector<attn::gpt::Parameter> a = attn::gpt::parameters(state.weights);
  attn::gpt::TransformerWeights replayed = want.weights;
  std::vector<attn::gpt::Parameter> b = attn::gpt::parameters(replayed);
  std::string differ;
  for (std::size_t k = 0; k < a.size(); ++k)
    if (!arma::all(arma::vectorise(*a[k].value == *b[k].value)))
      differ += " " + a[k].name;
  EXPECT_EQ(differ, "") << "these parameters differ from the replayed steps'";
  EXPECT_EQ(state.optimizer.steps, 3);
  EXPECT_EQ(state.rng_state.low, want.rng_state.low);
  EXPECT_EQ(state.rng_state.high, want.rng_state.high);
  // Points after step 2 (every 2) and step 3 (the last), each with the mean loss since the one
  // before and the rate of its last step.
  ASSERT_EQ(state.curve.size(), 2u);
  const attn::math::WarmupCosine schedule = gpt::schedule_of(s);
  EXPECT_EQ(state.curve[0].step, 2);
  EXPECT_EQ(state.curve[0].learning_rate, attn::math::learning_rate(schedule, 1));
  EXPECT_EQ(state.curve[0].training_loss, (want.losses[0] + want.losses[1]) / 2);
  EXPECT_EQ(state.curve[0].measured.held_out, want.held_out[1]);
  EXPECT_EQ(state.curve[1].step, 3);
  EXPECT_EQ(state.curve[1].learning_rate, attn::math::learning_rate(schedule, 2));
  EXPECT_EQ(state.curve[1].training_loss, want.losses[2]);
  EXPECT_EQ(state.curve[1].measured.held_out, want.held_out[2]);
  EXPECT_EQ(state.loss_count, 0);
  EXPECT_FALSE(state.curve[0].measured.training.has_value()) << "held_out_bits() takes no other";
  // The history: every step's loss and gradient norm, in order.
  ASSERT_EQ(state.history.size(), 3u);
  for (std::size_t t = 0; t < 3; ++t) {
    EXPECT_EQ(state.history[t].loss, want.losses[t]) << "step " << t;
    EXPECT_EQ(state.history[t].gradient_norm, want.norms[t]) << "step " << t;
  }
}

TEST(Train, TakesAdamWsBetasFromItsSettings) {
  auto [s, training, held_out, state] = small_run(11);
  gpt::TrainingState with_defaults = state;
  train_on(with_defaults, s, training, held_out, s.steps);
  s.beta1 = 0.8;
  s.beta2 = 0.95;  // GPT-2's
  const Replayed want = replay(state, s, training, held_out);
  train_on(state, s, training, held_out, s.steps);
  EXPECT_TRUE(arma::all(arma::vectorise(state.weights.embedding == want.weights.embedding)));
  // Adam's first step does not depend on the betas (the bias correction undoes them); the
  // later ones do.
  EXPECT_FALSE(
      arma::all(arma::vectorise(state.weights.embedding == with_defaults.weights.embedding)));
  s.beta2 = 1.0;
  gpt::TrainingState refused = gpt::start(config(8), s);
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      // (Named again: clang 14 cannot capture a structured binding.)
      [&refused, &settings = s, &text = training, &other = held_out] {
        train_on(refused, settings, text, other, settings.steps);
      },
      "beta2 = 1 must be in [0, 1)"));
  EXPECT_EQ(refused.step, 0);
}

TEST(Train, StopsAtUntilAndAtTheLastStep) {
  auto [s, training, held_out, state] = small_run(30);
  train_on(state, s, training, held_out, 1);
  EXPECT_EQ(state.step, 1);
  EXPECT_TRUE(state.curve.empty());
  EXPECT_EQ(state.loss_count, 1);
  train_on(state, s, training, held_out, 100);
  EXPECT_EQ(state.step, 3);
  EXPECT_EQ(state.curve.size(), 2u);
  const gpt::TrainingState before = state;
  train_on(state, s, training, held_out, 100);  // nothing left to do
  EXPECT_EQ(state.step, 3);
  EXPECT_EQ(state.rng_state.low, before.rng_state.low);
}

TEST(Train, OneWindowOfTrainingTokensIsEnough) {
  // max_length + 1 tokens are one window, at offset ⌊u (N − max_length)⌋ = 0.
  auto [s, training, held_out, state] = small_run(9);
  const Replayed want = replay(state, s, training, held_out);
  ASSERT_NO_THROW(train_on(state, s, training, held_out, s.steps));
  EXPECT_TRUE(arma::all(arma::vectorise(state.weights.embedding == want.weights.embedding)));
}

// A death test so that a division by zero fails this test instead of ending the suite.
TEST(TrainDeathTest, RefusesMeasuringEveryZeroSteps) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const attn::gpt::TransformerConfig c = config(8);
  gpt::TrainingSettings s = settings();
  s.evaluate_every = 0;
  EXPECT_EXIT(
      {
        gpt::TrainingState state = gpt::start(c, s);
        try {
          train_on(state, s, token_text(30).tokens, token_text(20), s.steps);
        } catch (const attn::math::InputError& e) {
          std::exit(std::string(e.what()).find("evaluate_every") != std::string::npos ? 0 : 2);
        }
        std::exit(1);  // trained without a word
      },
      testing::ExitedWithCode(0), "");
}

TEST(Train, RefusesTooFewTrainingTokens) {
  const attn::gpt::TransformerConfig c = config(8);
  const gpt::TrainingSettings s = settings();
  gpt::TrainingState state = gpt::start(c, s);
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { train_on(state, s, token_text(8).tokens, token_text(20), s.steps); },
      "random_windows: 8 tokens; a window of 8 needs 9"));
  EXPECT_EQ(state.step, 0);
}

TEST(ProgressLine, OnlyOnATerminalAndEndsItsLineAtTheLastStep) {
  std::ostringstream log;
  EXPECT_FALSE(gpt::progress_line(log, false));
  const gpt::Progress progress = gpt::progress_line(log, true);
  ASSERT_TRUE(progress);
  progress({.step = 3, .steps = 10, .loss = 1.5, .gradient_norm = 0.75, .learning_rate = 0.1});
  EXPECT_EQ(log.str(), "\rtraining: step 3 of 10, loss 1.500, gradient norm 0.750 ");
  progress({.step = 10, .steps = 10, .loss = 0.25, .gradient_norm = 2.0, .learning_rate = 0.1});
  EXPECT_EQ(log.str(),
            "\rtraining: step 3 of 10, loss 1.500, gradient norm 0.750 "
            "\rtraining: step 10 of 10, loss 0.250, gradient norm 2.000 \n");
}

}  // namespace

namespace {

// A run with groups: the embedding and block 0 frozen, block 1's parameters at a quarter of the
// rate without decay.
gpt::TrainingSettings grouped(gpt::Precision precision) {
  gpt::TrainingSettings s = settings();
  s.precision = precision;
  s.groups = {{.prefix = "embedding", .frozen = true},
              {.prefix = "blocks.0.", .frozen = true},
              {.prefix = "blocks.1.", .rate_factor = 0.25, .weight_decay = 0.0}};
  return s;
}

}  // namespace

// Frozen parameters are bit-identical after training, in either precision; the trained ones
// move; AdamW keeps moments for the trained ones alone, and a checkpoint of the run reads back.
TEST(ParameterGroups, FrozenParametersStayBitIdenticalInEitherPrecision) {
  for (const gpt::Precision precision : {gpt::Precision::float64, gpt::Precision::float32}) {
    SCOPED_TRACE(gpt::to_string(precision));
    const gpt::TrainingSettings s = grouped(precision);
    gpt::TransformerConfig c = config(8);
    c.layers = 2;
    c.dropout = 0.0;  // the float32 step's models drop nothing out
    gpt::TrainingState state = gpt::start(c, s);
    const gpt::TransformerWeights before = state.weights;
    train_on(state, s, token_text(40, 7).tokens, token_text(20, 8), s.steps);
    const std::vector<gpt::ConstParameter> start = gpt::parameters(before);
    const std::vector<gpt::Parameter> now = gpt::parameters(state.weights);
    std::size_t frozen = 0;
    for (std::size_t k = 0; k < now.size(); ++k) {
      const bool is_frozen = now[k].name == "embedding" || now[k].name.starts_with("blocks.0.");
      frozen += is_frozen ? 1 : 0;
      const bool same = arma::approx_equal(*now[k].value, *start[k].value, "absdiff", 0.0);
      const bool surely_moves = now[k].name.find("gamma") != std::string::npos ||
                                now[k].name.starts_with("position") ||
                                now[k].name.find(".W") != std::string::npos;
      if (is_frozen) {
        EXPECT_TRUE(same) << now[k].name << " is frozen";
      } else if (surely_moves) {
        EXPECT_FALSE(same) << now[k].name << " is trained";
      }
    }
    EXPECT_EQ(frozen, 17u);  // the embedding and block 0's 16
    EXPECT_EQ(state.optimizer.first.size(), now.size() - frozen);
    const gpt_test::TempDir dir;
    const std::string path = dir.file("grouped.ckpt");
    gpt::save_checkpoint(path, "grouped\n", state);
    const gpt::TrainingState read = gpt::load_checkpoint(path, "grouped\n", c, s);
    EXPECT_EQ(read.optimizer.first.size(), state.optimizer.first.size());
  }
}

// A group's rate factor scales its parameters' steps: with every parameter in one group at
// factor 0, nothing moves.
TEST(ParameterGroups, ARateFactorOfZeroMovesNothing) {
  gpt::TrainingSettings s = settings();
  s.groups = {{.prefix = "", .rate_factor = 0.0}};
  gpt::TrainingState state = gpt::start(config(8), s);
  const gpt::TransformerWeights before = state.weights;
  train_on(state, s, token_text(40, 7).tokens, token_text(20, 8), 3);
  const std::vector<gpt::ConstParameter> start = gpt::parameters(before);
  const std::vector<gpt::Parameter> now = gpt::parameters(state.weights);
  for (std::size_t k = 0; k < now.size(); ++k)
    EXPECT_TRUE(arma::approx_equal(*now[k].value, *start[k].value, "absdiff", 0.0)) << now[k].name;
}

TEST(ParameterGroups, RefusesAGroupThatNamesNothingAndBadFactors) {
  gpt::TrainingSettings s = settings();
  gpt::TrainingState state = gpt::start(config(8), s);
  s.groups = {{.prefix = "block.0.", .frozen = true}};  // "blocks", misspelt
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { (void)gpt::trained_parameters(state.weights, s); },
      "train: the parameter group \"block.0.\" names no parameter of the model"));
  s.groups = {{.prefix = "blocks.", .rate_factor = -1.0}};
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { (void)gpt::trained_parameters(state.weights, s); },
      "the parameter group \"blocks.\" has the rate factor -1"));
  s.groups = {{.prefix = "blocks.", .weight_decay = std::nan("")}};
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { (void)gpt::trained_parameters(state.weights, s); },
      "the parameter group \"blocks.\" has the weight decay nan"));
  s.groups = {{.prefix = "", .frozen = false}, {.prefix = "embedding", .frozen = true}};
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { (void)gpt::trained_parameters(state.weights, s); },
      "group \"embedding\" names no parameter of the model (an earlier group takes them"));
}

// A step made for one model is refused by the scoring and the training of another, naming the
// first field that differs, as is a step of another precision than the run's.
TEST(Step, AStepOfAnotherModelOrPrecisionIsRefused) {
  const attn::gpt::TransformerWeights w = model(8);
  gpt::TransformerConfig longer = w.config;
  longer.max_length = 9;
  gpt::Step other = gpt::make_step(longer, gpt::Precision::float64);
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { gpt::bits_per_byte(w, token_text(20, 5), 10, other); },
      "bits_per_byte: the step was made for another model: max_length 9, not max_length 8"));
  const gpt::TrainingSettings s = settings();
  gpt::TrainingState state = gpt::start(w.config, s);
  const gpt::NextBatch batches = gpt::window_batches(token_text(40, 7).tokens, 8, s.batch);
  const gpt::Evaluation none = [](const gpt::TransformerWeights&, gpt::Step&) {
    return gpt::Measurement{};
  };
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { gpt::train(other, state, s, batches, none, 1); },
      "train: the step was made for another model: max_length 9, not max_length 8"));
  gpt::TransformerConfig undropped = w.config;
  undropped.dropout = 0.0;
  gpt::Step float32 = gpt::make_step(undropped, gpt::Precision::float32);
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { gpt::train(float32, state, s, batches, none, 1); },
      "train: the step computes in float32, the settings say float64"));
  EXPECT_EQ(state.step, 0);  // nothing was trained
}
