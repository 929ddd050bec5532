// The streaming cache (StreamingLLM's): while the text fits, it is the whole forward pass; with
// no sinks, it is the sliding-window model over the whole text; with sinks, a one-layer model's
// cost at each token is the forward pass over exactly the tokens the cache holds, each at its
// place in the cache. Bad shapes and models without a place for a far token are refused.
#include <attn/gpt/forward.hpp>
#include <attn/gpt/streaming.hpp>
#include <attn/gpt/variants.hpp>
#include <attn/math/layers.hpp>
#include <attn/math/validate.hpp>

#include <gtest/gtest.h>

#include "bad_input.hpp"
#include "random_gpt.hpp"

#include <string>

namespace {

namespace gpt = attn::gpt;
using arma::uword;
using attn_bad_input::ThrowsNaming;

// A small model with rotary positions and a context of 6, grouped-query attention to be sure the
// heads find their key/value heads, in float64.
gpt::TransformerConfig rotary_gpt(uword layers) {
  gpt::TransformerConfig c = gpt::with(gpt::Variant::grouped_query, attn_test::small_gpt());
  c.positions = gpt::Positions::rotary;
  c.layers = layers;
  return c;
}

arma::uvec text_of(uword n, uword vocabulary) {
  arma::uvec t(n);
  for (uword i = 0; i < n; ++i)
    t(i) = (7 * i + 3 + i * i) % vocabulary;
  return t;
}

// Each row's cost of the whole forward pass over `tokens`.
arma::vec forward_costs(const gpt::TransformerWeights& w, const arma::uvec& tokens) {
  const arma::mat logits = gpt::sentence_logits(w, tokens.head(tokens.n_elem - 1));
  arma::vec nats(tokens.n_elem - 1);
  for (uword i = 0; i < nats.n_elem; ++i)
    nats(i) = attn::math::cross_entropy(logits.row(i), arma::uvec{tokens(i + 1)}).loss;
  return nats;
}

TEST(Streaming, WhileTheTextFitsItIsTheWholeForwardPass) {
  const gpt::TransformerWeights w = attn_test::random_model(rotary_gpt(2), 61);
  const arma::uvec text = text_of(w.config.max_length + 1, w.config.vocabulary);
  const arma::vec whole = forward_costs(w, text);
  for (const uword sinks : {0, 1, 4}) {
    const arma::vec streamed = gpt::streaming_costs(w, text, {.size = 6, .sinks = sinks});
    EXPECT_LT(arma::abs(streamed - whole).max(), 1e-12) << sinks << " sinks";
  }
}

TEST(Streaming, WithoutSinksItIsTheSlidingWindowModel) {
  gpt::TransformerConfig c = rotary_gpt(2);
  c.max_length = 40;  // RoPE has no table: the same weights read any length
  const gpt::TransformerWeights w = attn_test::random_model(c, 67);
  gpt::TransformerWeights windowed = w;
  windowed.config.sliding_window = 4;
  const arma::uvec text = text_of(30, c.vocabulary);
  const arma::vec streamed = gpt::streaming_costs(w, text, {.size = 4, .sinks = 0});
  EXPECT_LT(arma::abs(streamed - forward_costs(windowed, text)).max(), 1e-12);
}

// In one block, the cache's keys and values depend on their own token only, so token i's cost is
// the last row of a forward pass over the tokens the cache holds: the first `sinks` tokens and
// the last size − sinks up to token i, at places 0, 1, ...
TEST(Streaming, WithSinksAOneBlockModelSeesTheTokensItKeepsAtTheirPlaces) {
  gpt::TransformerConfig c = rotary_gpt(1);
  const gpt::TransformerWeights w = attn_test::random_model(c, 71);
  const arma::uvec text = text_of(20, c.vocabulary);
  const uword size = 5;
  for (const uword sinks : {1, 2}) {
    const arma::vec streamed = gpt::streaming_costs(w, text, {.size = size, .sinks = sinks});
    for (uword i = size; i + 1 < text.n_elem; ++i) {
      const arma::uvec held =
          arma::join_cols(text.head(sinks), text.subvec(i - (size - sinks) + 1, i));
      const arma::rowvec logits = gpt::sentence_logits(w, held).tail_rows(1);
      const double expected = attn::math::cross_entropy(logits, arma::uvec{text(i + 1)}).loss;
      EXPECT_NEAR(streamed(i), expected, 1e-12) << sinks << " sinks, token " << i;
    }
  }
}

TEST(Streaming, RefusesTablesOfPositionsAndCachesWithNoPlace) {
  const gpt::TransformerWeights learned = attn_test::random_model(attn_test::small_gpt(), 73);
  const arma::uvec text = text_of(10, 11);
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { gpt::streaming_costs(learned, text, {.size = 4, .sinks = 1}); },
      "positions learned have no place for a token past max_length 6"));
  const gpt::TransformerWeights w = attn_test::random_model(rotary_gpt(2), 79);
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { gpt::streaming_costs(w, text, {.size = 7, .sinks = 1}); },
      "a cache of 7 tokens; the model reads 1 to 6"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { gpt::streaming_costs(w, text, {.size = 4, .sinks = 4}); },
      "4 sinks in a cache of 4 leave no place"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { gpt::streaming_costs(w, arma::uvec{3}, {.size = 4, .sinks = 1}); },
      "1 token(s); a cost needs at least 2"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] {
        gpt::streaming_costs(w, arma::uvec{3, 11, 2}, {.size = 4, .sinks = 1});
      },
      "token 11 (position 1) is outside a vocabulary of 11"));
}

}  // namespace
