// Chapter 10's GPT against a model built from PyTorch's modules, in float64
// (tests/data/generate_transformer_fixtures.py): loss, logits and every gradient within 1e-10.
#include <attn/gpt/forward.hpp>
#include <attn/gpt/model.hpp>

#include <gtest/gtest.h>

#include "fixture_blocks.hpp"

#include <string>

namespace {

constexpr double kGradient = 1e-10;

double gap(const arma::mat& ours, const arma::mat& theirs) {
  EXPECT_EQ(ours.n_rows, theirs.n_rows);
  EXPECT_EQ(ours.n_cols, theirs.n_cols);
  return arma::abs(ours - theirs).max();
}

}  // namespace

// Chapter 10's transformer against a model built from PyTorch's modules
// (tests/data/generate_transformer_fixtures.py): one forward and backward pass over a batch of
// three sentences, which PyTorch runs one at a time and we pack into one input.
class TorchTransformer : public ::testing::Test {
 protected:
  static const std::map<std::string, arma::mat>& blocks() {
    static const auto b = attn_test::fixture_blocks("torch_transformer.txt");
    return b;
  }
  static const arma::mat& block(const std::string& name) {
    const auto found = blocks().find(name);
    if (found == blocks().end())
      throw std::runtime_error("torch_transformer.txt has no " + name);
    return found->second;
  }
  static attn::gpt::TransformerWeights weights() {
    const arma::mat c = block("config");
    attn::gpt::TransformerWeights w;
    w.config = {.vocabulary = arma::uword(c(0)),
                .d_model = arma::uword(c(1)),
                .heads = arma::uword(c(2)),
                .layers = arma::uword(c(3)),
                .d_ff = arma::uword(c(4)),
                .max_length = arma::uword(c(5)),
                .positions = attn::gpt::Positions::sinusoidal};
    w.blocks.resize(w.config.layers);
    for (attn::gpt::BlockWeights& b : w.blocks)
      b.attention.heads = w.config.heads;
    for (attn::gpt::Parameter& p : attn::gpt::parameters(w))
      *p.value = block("weight " + p.name);
    return w;
  }
  static attn::gpt::PackedBatch batch() {
    std::vector<arma::uvec> sentences;
    for (int s = 0; blocks().count("sentence " + std::to_string(s)); ++s)
      sentences.push_back(arma::conv_to<arma::uvec>::from(block("sentence " + std::to_string(s))));
    return attn::gpt::pack_sentences(sentences);
  }
};

TEST_F(TorchTransformer, LossAndLogitsEqualPyTorch) {
  const attn::gpt::TransformerStep step = attn::gpt::transformer_step(weights(), batch());
  EXPECT_NEAR(step.loss, block("loss")(0, 0), kGradient);
  EXPECT_LE(gap(step.logits, block("logits")), kGradient);
}

TEST_F(TorchTransformer, EveryGradientEqualsPyTorch) {
  attn::gpt::TransformerStep step = attn::gpt::transformer_step(weights(), batch());
  const std::vector<attn::gpt::Parameter> grads = attn::gpt::parameters(step.gradients);
  EXPECT_EQ(grads.size(),
            5 + 16 * step.gradients.blocks.size());  // E, 16 per block, LN_f, W_U, b_U
  for (const attn::gpt::Parameter& g : grads)
    EXPECT_LE(gap(*g.value, block("gradient " + g.name)), kGradient) << g.name;
}
