// Chapter 11's training step against PyTorch itself, in float64
// (tests/data/generate_gpt_fixtures.py, torch 2.6): a small GPT (tied embeddings, learned
// positions, dropout off) built from PyTorch's modules, trained three steps with
// loss.backward(), torch.nn.utils.clip_grad_norm_, torch.optim.AdamW (weight decay on the block
// matrices only) and a SequentialLR of LinearLR and CosineAnnealingLR. Our transformer_step,
// clip_grad_norm, learning_rate and AdamW, composed as chapter 11's training loop composes them,
// give the same loss, logits, norm, learning rate and every parameter after every step within
// 1e-10; the largest differences are recorded as test properties (--gtest_output=xml shows
// them). One exception, which is arithmetic and not a disagreement: the key bias b_K.
#include <attn/gpt/forward.hpp>
#include <attn/gpt/trainer.hpp>
#include <attn/math/optimizer.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "fixture_blocks.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

constexpr double kTorch = 1e-10;

// The key bias adds q_i · b_K to every score of row i, which softmax takes away again: its
// gradient is 0 in exact arithmetic, and what either side computes is rounding, about 1e-16
// where the other gradients are about 1. AdamW divides it by its own square root plus ε, so
// each step moves b_K by up to η·|g|/ε, rounding times 1e6 here: both sides' b_K wander by
// about 1e-11 a step, independently. So b_K is held to what noise can do: a gradient below
// kZeroGradient, and over the steps a drift of at most steps · η_max · kZeroGradient / ε
// (3e-9) from torch's. (Measured: gradients up to 1.2e-16, b_K within 1e-10 of torch's; every
// other parameter within 1e-14.)
constexpr double kZeroGradient = 1e-15;

bool is_key_bias(const std::string& name) {
  return name.ends_with(".attention.b_K");
}

const std::map<std::string, arma::mat>& blocks() {
  static const auto b = attn_test::fixture_blocks("torch_gpt.txt");
  return b;
}

arma::mat at(const std::string& name) {
  return attn_test::fixture_block("torch_gpt.txt", name);
}

// The largest difference, or infinity if the shapes differ (which fails every bound).
double gap(const arma::mat& ours, const arma::mat& theirs) {
  if (arma::size(ours) != arma::size(theirs))
    return std::numeric_limits<double>::infinity();
  return arma::abs(ours - theirs).max();
}

// Chapter 11's model: the fixture's sizes, learned positions, tied embeddings, no dropout; the
// first run's weights, or with `run` = "frozen " the parameter groups' run's.
attn::gpt::TransformerWeights torch_weights(const std::string& run = "") {
  const arma::mat c = at("config");
  attn::gpt::TransformerWeights w;
  w.config.vocabulary = static_cast<arma::uword>(c(0));
  w.config.d_model = static_cast<arma::uword>(c(1));
  w.config.heads = static_cast<arma::uword>(c(2));
  w.config.layers = static_cast<arma::uword>(c(3));
  w.config.d_ff = static_cast<arma::uword>(c(4));
  w.config.max_length = static_cast<arma::uword>(c(5));
  w.config.positions = attn::gpt::Positions::learned;
  w.config.tied_embeddings = true;
  w.config.dropout = 0.0;
  w.blocks.resize(w.config.layers);
  for (attn::gpt::BlockWeights& b : w.blocks)
    b.attention.heads = w.config.heads;
  for (attn::gpt::Parameter& p : attn::gpt::parameters(w))
    *p.value = at(run + "weight " + p.name);
  return w;
}

attn::gpt::PackedBatch torch_batch(const std::string& run = "") {
  std::vector<arma::uvec> windows;
  for (int k = 0; blocks().count(run + "window " + std::to_string(k)) != 0; ++k)
    windows.push_back(arma::conv_to<arma::uvec>::from(at(run + "window " + std::to_string(k))));
  return attn::gpt::pack_sentences(windows);
}

attn::math::WarmupCosine torch_schedule() {
  const arma::mat s = at("schedule");
  return {.peak = s(0),
          .minimum = s(1),
          .warmup_steps = static_cast<std::int64_t>(s(2)),
          .total_steps = static_cast<std::int64_t>(s(3)),
          .start_factor = s(4)};
}

}  // namespace

TEST(TorchGpt, DecayFlagsAreTorchsParameterGroups) {
  attn::gpt::TransformerWeights w = torch_weights();
  const std::vector<attn::gpt::Parameter> parameters = attn::gpt::parameters(w);
  const std::vector<bool> decays = attn::gpt::decay_flags(w);
  const arma::mat theirs = at("decays");
  ASSERT_EQ(theirs.n_elem, parameters.size());
  for (std::size_t i = 0; i < parameters.size(); ++i)
    EXPECT_EQ(decays[i], theirs(i) != 0.0) << parameters[i].name;
}

