// The GPT's decoder (attn/gpt/decoder.hpp): continue_text() draws the
// tokens that a whole forward pass over each token's context draws, the context following the
// window rule it documents (a full window restarts on its last max_length / 2 tokens, a long
// prompt is read from its last max_length / 2), one numpy rng.random() per token.
#include <attn/gpt/decoder.hpp>
#include <attn/gpt/forward.hpp>
#include <attn/math/sampling.hpp>
#include <attn/math/validate.hpp>
#include <attn/numpy/numpy_random.hpp>

#include "bad_input.hpp"
#include "tiny_gpt.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace {

namespace gpt = attn::gpt;
using attn_bad_input::ThrowsNaming;

// A vocabulary of 23 tokens, two blocks; its dropout of 0.1 is a training setting: generation
// never drops out.
attn::gpt::TransformerConfig config(arma::uword max_length) {
  return gpt_test::tiny_config(23, max_length, 2);
}

// A model whose distributions are far from uniform: N(0, 1) embeddings and positions.
attn::gpt::TransformerWeights model(arma::uword max_length) {
  attn::numpy::Generator rng = attn::numpy::default_rng(1111);
  attn::gpt::TransformerWeights w = attn::gpt::init_transformer(
      config(max_length), [&](arma::uword r, arma::uword c) { return rng.normal(r, c); });
  w.embedding = rng.normal(w.embedding.n_rows, w.embedding.n_cols);
  w.position_embedding = rng.normal(w.position_embedding.n_rows, w.position_embedding.n_cols);
  return w;
}

// continue_text() recomputed without a cache: before each token, the context is the text from
// `first` on; when it would need a position past the window, `first` moves to the last
// max_length / 2 tokens (a restart); a prompt longer than the window starts there too.
gpt::Continuation recomputed(const attn::gpt::TransformerWeights& w, const arma::uvec& prompt,
                             std::size_t count, const attn::math::SamplingOptions& options,
                             attn::numpy::Generator& rng) {
  const arma::uword window = w.config.max_length, kept = window / 2;
  std::vector<arma::uword> text(prompt.begin(), prompt.end());
  std::size_t first = text.size() > window ? text.size() - kept : 0;
  gpt::Continuation out;
  out.prompt_read = text.size() - first;
  std::vector<arma::uword> drawn;
  for (std::size_t k = 0; k < count; ++k) {
    if (text.size() - first > window) {
      first = text.size() - kept;
      ++out.restarts;
    }
    const arma::uvec context(std::vector<arma::uword>(text.begin() + first, text.end()));
    const arma::mat logits = attn::gpt::sentence_logits(w, context);
    const arma::rowvec p =
        attn::math::next_token_distribution(logits.row(logits.n_rows - 1), options);
    text.push_back(attn::math::sample_token(p, rng.random()));
    drawn.push_back(text.back());
  }
  out.tokens = arma::uvec(drawn);
  return out;
}

void expect_same(const gpt::Continuation& got, const gpt::Continuation& want) {
  EXPECT_TRUE(arma::all(got.tokens == want.tokens) && got.tokens.n_elem == want.tokens.n_elem)
      << "got " << got.tokens.t() << "want " << want.tokens.t();
  EXPECT_EQ(got.restarts, want.restarts);
  EXPECT_EQ(got.prompt_read, want.prompt_read);
}

TEST(ContinueText, DrawsTheTokensAWholeForwardPassDraws) {
  const attn::gpt::TransformerWeights w = model(8);
  const arma::uvec prompt{3, 14, 15, 9};
  for (const attn::math::SamplingOptions& options :
       {attn::math::SamplingOptions{}, attn::math::SamplingOptions{.temperature = 1.7},
        attn::math::SamplingOptions{.temperature = 0.8, .top_k = 5, .top_p = 0.9}}) {
    attn::numpy::Generator rng = attn::numpy::default_rng(2);
    attn::numpy::Generator again = attn::numpy::default_rng(2);
    const gpt::Continuation got = gpt::continue_text(w, prompt, 4, options, rng);
    expect_same(got, recomputed(w, prompt, 4, options, again));
    EXPECT_EQ(got.restarts, 0u);  // 4 + 4 tokens fit in 8 positions
    EXPECT_EQ(got.prompt_read, 4u);
  }
}

