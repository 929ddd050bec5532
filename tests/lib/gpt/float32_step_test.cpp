// The float32 training step (attn/gpt/float32_step.hpp) against the readable float64 step it
// stands in for: the loss, every gradient and a few steps of training, within what float's
// rounding allows; and its refusals.
#include <attn/gpt/float32_step.hpp>
#include <attn/gpt/forward.hpp>
#include <attn/gpt/trainer.hpp>
#include <attn/math/validate.hpp>

#include <gtest/gtest.h>
#include <omp.h>

#include "random_gpt.hpp"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace gpt = attn::gpt;

// How close float32 comes to float64. A float carries 24 bits (relative rounding 6e-8); a
// gradient is a sum over thousands of products, each rounded, so its error is a few hundred
// times that, relative to the largest entry of its matrix.
constexpr double kLossTolerance = 1e-5;      // relative, of the mean cross-entropy
constexpr double kGradientTolerance = 1e-4;  // of each gradient's largest entry
constexpr double kWeightTolerance = 1e-5;    // after a few AdamW steps, absolute

// Chapter 11's kind of model (tied embeddings, no dropout), small enough to test quickly but
// with windows of different lengths and more than one head and block.
gpt::TransformerConfig small_config() {
  return {.vocabulary = 50,
          .d_model = 32,
          .heads = 4,
          .layers = 2,
          .d_ff = 64,
          .max_length = 24,
          .positions = gpt::Positions::learned,
          .tied_embeddings = true,
          .dropout = 0.0};
}

gpt::PackedBatch ragged_batch(arma::uword vocabulary, arma::uword max_length) {
  std::vector<arma::uvec> sentences;
  for (const arma::uword length : {max_length + 1, arma::uword{7}, arma::uword{2}, max_length}) {
    arma::uvec s(length);
    for (arma::uword i = 0; i < length; ++i)
      s(i) = (7 * i + 3 * length) % vocabulary;
    sentences.push_back(s);
  }
  return gpt::pack_sentences(sentences);
}

// The key biases' gradient is 0 in exact arithmetic: b_K adds q_i · b_K / √d_k to every score
// of query i, and softmax ignores what all of a query's scores share. Computed, it is rounding
// alone (on the small model here about 1e-16 in double and 5e-8 in float; at chapter 11's start
// 1e-19 and 1e-10). Where that rounding nears AdamW's epsilon (1e-8), as in float here, AdamW's
// division by the gradient's own running scale turns it into steps of a sizeable fraction of the
// learning rate, and the key biases wander without changing the loss. Their gradients are
// compared at the scale of the whole gradient, not their own, and their values after training
// not at all.
bool zero_in_exact_arithmetic(const std::string& name) {
  return name.ends_with("attention.b_K");
}

// The largest difference between two gradients (or weights) of one model, parameter by
// parameter, relative to the reference's largest entry (the whole model's largest, for the key
// biases), with the parameter's name.
struct Worst {
  double relative = 0.0;
  std::string name;
};
Worst worst_difference(const gpt::TransformerWeights& reference,
                       const gpt::TransformerWeights& other) {
  const std::vector<gpt::ConstParameter> a = gpt::parameters(reference);
  const std::vector<gpt::ConstParameter> b = gpt::parameters(other);
  EXPECT_EQ(a.size(), b.size());
  double largest = 0.0;
  for (const gpt::ConstParameter& p : a)
    largest = std::max(largest, arma::abs(*p.value).max());
  Worst worst;
  for (std::size_t k = 0; k < a.size() && k < b.size(); ++k) {
    EXPECT_EQ(a[k].name, b[k].name);
    EXPECT_EQ(arma::size(*a[k].value), arma::size(*b[k].value)) << a[k].name;
    const double scale =
        zero_in_exact_arithmetic(a[k].name) ? largest : arma::abs(*a[k].value).max();
    const double relative = arma::abs(*a[k].value - *b[k].value).max() / scale;
    if (relative > worst.relative)
      worst = {relative, a[k].name};
  }
  return worst;
}