TEST(TorchGpt, ThreeTrainingStepsEqualTorchs) {
  const arma::mat o = at("optimiser");
  const double beta1 = o(0), beta2 = o(1), epsilon = o(2), decay = o(3), max_norm = o(4);
  const auto steps = static_cast<int>(o(5));
  attn::gpt::TransformerWeights weights = torch_weights();
  const attn::gpt::PackedBatch batch = torch_batch();
  const attn::math::WarmupCosine schedule = torch_schedule();
  attn::math::AdamW optimizer(attn::gpt::decay_flags(weights), decay, beta1, beta2, epsilon);
  const double key_bias_tolerance = steps * schedule.peak * kZeroGradient / epsilon;
  double loss_gap = 0.0, logits_gap = 0.0, norm_gap = 0.0, rate_gap = 0.0, parameter_gap = 0.0,
         key_bias_gap = 0.0, key_bias_gradient = 0.0;
  std::string widest;  // the parameter and step of parameter_gap
  std::vector<bool> clipped;
  for (int t = 0; t < steps; ++t) {
    const std::string step = "step " + std::to_string(t) + " ";
    // the GPT trainer's step (lib/gpt/src/trainer.cpp), without dropout
    attn::gpt::TransformerStep result = attn::gpt::transformer_step(weights, batch);
    std::vector<arma::mat> gradients;
    for (const attn::gpt::Parameter& g : attn::gpt::parameters(result.gradients)) {
      gradients.push_back(*g.value);
      if (is_key_bias(g.name)) {
        const double largest = arma::abs(*g.value).max();
        EXPECT_LE(largest, kZeroGradient) << step << "gradient " << g.name << " is not rounding";
        key_bias_gradient = std::max(key_bias_gradient, largest);
      }
    }
    const double norm = attn::math::clip_grad_norm(gradients, max_norm);
    const double rate = attn::math::learning_rate(schedule, t);
    std::vector<arma::mat*> parameters;
    for (const attn::gpt::Parameter& p : attn::gpt::parameters(weights))
      parameters.push_back(p.value);
    optimizer.step(parameters, gradients, rate);

    const double loss_difference = std::abs(result.loss - at(step + "loss")(0));
    EXPECT_LE(loss_difference, kTorch) << step << "loss: ours " << result.loss;
    const double logits_difference = gap(result.logits, at(step + "logits"));
    EXPECT_LE(logits_difference, kTorch) << step << "logits";
    const double norm_difference = std::abs(norm - at(step + "norm")(0));
    EXPECT_LE(norm_difference, kTorch) << step << "norm before clipping: ours " << norm;
    const double rate_difference = std::abs(rate - at(step + "learning rate")(0));
    EXPECT_LE(rate_difference, kTorch) << step << "learning rate: ours " << rate;
    loss_gap = std::max(loss_gap, loss_difference);
    logits_gap = std::max(logits_gap, logits_difference);
    norm_gap = std::max(norm_gap, norm_difference);
    rate_gap = std::max(rate_gap, rate_difference);
    clipped.push_back(norm > max_norm);
    for (const attn::gpt::Parameter& p : attn::gpt::parameters(weights)) {
      const double difference = gap(*p.value, at(step + "parameter " + p.name));
      if (is_key_bias(p.name)) {
        EXPECT_LE(difference, key_bias_tolerance)
            << step << "parameter " << p.name << " after the update";
        key_bias_gap = std::max(key_bias_gap, difference);
        continue;
      }
      EXPECT_LE(difference, kTorch) << step << "parameter " << p.name << " after the update";
      if (difference > parameter_gap) {
        parameter_gap = difference;
        widest = step + p.name;
      }
    }
  }
  // The fixture clips the gradient on steps 0 and 2 and not on step 1.
  EXPECT_EQ(clipped, (std::vector<bool>{true, false, true}));
  RecordProperty("loss_gap", fmt::format("{:.2e}", loss_gap));
  RecordProperty("logits_gap", fmt::format("{:.2e}", logits_gap));
  RecordProperty("norm_gap", fmt::format("{:.2e}", norm_gap));
  RecordProperty("learning_rate_gap", fmt::format("{:.2e}", rate_gap));
  RecordProperty("parameter_gap", fmt::format("{:.2e} ({})", parameter_gap, widest));
  RecordProperty("key_bias_gap", fmt::format("{:.2e}", key_bias_gap));
  RecordProperty("key_bias_gradient", fmt::format("{:.2e}", key_bias_gradient));
}

