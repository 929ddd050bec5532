// Chapter 10's experiment (chapters/10_tiny_transformer/language_model.hpp): the measurements read
// the right rows and columns, training is deterministic (also side by side on several threads), and
// bad settings are refused.
#include <10_tiny_transformer/language_model.hpp>
#include <attn/gpt/forward.hpp>
#include <attn/math/validate.hpp>
#include <attn/numpy/numpy_random.hpp>

#include <gtest/gtest.h>

#include <algorithm>

namespace {

namespace ch10 = attn::ch10;

const attn::gpt::TransformerConfig kSmall{35, 8, 2, 1, 16, 13, attn::gpt::Positions::sinusoidal};

attn::gpt::TransformerWeights random_model() {
  attn::numpy::Generator rng = attn::numpy::default_rng(41);
  attn::gpt::TransformerWeights w = attn::gpt::init_transformer(
      kSmall, [&](arma::uword r, arma::uword c) { return rng.normal(r, c); });
  w.unembedding = rng.normal(w.unembedding.n_rows, w.unembedding.n_cols);  // not near uniform
  return w;
}

bool is_noun(const std::string& w) {
  static const std::vector<std::string> nouns{"cat", "cats",  "dog",   "dogs",   "bird",  "birds",
                                              "fox", "foxes", "horse", "horses", "mouse", "mice"};
  return std::find(nouns.begin(), nouns.end(), w) != nouns.end();
}

TEST(LanguageModel, HeadFocusAveragesEachHeadsWeightsAtTheSlot) {
  const attn::gpt::TransformerWeights model = random_model();
  const std::vector<ch10::Sentence> sentences = ch10::generate(5, 20);
  const std::vector<ch10::HeadFocus> focus =
      ch10::head_focus(model, sentences, [](const ch10::Sentence& s) { return s.verb_slot; });
  ASSERT_EQ(focus.size(), 2u);
  for (arma::uword k = 0; k < 2; ++k) {
    double subject = 0, distractor = 0, self = 0;
    for (const ch10::Sentence& s : sentences) {
      // Find the columns from the words themselves, not from the Sentence's fields.
      const std::vector<std::string> w = ch10::words(s.tokens);
      const auto verb = std::find_if(
          w.begin(), w.end(), [](const std::string& x) { return x == "was" || x == "were"; });
      const arma::uword q = static_cast<arma::uword>(verb - w.begin()) - 1;
      arma::uword second_noun = 0;
      for (arma::uword i = 2; i < w.size() && !second_noun; ++i)
        second_noun = is_noun(w[i]) ? i : 0;
      const arma::mat grid = ch10::attention_grids(model, s)[k];
      subject += grid(q, 1);
      distractor += grid(q, second_noun);
      self += grid(q, q);
    }
    EXPECT_NEAR(focus[k].subject, subject / 20, 1e-15) << "head " << k;
    EXPECT_NEAR(focus[k].distractor, distractor / 20, 1e-15) << "head " << k;
    EXPECT_NEAR(focus[k].self, self / 20, 1e-15) << "head " << k;
    EXPECT_EQ(focus[k].verb, 0.0) << "the word before was/were cannot see it";
  }
}

TEST(LanguageModel, AttentionGridsAreCausalRowsOfWeights) {
  const ch10::Sentence s = ch10::generate(6, 1).front();
  for (const arma::mat& grid : ch10::attention_grids(random_model(), s)) {
    ASSERT_EQ(grid.n_rows, s.tokens.n_elem - 1);
    EXPECT_LE(arma::abs(arma::sum(grid, 1) - 1.0).max(), 1e-14);
    EXPECT_EQ(arma::accu(arma::trimatu(grid, 1)), 0.0);  // nothing after the query
  }
}

TEST(LanguageModel, PackedLogitsEqualEachSentenceAlone) {
  const attn::gpt::TransformerWeights model = random_model();
  const std::vector<ch10::Sentence> sentences = ch10::generate(7, 60);  // more than one pack of 50
  const std::vector<arma::mat> logits = ch10::next_word_logits(model, sentences);
  ASSERT_EQ(logits.size(), 60u);
  for (const std::size_t k : {0, 49, 50, 59}) {
    const arma::uvec& t = sentences[k].tokens;
    EXPECT_LE(arma::abs(logits[k] - attn::gpt::sentence_logits(model, t.head(t.n_elem - 1))).max(),
              1e-12);
  }
}

TEST(LanguageModel, TrainingIsDeterministicAlsoSideBySide) {
  const std::vector<ch10::Sentence> train = ch10::generate(8, 64), held = ch10::generate(9, 16);
  const ch10::TrainingSettings settings{12, 8, 1e-2, 4, 3};
  const ch10::Trained a = ch10::train(kSmall, settings, train, held);
  const ch10::Trained b = ch10::train(kSmall, settings, train, held);
  EXPECT_TRUE(arma::approx_equal(a.model.embedding, b.model.embedding, "absdiff", 0.0));
  EXPECT_EQ(a.after.loss, b.after.loss);
  EXPECT_EQ(a.curves.steps.n_elem, 4u);  // 0, 4, 8, 12
  EXPECT_LT(a.after.loss, a.before.loss);
  ch10::TrainingSettings other = settings;
  other.seed = 4;
  const std::vector<ch10::Evaluation> both =
      ch10::train_side_by_side({{kSmall, settings}, {kSmall, other}}, train, held);
  EXPECT_EQ(both[0].loss, a.after.loss);
  EXPECT_EQ(both[1].loss, ch10::train(kSmall, other, train, held).after.loss);
  EXPECT_NE(both[0].loss, both[1].loss);
}

TEST(LanguageModel, RefusesSettingsThatCannotTrain) {
  const std::vector<ch10::Sentence> train = ch10::generate(8, 4);
  EXPECT_THROW(ch10::train(kSmall, {0, 2, 1e-2, 1, 1}, train, train), attn::math::InputError);
  EXPECT_THROW(ch10::train(kSmall, {2, 2, 0.0, 1, 1}, train, train), attn::math::InputError);
  EXPECT_THROW(ch10::train(kSmall, {2, 2, 1e-2, 1, 1}, train, {}), attn::math::InputError);
  EXPECT_THROW(ch10::train_side_by_side({{kSmall, {0, 2, 1e-2, 1, 1}}}, train, train),
               attn::math::InputError);
}

}  // namespace
