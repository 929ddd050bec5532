/// \file
/// \brief The GPT's one decoder: text continued token by token through chapter 09's KV cache,
///        each token chosen greedily (chapter 10) or drawn by attn::math::sample_token() from
///        numpy's random stream (chapter 11: temperature, top-k, top-p), so that a seed reproduces
///        the text.
#pragma once

#include <attn/gpt/model.hpp>
#include <attn/math/kv_cache.hpp>
#include <attn/math/sampling.hpp>
#include <attn/numpy/numpy_random.hpp>

#include <armadillo>

#include <cstddef>
#include <optional>
#include <vector>

namespace attn::gpt {

/// \brief Decoding one token at a time through chapter 09's KV cache: each block keeps the keys
///        and values of the tokens read so far, one KVCache per key/value head, so that a new
///        token costs one query per head instead of a whole forward pass over the prefix. With
///        grouped-query attention the caches are fewer (\f$g\f$ per block, not \f$h\f$); with a
///        sliding window each keeps the last \f$w\f$ tokens only.
///
/// Token \f$t\f$ (at position \f$t\f$) runs block_step(), which is the last row of
/// block_forward() on tokens \f$0 \dots t\f$: the logits it returns are the last row of
/// transformer_forward() on tokens \f$0 \dots t\f$ (the tests hold them within 1e-12), at
/// \f$O(t\,d)\f$ attention work per block instead of \f$O(t^2 d)\f$ (\f$O(\min(t, w)\,d)\f$ with a
/// window). Dropout is never applied: this is for generating, not training. The decoder reads
/// the weights it was made with; they must outlive it and not change. It holds at most
/// max_length tokens, with a window too: continue_text() then restarts it, as for every model
/// (a windowed model's memory stops growing at \f$w\f$ tokens before that).
class Decoder {
 public:
  /// \brief An empty decoder. \param weights the model.
  /// \throws InputError, ShapeError as check_weights() does.
  explicit Decoder(const TransformerWeights& weights);

  /// \brief Reads one more token. \param token below \f$V\f$.
  /// \return `(1 × V)`: the logits for the token after it.
  /// \throws InputError if \p token is outside the vocabulary, or the decoder already holds
  ///         max_length tokens (the model has no position for another: start a new decoder
  ///         on the text's last kept_context() tokens).
  arma::rowvec append(arma::uword token);

  /// \brief The number of tokens read. \return \f$t\f$.
  [[nodiscard]] arma::uword size() const { return length_; }

  /// \brief The bytes of keys and values the caches hold:
  ///        \f$2 \cdot L \cdot g \cdot d_k \cdot 8\f$ per token held (doubles), with
  ///        \f$\min(t, w)\f$ tokens held under a window of \f$w\f$, else \f$t\f$.
  /// \return the sum of attn::math::KVCache::bytes() over every block and key/value head.
  [[nodiscard]] arma::uword cache_bytes() const;

 private:
  const TransformerWeights* weights_;
  std::vector<std::vector<math::KVCache>> caches_;  // [block][key/value head]
  arma::uword length_ = 0;
};

/// \brief A continuation and what the model's window did to it.
struct Continuation {
  arma::uvec tokens;            ///< the new tokens, without the prompt.
  std::size_t restarts = 0;     ///< how many times the window was full and the cache restarted.
  std::size_t prompt_read = 0;  ///< the prompt's tokens the model reads, its last ones (those
                                ///< it would read when nothing is generated, too).
};

/// \brief Continues \p prompt by \p count tokens, each drawn by
///        sample_token(next_token_distribution(logits, options), rng.random()): one draw per
///        token.
///
/// The model has max_length positions. While the text fits, each new token costs one
/// Decoder::append(). When every position is taken and another token is wanted, the decoder
/// restarts on the text's last kept_context() tokens (the token just chosen among them),
/// re-read from position 0, so that once the window has filled, every later token has at least
/// kept_context() tokens of context behind it; a prompt longer than max_length is read from its
/// last kept_context() tokens the same way. Decoding stops early after \p stop, if it is given
/// and chosen; a prompt that already ends with \p stop is not continued at all.
/// \param weights the model. \param prompt at least one token. \param count new tokens, at most.
/// \param options temperature, top-k, top-p. \param rng the random stream (advanced).
/// \param stop a token that ends the text (it is kept), or none.
/// \return the new tokens and how the window was used.
/// \throws InputError if \p prompt is empty or holds a token outside the vocabulary.
Continuation continue_text(const TransformerWeights& weights, const arma::uvec& prompt,
                           std::size_t count, const math::SamplingOptions& options,
                           numpy::Generator& rng, std::optional<arma::uword> stop = {});

/// \brief continue_text() choosing the most likely token each time (the first, on a tie),
///        with no random draw.
/// \param weights the model. \param prompt at least one token. \param count new tokens, at most.
/// \param stop a token that ends the text (it is kept), or none.
/// \return the new tokens and how the window was used.
/// \throws InputError as continue_text() does.
Continuation continue_greedily(const TransformerWeights& weights, const arma::uvec& prompt,
                               std::size_t count, std::optional<arma::uword> stop = {});

/// \brief How far the KV cache's logits are from a whole forward pass: \p tokens read one at a
///        time by a Decoder, token \f$t\f$'s logits against the last row of sentence_logits() on
///        tokens \f$0 \dots t\f$: the largest \f$\lvert \ell^{\mathrm{cached}}_{t,v} -
///        \ell^{\mathrm{whole}}_{t,v} \rvert\f$ over tokens \f$t\f$ and logits \f$v\f$. The one
///        check of "the cached decoder equals the whole pass", which the chapters and the tests
///        hold within 1e-12.
/// \param weights the model. \param tokens `(n)`, \f$1 \le n \le\f$ max_length tokens, each below
///        \f$V\f$.
/// \return the largest absolute difference, over every token and every logit.
/// \throws InputError if \p tokens is empty, longer than max_length, or holds a token outside
///         the vocabulary.
double largest_cache_difference(const TransformerWeights& weights, const arma::uvec& tokens);

}  // namespace attn::gpt