// Fine-tuning's parameter groups against PyTorch's: the fixture's second run freezes the
// embedding, the positions and block 0 (requires_grad=False) and trains block 1 at half the
// rate with weight decay 0.05 on its matrices, the final norm as before, clipped at a norm of
// its own. attn::gpt::train()
// with the same ParameterGroup list, step by step: the frozen parameters bit-identical to their
// start, every trained one within 1e-10 of torch's after each step (b_K, whose gradient is
// rounding, within the drift rounding allows), and the loss and the clipped norm too.
TEST(TorchGpt, ParameterGroupsTrainAsTorchsWithFrozenParameters) {
  const arma::mat o = at("optimiser");
  const arma::mat groups = at("frozen groups");
  const attn::math::WarmupCosine schedule = torch_schedule();
  const attn::gpt::TrainingSettings settings{
      .steps = static_cast<std::int64_t>(o(5)),
      .batch = 3,
      .peak_learning_rate = schedule.peak,
      .final_learning_rate = schedule.minimum,
      .warmup_steps = schedule.warmup_steps,
      .weight_decay = o(3),
      .beta1 = o(0),
      .beta2 = o(1),
      .clip_norm = groups(2),
      .evaluate_every = 1000,
      .groups = {{.prefix = "embedding", .frozen = true},
                 {.prefix = "position_embedding", .frozen = true},
                 {.prefix = "blocks.0.", .frozen = true},
                 {.prefix = "blocks.1.", .rate_factor = groups(0), .weight_decay = groups(1)}}};
  ASSERT_EQ(settings.steps, schedule.total_steps);
  ASSERT_EQ(attn::gpt::schedule_of(settings).start_factor, schedule.start_factor);
  attn::gpt::TrainingState state = attn::gpt::start(torch_weights("frozen ").config, settings);
  state.weights = torch_weights("frozen ");  // torch's start, not ours (the batch draws nothing)
  const attn::gpt::TransformerWeights start = state.weights;
  const attn::gpt::PackedBatch batch = torch_batch("frozen ");
  const attn::gpt::NextBatch same = [&batch](std::int64_t, attn::numpy::Generator&) {
    return batch;
  };
  const attn::gpt::Evaluation none = [](const attn::gpt::TransformerWeights&, attn::gpt::Step&) {
    return attn::gpt::Measurement{};
  };
  const double key_bias_tolerance = settings.steps * schedule.peak * kZeroGradient / o(2);
  std::size_t frozen = 0;
  double parameter_gap = 0.0;
  std::vector<bool> clipped;
  for (std::int64_t t = 0; t < settings.steps; ++t) {
    attn::gpt::train(state, settings, same, none, t + 1);
    const std::string step = "frozen step " + std::to_string(t) + " ";
    EXPECT_LE(std::abs(state.history.back().loss - at(step + "loss")(0)), kTorch) << step;
    EXPECT_LE(std::abs(state.history.back().gradient_norm - at(step + "norm")(0)), kTorch)
        << step << "norm of the trained parameters' gradients";
    clipped.push_back(state.history.back().gradient_norm > settings.clip_norm);
    const std::vector<attn::gpt::ConstParameter> before = attn::gpt::parameters(start);
    const std::vector<attn::gpt::Parameter> now = attn::gpt::parameters(state.weights);
    for (std::size_t k = 0; k < now.size(); ++k) {
      const std::string& name = now[k].name;
      const bool is_frozen =
          name == "embedding" || name == "position_embedding" || name.starts_with("blocks.0.");
      if (is_frozen) {
        EXPECT_TRUE(arma::approx_equal(*now[k].value, *before[k].value, "absdiff", 0.0))
            << step << name << " is frozen";
        frozen += t == 0 ? 1 : 0;
      }
      const double difference = gap(*now[k].value, at(step + "parameter " + name));
      EXPECT_LE(difference, is_key_bias(name) ? key_bias_tolerance : kTorch)
          << step << "parameter " << name;
      if (!is_key_bias(name))
        parameter_gap = std::max(parameter_gap, difference);
    }
  }
  EXPECT_EQ(frozen, 2u + 16u);                                 // E, P and block 0's 16 parameters
  EXPECT_EQ(clipped, (std::vector<bool>{true, true, false}));  // the run's clip, tried both ways
  EXPECT_EQ(state.optimizer.first.size(), attn::gpt::parameters(state.weights).size() - frozen);
  RecordProperty("parameter_gap", fmt::format("{:.2e}", parameter_gap));
}
