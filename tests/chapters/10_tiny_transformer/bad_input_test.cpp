// Bad input to chapter 10's experiment: its language and its language model name what is wrong
// (a NaN score, a count that does not fit, a sentence or slot they cannot use, a learning rate
// that is not finite) instead of reading past an end.
#include <10_tiny_transformer/agreement.hpp>
#include <10_tiny_transformer/language_model.hpp>
#include <attn/gpt/forward.hpp>
#include <attn/math/validate.hpp>
#include <attn/numpy/numpy_random.hpp>

#include "bad_input.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>

namespace {

namespace ch10 = attn::ch10;

using attn_bad_input::kInf;
using attn_bad_input::kNaN;
using attn_bad_input::ThrowsNaming;

TEST(BadInput, AccuracyRejectsNaNScoresButTakesInfinities) {
  const std::vector<ch10::Sentence> sentences = ch10::generate(3, 2);
  std::vector<arma::mat> scores = ch10::bigram_scores(ch10::bigram_counts(sentences), sentences);
  scores[1](sentences[1].verb_slot, ch10::word_id("was")) = kNaN;
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>([&] { ch10::accuracy(sentences, scores); },
                                                   "sentence 1 hold a NaN"));
  // −∞ is a score like any other: the log-probability of a word never seen.
  for (std::size_t k = 0; k < sentences.size(); ++k) {
    scores[k].fill(-kInf);
    const bool plural = sentences[k].subject_plural;
    scores[k](sentences[k].verb_slot, ch10::word_id(plural ? "were" : "was")) = 0.0;
    scores[k](sentences[k].pronoun_slot, ch10::word_id(plural ? "they" : "it")) = 0.0;
  }
  EXPECT_EQ(ch10::accuracy(sentences, scores).all, 1.0);
  ch10::Sentence late = sentences[0];
  late.pronoun_slot = 40;  // used to read past the scores' last row
  EXPECT_TRUE(
      ThrowsNaming<attn::math::InputError>([&] { ch10::accuracy({late}, {scores[0]}); }, "slots"));
  EXPECT_EQ(ch10::accuracy({}, {}).all, 0.0);  // documented: no slot, 0
}

TEST(BadInput, BigramFunctionsCheckTheirCounts) {
  const std::vector<ch10::Sentence> sentences = ch10::generate(5, 3);
  arma::mat counts = ch10::bigram_counts(sentences);
  EXPECT_TRUE(ThrowsNaming<attn::math::ShapeError>(
      [&] { ch10::bigram_loss(arma::mat(2, 2), sentences); }, "counts is (2 × 2)"));
  counts(0, 1) = kNaN;  // the loss used to be NaN
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>([&] { ch10::bigram_loss(counts, sentences); },
                                                   "counts has a non-finite entry"));
  counts(0, 1) = -3.0;
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>([&] { ch10::bigram_scores(counts, sentences); },
                                                   "negative count -3"));
  ch10::Sentence unknown = sentences[0];
  unknown.tokens(2) = 99;
  EXPECT_TRUE(ThrowsNaming<std::out_of_range>([&] { ch10::bigram_counts({unknown}); }, "id 99"));
  ch10::Sentence empty;
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { ch10::bigram_scores(ch10::bigram_counts(sentences), {empty}); }, "no token"));
  EXPECT_EQ(ch10::bigram_loss(ch10::bigram_counts(sentences), {}), 0.0);  // documented: no word, 0
  EXPECT_EQ(ch10::loss_floor({}), 0.0);
}

attn::gpt::TransformerWeights small_model() {
  const attn::gpt::TransformerConfig config{35, 8, 2, 1, 16, 13, attn::gpt::Positions::sinusoidal};
  attn::numpy::Generator rng = attn::numpy::default_rng(41);
  return attn::gpt::init_transformer(
      config, [&](arma::uword r, arma::uword c) { return rng.normal(r, c); });
}

TEST(BadInput, LanguageModelNamesSentencesAndSlotsItCannotUse) {
  const attn::gpt::TransformerWeights model = small_model();
  ch10::Sentence one;
  one.tokens = {ch10::word_id("the")};  // no input word before its last
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>([&] { ch10::attention_grids(model, one); },
                                                   "attention_grids: a sentence of 1 token(s)"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { ch10::attention_figure("f", model, ch10::Sentence{}); },
      "attention_figure: a sentence of 0 token(s)"));
  const std::vector<ch10::Sentence> sentences = ch10::generate(2, 2);
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] {
        ch10::head_focus(model, sentences, [](const ch10::Sentence&) { return arma::uword{99}; });
      },
      "slot 99"));
  attn::gpt::TransformerWeights broken = model;
  broken.unembedding(0, 0) = kNaN;  // the logits, and so the loss, used to be NaN
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>([&] { ch10::evaluate(broken, sentences); },
                                                   "unembedding"));
  EXPECT_TRUE(ch10::next_word_logits(model, {}).empty());
}

TEST(BadInput, TrainRejectsANaNOrInfiniteLearningRate) {
  const std::vector<ch10::Sentence> sentences = ch10::generate(2, 2);
  const attn::gpt::TransformerConfig config{35, 8, 2, 1, 16, 13, attn::gpt::Positions::sinusoidal};
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] {
        ch10::train(config, {1, 1, kNaN, 1, 0}, sentences, sentences);
      },
      "learning rate"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] {
        ch10::train(config, {1, 1, kInf, 1, 0}, sentences, sentences);
      },
      "learning rate inf"));
}

}  // namespace
