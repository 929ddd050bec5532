// Bad numbers, defined behaviour (issue 17), book layer: text writes NaN and the infinities as
// Python writes them, figures and walks are drawn from finite numbers only, and the chapter
// experiments name what is wrong with their input instead of reading past an end.
#include <attn/agreement.hpp>
#include <attn/article_check.hpp>
#include <attn/examples.hpp>
#include <attn/grid_text.hpp>
#include <attn/language_model.hpp>
#include <attn/numpy_random.hpp>
#include <attn/plot.hpp>
#include <attn/validate.hpp>
#include <attn/walkthrough.hpp>

#include "bad_input.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>

namespace {

namespace ag = attn::agreement;

using attn_bad_input::kInf;
using attn_bad_input::kNaN;
using attn_bad_input::ThrowsNaming;

TEST(BadInput, FixedWritesNaNAndInfinitiesAsPythonDoes) {
  EXPECT_EQ(attn::fixed(kNaN), "nan");
  EXPECT_EQ(attn::fixed(-kNaN, 3), "nan");  // Python prints no sign on a NaN
  EXPECT_EQ(attn::fixed(kInf), "inf");
  EXPECT_EQ(attn::fixed(-kInf, 1), "-inf");
  EXPECT_EQ(attn::vector_text(arma::rowvec{kNaN, 0.5}), "[nan, 0.50]");
  EXPECT_EQ(attn::vector_text(arma::rowvec()), "[]");
  EXPECT_NE(attn::grid_table({"a"}, {"b", "c"}, arma::mat{{kNaN, -kInf}}).find("     nan    -inf"),
            std::string::npos);
}

TEST(BadInput, TextRejectsNegativeDecimals) {
  EXPECT_TRUE(ThrowsNaming<attn::InputError>([] { attn::fixed(1.0, -1); }, "decimals = -1"));
  EXPECT_TRUE(ThrowsNaming<attn::InputError>([] { attn::vector_text(arma::rowvec{1.0}, -2); },
                                             "decimals = -2"));
  EXPECT_TRUE(ThrowsNaming<attn::InputError>(
      [] { attn::grid_table({"a"}, {"b"}, arma::mat(1, 1, arma::fill::ones), -1); }, "grid_table: decimals"));
}

TEST(BadInput, GridFromTableNamesACellThatIsNotAFiniteNumber) {
  // std::stod read "nan" as NaN and "0.5x" as 0.5, silently.
  EXPECT_TRUE(ThrowsNaming<attn::InputError>([] { attn::grid_from_table("  a  b\n  a  0.5  nan\n"); },
                                             "\"nan\" in row 0, column 1"));
  EXPECT_TRUE(ThrowsNaming<attn::InputError>(
      [] { attn::grid_from_table("  a  b\n  a  0.5  0.5\n  b  -inf  1\n"); }, "\"-inf\" in row 1, column 0"));
  EXPECT_TRUE(ThrowsNaming<attn::InputError>([] { attn::grid_from_table("  a\n  a  0.5x\n"); },
                                             "\"0.5x\""));
  EXPECT_TRUE(ThrowsNaming<attn::InputError>([] { attn::grid_from_table(""); }, "no header"));
  EXPECT_TRUE(ThrowsNaming<attn::InputError>([] { attn::grid_from_table("  a  b\n\n"); }, "no rows"));
}

TEST(BadInput, CellLabelsNameARowOutOfRange) {
  EXPECT_TRUE(ThrowsNaming<std::out_of_range>([] { attn::cell_labels({}, 0); },
                                              "row 0 is not one of the 0 tokens"));
  EXPECT_TRUE(ThrowsNaming<std::out_of_range>([] { attn::cell_labels({"a", "b"}, 2); }, "row 2"));
}

TEST(BadInput, ArticleChecksFailOnInfinityAndNameBadDecimals) {
  attn::ArticleChecks checks;
  checks.number("x", kInf, 2, kInf);  // equal after rounding, but no infinity matches
  EXPECT_FALSE(checks.all_passed());
  attn::ArticleChecks loose;
  loose.approximately("y", 0.6, kNaN, 0.6);
  EXPECT_FALSE(loose.all_passed());
  attn::ArticleChecks fine;
  EXPECT_TRUE(ThrowsNaming<std::invalid_argument>([&] { fine.number("z", 0.5, -1, 0.5); },
                                                  "decimals = -1"));
}

TEST(BadInput, AccuracyRejectsNaNScoresButTakesInfinities) {
  const std::vector<ag::Sentence> sentences = ag::generate(3, 2);
  std::vector<arma::mat> scores = ag::bigram_scores(ag::bigram_counts(sentences), sentences);
  scores[1](sentences[1].verb_slot, ag::word_id("was")) = kNaN;
  EXPECT_TRUE(ThrowsNaming<attn::InputError>([&] { ag::accuracy(sentences, scores); },
                                             "sentence 1 hold a NaN"));
  // −∞ is a score like any other: the log-probability of a word never seen.
  for (std::size_t k = 0; k < sentences.size(); ++k) {
    scores[k].fill(-kInf);
    const bool plural = sentences[k].subject_plural;
    scores[k](sentences[k].verb_slot, ag::word_id(plural ? "were" : "was")) = 0.0;
    scores[k](sentences[k].pronoun_slot, ag::word_id(plural ? "they" : "it")) = 0.0;
  }
  EXPECT_EQ(ag::accuracy(sentences, scores).all, 1.0);
  ag::Sentence late = sentences[0];
  late.pronoun_slot = 40;  // used to read past the scores' last row
  EXPECT_TRUE(ThrowsNaming<attn::InputError>(
      [&] { ag::accuracy({late}, {scores[0]}); }, "slots"));
  EXPECT_EQ(ag::accuracy({}, {}).all, 0.0);  // documented: no slot, 0
}

TEST(BadInput, BigramFunctionsCheckTheirCounts) {
  const std::vector<ag::Sentence> sentences = ag::generate(5, 3);
  arma::mat counts = ag::bigram_counts(sentences);
  EXPECT_TRUE(ThrowsNaming<attn::ShapeError>([&] { ag::bigram_loss(arma::mat(2, 2), sentences); },
                                             "counts is (2 × 2)"));
  counts(0, 1) = kNaN;  // the loss used to be NaN
  EXPECT_TRUE(ThrowsNaming<attn::InputError>([&] { ag::bigram_loss(counts, sentences); },
                                             "counts has a non-finite entry"));
  counts(0, 1) = -3.0;
  EXPECT_TRUE(ThrowsNaming<attn::InputError>([&] { ag::bigram_scores(counts, sentences); },
                                             "negative count -3"));
  ag::Sentence unknown = sentences[0];
  unknown.tokens(2) = 99;
  EXPECT_TRUE(ThrowsNaming<std::out_of_range>([&] { ag::bigram_counts({unknown}); }, "id 99"));
  ag::Sentence empty;
  EXPECT_TRUE(ThrowsNaming<attn::InputError>(
      [&] { ag::bigram_scores(ag::bigram_counts(sentences), {empty}); }, "no token"));
  EXPECT_EQ(ag::bigram_loss(ag::bigram_counts(sentences), {}), 0.0);  // documented: no word, 0
  EXPECT_EQ(ag::loss_floor({}), 0.0);
}

TEST(BadInput, RandomSentenceNamesABadSetup) {
  EXPECT_TRUE(ThrowsNaming<std::invalid_argument>(
      [] { attn::examples::random_sentence("1", "a b", {8, 4, 4, kNaN}); }, "weight_scale = nan"));
  EXPECT_TRUE(ThrowsNaming<std::invalid_argument>(
      [] { attn::examples::random_sentence("1", "a b", {8, 0, 4, 0.5}); }, "d_k = 0"));
}

TEST(BadInput, TokenWalkRejectsNonFiniteNumbers) {
  const attn::examples::NimbusThread t = attn::examples::nimbus_thread();
  const attn::QKV qkv = attn::project(t.embeddings, t.projections);
  attn::Attention a = attn::scaled_dot_product_attention(qkv.Q, qkv.K, qkv.V);
  a.weights(1, 2) = kNaN;  // would have been written out as "nan"
  EXPECT_TRUE(ThrowsNaming<attn::InputError>(
      [&] { attn::token_walk(t.tokens, t.embeddings, t.projections, a, 1); }, "attention.weights"));
  a = attn::scaled_dot_product_attention(qkv.Q, qkv.K, qkv.V);
  arma::mat X = t.embeddings;
  X(0, 1) = kInf;
  EXPECT_TRUE(ThrowsNaming<attn::InputError>(
      [&] { attn::token_walks(t.tokens, X, t.projections, a); }, "X has a non-finite entry inf"));
  a.output.shed_row(5);  // used to be read past its end
  EXPECT_TRUE(ThrowsNaming<attn::ShapeError>(
      [&] { attn::walk_through(t.tokens, t.embeddings, t.projections, a, 5); }, "output (5 × 2)"));
}

TEST(BadInput, FiguresAreDrawnFromFiniteNumbersOnly) {
  std::ostringstream out, log;
  attn::Plotter plots({false, "unused", false}, out, log);  // checks run before "is it active?"
  attn::Heatmap h{"f", "", {"a", "b"}, {"c"}, arma::colvec{0.5, kNaN}};
  EXPECT_TRUE(ThrowsNaming<attn::InputError>([&] { plots.heatmap(h); },
                                             "figure f: panel 0 has a non-finite entry nan"));
  h.queries.clear();
  h.keys.clear();
  h.values.reset();
  EXPECT_TRUE(ThrowsNaming<attn::InputError>([&] { plots.heatmap(h); }, "panel 0 is empty"));
  const attn::LinePlot lines{"g", "", "x", "y", arma::rowvec{1.0, kInf}, {}};
  EXPECT_TRUE(ThrowsNaming<attn::InputError>([&] { plots.lines(lines); }, "figure g: x"));
  const attn::BarChart bars{"b", "", {"a", "b"}, {{"before", arma::rowvec{0.1, kInf}, "red"}}, "w"};
  EXPECT_TRUE(ThrowsNaming<attn::InputError>([&] { plots.bars(bars); }, "series before"));
  // A NaN is a bar that does not apply: documented, and not an error.
  const attn::BarChart gap{"b", "", {"a", "b"}, {{"before", arma::rowvec{0.1, kNaN}, "red"}}, "w"};
  EXPECT_NO_THROW(plots.bars(gap));
  const attn::VectorPicture arrows{"v", "", {{"q", arma::rowvec{-kInf, 1.0}, "red"}}};
  EXPECT_TRUE(ThrowsNaming<attn::InputError>([&] { plots.vectors(arrows); }, "arrow q"));
  // Documented results of the colour helpers.
  EXPECT_EQ(attn::weight_colour(kInf), attn::weight_colour(1.0));
  EXPECT_EQ(attn::weight_colour(-kInf), attn::weight_colour(0.0));
  EXPECT_FALSE(attn::dark_weight(kNaN));
  EXPECT_TRUE(attn::tick_labels(0, 3).empty());
}

attn::TransformerWeights small_model() {
  const attn::TransformerConfig config{35, 8, 2, 1, 16, 13, true};
  attn::numpy::Generator rng = attn::numpy::default_rng(41);
  return attn::init_transformer(config, [&](arma::uword r, arma::uword c) { return rng.normal(r, c); });
}

TEST(BadInput, LanguageModelNamesSentencesAndSlotsItCannotUse) {
  const attn::TransformerWeights model = small_model();
  ag::Sentence one;
  one.tokens = {ag::word_id("the")};  // no input word before its last
  EXPECT_TRUE(ThrowsNaming<attn::InputError>([&] { ag::attention_grids(model, one); },
                                             "attention_grids: a sentence of 1 token(s)"));
  EXPECT_TRUE(ThrowsNaming<attn::InputError>([&] { ag::attention_figure("f", model, ag::Sentence{}); },
                                             "attention_figure: a sentence of 0 token(s)"));
  const std::vector<ag::Sentence> sentences = ag::generate(2, 2);
  EXPECT_TRUE(ThrowsNaming<attn::InputError>(
      [&] { ag::head_focus(model, sentences, [](const ag::Sentence&) { return arma::uword{99}; }); },
      "slot 99"));
  attn::TransformerWeights broken = model;
  broken.unembedding(0, 0) = kNaN;  // the logits, and so the loss, used to be NaN
  EXPECT_TRUE(ThrowsNaming<attn::InputError>([&] { ag::evaluate(broken, sentences); }, "unembedding"));
  EXPECT_TRUE(ag::next_word_logits(model, {}).empty());
}

TEST(BadInput, TrainRejectsANaNOrInfiniteLearningRate) {
  const std::vector<ag::Sentence> sentences = ag::generate(2, 2);
  const attn::TransformerConfig config{35, 8, 2, 1, 16, 13, true};
  EXPECT_TRUE(ThrowsNaming<attn::InputError>(
      [&] { ag::train(config, {1, 1, kNaN, 1, 0}, sentences, sentences); }, "learning rate"));
  EXPECT_TRUE(ThrowsNaming<attn::InputError>(
      [&] { ag::train(config, {1, 1, kInf, 1, 0}, sentences, sentences); }, "learning rate inf"));
}

}  // namespace