void expect_equal_steps(const gpt::TransformerWeights& w, const gpt::PackedBatch& batch) {
  const gpt::TransformerStep reference = gpt::transformer_step(w, batch);
  gpt::Float32Step float32(w.config);
  const gpt::TransformerStep step = float32.run(w, batch);
  EXPECT_NEAR(step.loss, reference.loss, kLossTolerance * reference.loss);
  EXPECT_TRUE(step.logits.is_empty());
  const Worst worst = worst_difference(reference.gradients, step.gradients);
  EXPECT_LE(worst.relative, kGradientTolerance) << worst.name;
}

TEST(Float32Step, EqualsTheReferenceStepOnARandomModel) {
  const gpt::TransformerConfig c = small_config();
  expect_equal_steps(attn_test::random_model(c, 41), ragged_batch(c.vocabulary, c.max_length));
}

TEST(Float32Step, EqualsTheReferenceStepWithSinusoidalPositionsAndWithout) {
  for (const gpt::Positions positions :
       {gpt::Positions::none, gpt::Positions::sinusoidal, gpt::Positions::learned}) {
    gpt::TransformerConfig c = small_config();
    c.positions = positions;
    SCOPED_TRACE(gpt::to_string(positions));
    expect_equal_steps(attn_test::random_model(c, 43), ragged_batch(c.vocabulary, c.max_length));
  }
}

// Chapter 11's model as training starts it, on a batch of its shape (16 windows of 128).
TEST(Float32Step, EqualsTheReferenceStepAtChapter11sSize) {
  const gpt::TransformerConfig c{.vocabulary = 1024,
                                 .d_model = 96,
                                 .heads = 4,
                                 .layers = 4,
                                 .d_ff = 384,
                                 .max_length = 128,
                                 .positions = gpt::Positions::learned,
                                 .tied_embeddings = true,
                                 .dropout = 0.0};
  const gpt::TrainingSettings settings{.steps = 1, .batch = 16, .seed = 5};
  const gpt::TrainingState state = gpt::start(c, settings);
  attn::numpy::Generator rng = attn::numpy::default_rng(6);
  arma::uvec text(20000);
  for (arma::uword i = 0; i < text.n_elem; ++i)
    text(i) = static_cast<arma::uword>(rng.random() * 1024.0);
  expect_equal_steps(state.weights,
                     gpt::window_batches(text, c.max_length, settings.batch)(0, rng));
}

TEST(Float32Step, LossAloneEqualsTheStepsLoss) {
  const gpt::TransformerConfig c = small_config();
  const gpt::TransformerWeights w = attn_test::random_model(c, 47);
  const gpt::PackedBatch batch = ragged_batch(c.vocabulary, c.max_length);
  gpt::Float32Step float32(c);
  const double loss = float32.loss(w, batch);
  EXPECT_EQ(loss, float32.run(w, batch).loss);
}

// Two threads share the work without a race: they give one thread's numbers up to rounding
// (not bit for bit: a product split in two takes BLAS's kernels for narrower matrices, and the
// loss is summed in another order).
TEST(Float32Step, OneThreadAndTwoAgree) {
  const gpt::TransformerConfig c = small_config();
  const gpt::TransformerWeights w = attn_test::random_model(c, 53);
  const gpt::PackedBatch batch = ragged_batch(c.vocabulary, c.max_length);
  const int threads_before = omp_get_max_threads();
  gpt::Float32Step float32(c);
  omp_set_num_threads(1);
  const gpt::TransformerStep one = float32.run(w, batch);
  omp_set_num_threads(2);
  const gpt::TransformerStep two = float32.run(w, batch);
  omp_set_num_threads(threads_before);
  EXPECT_NEAR(one.loss, two.loss, kLossTolerance * one.loss);
  const Worst worst = worst_difference(one.gradients, two.gradients);
  EXPECT_LE(worst.relative, kGradientTolerance) << worst.name;
}