TEST(ContinueText, RestartsOnTheLastHalfWindowPastMaxLength) {
  const attn::gpt::TransformerWeights w = model(8);
  const arma::uvec prompt{3, 14, 15};
  attn::numpy::Generator rng = attn::numpy::default_rng(3);
  attn::numpy::Generator again = attn::numpy::default_rng(3);
  const gpt::Continuation got = gpt::continue_text(w, prompt, 20, {}, rng);
  expect_same(got, recomputed(w, prompt, 20, {}, again));
  // Contexts of 3 ... 8 tokens draw the first 6 tokens; each restart keeps 4, so that
  // contexts of 4 ... 8 draw 5 more: 6 + 5 + 5 + 4 = 20 tokens after 3 restarts.
  EXPECT_EQ(got.restarts, 3u);
  EXPECT_EQ(got.tokens.n_elem, 20u);
  // The restart that tokens 21 and on would need is not counted: 6 + 5 = 11 tokens, 1 restart.
  attn::numpy::Generator eleven = attn::numpy::default_rng(3);
  EXPECT_EQ(gpt::continue_text(w, prompt, 11, {}, eleven).restarts, 1u);
}

TEST(ContinueText, AnOddWindowKeepsItsRoundedDownHalf) {
  const attn::gpt::TransformerWeights w = model(7);
  const arma::uvec prompt{1, 2};
  attn::numpy::Generator rng = attn::numpy::default_rng(4);
  attn::numpy::Generator again = attn::numpy::default_rng(4);
  const gpt::Continuation got = gpt::continue_text(w, prompt, 16, {}, rng);
  expect_same(got, recomputed(w, prompt, 16, {}, again));
  // Contexts 2 ... 7 draw 6; restarts keep 3, so contexts 3 ... 7 draw 5: 6 + 5 + 5 = 16.
  EXPECT_EQ(got.restarts, 2u);
}