// A few steps of the whole recipe (warm-up, clipping, decay) in float32 follow float64's.
TEST(Float32Step, TrainsAsTheReferenceDoes) {
  const gpt::TransformerConfig c = small_config();
  gpt::TrainingSettings settings{.steps = 5,
                                 .batch = 4,
                                 .peak_learning_rate = 1e-2,
                                 .final_learning_rate = 1e-3,
                                 .warmup_steps = 2,
                                 .weight_decay = 0.1,
                                 .clip_norm = 1.0,
                                 .evaluate_every = 5,
                                 .seed = 59};
  arma::uvec text(400);
  for (arma::uword i = 0; i < text.n_elem; ++i)
    text(i) = (i * i + 3 * i) % c.vocabulary;
  const gpt::NextBatch batches = gpt::window_batches(text, c.max_length, settings.batch);
  const gpt::Evaluation none = [](const gpt::TransformerWeights&) {
    return gpt::Measurement{};
  };
  gpt::TrainingState reference = gpt::start(c, settings);
  gpt::TrainingState fast = reference;
  gpt::train(reference, settings, batches, none, settings.steps);
  settings.precision = gpt::Precision::float32;
  gpt::train(fast, settings, batches, none, settings.steps);
  ASSERT_EQ(fast.history.size(), reference.history.size());
  for (std::size_t t = 0; t < reference.history.size(); ++t) {
    EXPECT_NEAR(fast.history[t].loss, reference.history[t].loss,
                kLossTolerance * reference.history[t].loss)
        << "step " << t;
    EXPECT_NEAR(fast.history[t].gradient_norm, reference.history[t].gradient_norm,
                kGradientTolerance * reference.history[t].gradient_norm)
        << "step " << t;
  }
  const std::vector<gpt::ConstParameter> a = gpt::parameters(std::as_const(reference.weights));
  const std::vector<gpt::ConstParameter> b = gpt::parameters(std::as_const(fast.weights));
  for (std::size_t k = 0; k < a.size(); ++k) {
    if (!zero_in_exact_arithmetic(a[k].name)) {
      EXPECT_LE(arma::abs(*a[k].value - *b[k].value).max(), kWeightTolerance) << a[k].name;
    }
  }
}

TEST(Float32Step, RefusesWhatOnlyTheReferenceComputes) {
  gpt::TransformerConfig untied = small_config();
  untied.tied_embeddings = false;
  EXPECT_THROW(
      {
        try {
          gpt::Float32Step step(untied);
        } catch (const attn::math::InputError& e) {
          EXPECT_NE(std::string(e.what()).find("not tied"), std::string::npos) << e.what();
          throw;
        }
      },
      attn::math::InputError);
  gpt::TransformerConfig dropping = small_config();
  dropping.dropout = 0.1;
  EXPECT_THROW(gpt::Float32Step step(dropping), attn::math::InputError);
}

TEST(Float32Step, RefusesWeightsOfAnotherModelNamingBoth) {
  const gpt::TransformerConfig c = small_config();
  gpt::TransformerConfig wider = c;
  wider.d_model = 40;
  gpt::Float32Step float32(c);
  try {
    float32.run(attn_test::random_model(wider, 61), ragged_batch(c.vocabulary, c.max_length));
    FAIL() << "no ShapeError";
  } catch (const attn::math::ShapeError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("d = 40"), std::string::npos) << message;
    EXPECT_NE(message.find("d = 32"), std::string::npos) << message;
  }
}

TEST(Float32Step, RefusesATokenOutsideTheVocabularyAndTooLongASentence) {
  const gpt::TransformerConfig c = small_config();
  const gpt::TransformerWeights w = attn_test::random_model(c, 67);
  gpt::Float32Step float32(c);
  gpt::PackedBatch batch = ragged_batch(c.vocabulary, c.max_length);
  batch.targets(3) = c.vocabulary;
  EXPECT_THROW(float32.run(w, batch), attn::math::InputError);
  const gpt::PackedBatch too_long =
      gpt::pack_sentences({arma::regspace<arma::uvec>(0, c.max_length + 1)});
  EXPECT_THROW(float32.run(w, too_long), attn::math::InputError);
}

TEST(Float32Step, RefusesNonFiniteWeights) {
  const gpt::TransformerConfig c = small_config();
  gpt::TransformerWeights w = attn_test::random_model(c, 71);
  w.blocks[1].mlp.W2(3, 2) = std::nan("");
  gpt::Float32Step float32(c);
  EXPECT_THROW(float32.run(w, ragged_batch(c.vocabulary, c.max_length)), attn::math::InputError);
}

}  // namespace