TEST(ContinueText, ReadsOnlyTheLastHalfWindowOfALongPrompt) {
  const attn::gpt::TransformerWeights w = model(8);
  const arma::uvec prompt{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  attn::numpy::Generator rng = attn::numpy::default_rng(5);
  attn::numpy::Generator again = attn::numpy::default_rng(5);
  const gpt::Continuation got = gpt::continue_text(w, prompt, 9, {}, rng);
  expect_same(got, recomputed(w, prompt, 9, {}, again));
  EXPECT_EQ(got.prompt_read, 4u);
  EXPECT_EQ(got.restarts, 1u);  // contexts 4 ... 8 draw 5 tokens, then 4 ... 7 draw 4
  // What the model did not read cannot change what it writes.
  arma::uvec other = prompt;
  other.head(7).fill(20);
  attn::numpy::Generator same_seed = attn::numpy::default_rng(5);
  EXPECT_TRUE(arma::all(gpt::continue_text(w, other, 9, {}, same_seed).tokens == got.tokens));
  // A prompt of exactly max_length tokens is read whole; the first new token fills nothing.
  attn::numpy::Generator full = attn::numpy::default_rng(6);
  attn::numpy::Generator full_again = attn::numpy::default_rng(6);
  const arma::uvec eight = prompt.head(8);
  const gpt::Continuation whole = gpt::continue_text(w, eight, 3, {}, full);
  expect_same(whole, recomputed(w, eight, 3, {}, full_again));
  EXPECT_EQ(whole.prompt_read, 8u);
  EXPECT_EQ(whole.restarts, 1u);
}

TEST(ContinueText, TakesOneDrawPerTokenSoASeedFixesTheText) {
  const attn::gpt::TransformerWeights w = model(8);
  const arma::uvec prompt{7};
  attn::numpy::Generator a = attn::numpy::default_rng(9);
  attn::numpy::Generator b = attn::numpy::default_rng(9);
  const gpt::Continuation first = gpt::continue_text(w, prompt, 12, {}, a);
  const gpt::Continuation second = gpt::continue_text(w, prompt, 12, {}, b);
  EXPECT_TRUE(arma::all(first.tokens == second.tokens));
  attn::numpy::Generator counted = attn::numpy::default_rng(9);
  for (int k = 0; k < 12; ++k)
    counted.random();
  EXPECT_EQ(a.random(), counted.random()) << "12 tokens, 12 draws";
  attn::numpy::Generator other = attn::numpy::default_rng(10);
  EXPECT_FALSE(arma::all(gpt::continue_text(w, prompt, 12, {}, other).tokens == first.tokens));
  attn::numpy::Generator none = attn::numpy::default_rng(9);
  EXPECT_EQ(gpt::continue_text(w, prompt, 0, {}, none).tokens.n_elem, 0u);
  EXPECT_EQ(none.random(), attn::numpy::default_rng(9).random()) << "no token, no draw";
}

TEST(ContinueText, TemperatureZeroIsGreedy) {
  const attn::gpt::TransformerWeights w = model(8);
  const arma::uvec prompt{4, 8};
  attn::numpy::Generator rng = attn::numpy::default_rng(12);
  const gpt::Continuation got = gpt::continue_text(w, prompt, 14, {.temperature = 0.0}, rng);
  // Each token is the first largest logit of its context, whatever the draws.
  std::vector<arma::uword> text(prompt.begin(), prompt.end());
  std::size_t first = 0;
  for (arma::uword k = 0; k < 14; ++k) {
    if (text.size() - first > 8)
      first = text.size() - 4;
    const arma::mat logits = attn::gpt::sentence_logits(
        w, arma::uvec(std::vector<arma::uword>(text.begin() + first, text.end())));
    text.push_back(logits.row(logits.n_rows - 1).index_max());
    EXPECT_EQ(got.tokens(k), text.back()) << "token " << k;
  }
  attn::numpy::Generator other = attn::numpy::default_rng(13);
  EXPECT_TRUE(arma::all(gpt::continue_text(w, prompt, 14, {.temperature = 0.0}, other).tokens ==
                        got.tokens));
}

TEST(ContinueText, AModelOfOnePositionStillWrites) {
  // max_length 1: the half window kept at a restart is 0 tokens, but a token needs at least
  // the one before it; each token is drawn from the token before it alone.
  const attn::gpt::TransformerWeights w = model(1);
  attn::numpy::Generator rng = attn::numpy::default_rng(14);
  attn::numpy::Generator again = attn::numpy::default_rng(14);
  gpt::Continuation got;
  ASSERT_NO_THROW(got = gpt::continue_text(w, arma::uvec{5}, 4, {}, rng));
  std::vector<arma::uword> text{5};
  for (arma::uword k = 0; k < 4; ++k) {
    const arma::mat logits = attn::gpt::sentence_logits(w, arma::uvec{text.back()});
    text.push_back(attn::math::sample_token(attn::math::next_token_distribution(logits.row(0)),
                                            again.random()));
  }
  ASSERT_EQ(got.tokens.n_elem, 4u);
  for (arma::uword k = 0; k < 4; ++k)
    EXPECT_EQ(got.tokens(k), text[k + 1]) << "token " << k;
}

TEST(ContinueText, RefusesAnEmptyPromptAndATokenOutsideTheVocabulary) {
  const attn::gpt::TransformerWeights w = model(8);
  attn::numpy::Generator rng = attn::numpy::default_rng(15);
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { gpt::continue_text(w, arma::uvec{}, 3, {}, rng); }, "the prompt has no token"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] {
        gpt::continue_text(w, arma::uvec{1, 23}, 3, {}, rng);
      },
      "token 23"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] {
        gpt::continue_text(w, arma::uvec{1, 2}, 3, {.temperature = -1.0}, rng);
      },
      "temperature"));
}

TEST(ContinueText, RefusesATokenOutsideTheVocabularyInTheUnreadPartOfALongPrompt) {
  // The model reads only the last max_length / 2 tokens of a long prompt; the header still
  // promises that a prompt holding a token outside the vocabulary is refused, all of it.
  const attn::gpt::TransformerWeights w = model(8);
  attn::numpy::Generator rng = attn::numpy::default_rng(16);
  const arma::uvec long_prompt{99, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { gpt::continue_text(w, long_prompt, 3, {}, rng); }, "token 99"));
}

// The check the chapters make of their models: every token of a whole window, through the cache,
// against the whole pass over its prefix.
TEST(LargestCacheDifference, IsWithin1e12OverAWholeWindowOfAModelFarFromUniform) {
  const attn::gpt::TransformerWeights w = model(8);
  const arma::uvec text{3, 14, 15, 9, 2, 6, 5, 22};
  const double largest = gpt::largest_cache_difference(w, text);
  EXPECT_GE(largest, 0.0);
  EXPECT_LE(largest, 1e-12);
}

TEST(LargestCacheDifference, RefusesAnEmptyTextATextPastTheContextAndATokenOutside) {
  const attn::gpt::TransformerWeights w = model(8);
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { gpt::largest_cache_difference(w, arma::uvec{}); }, "the text has no token"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { gpt::largest_cache_difference(w, arma::regspace<arma::uvec>(0, 8)); },
      "the model's whole context"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] {
        gpt::largest_cache_difference(w, arma::uvec{1, 23});
      },
      "token 23"));
}

}  // namespace
