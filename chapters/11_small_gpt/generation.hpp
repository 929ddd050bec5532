/// \file
/// \brief Chapter 11's text generation: the model continues a text token by token through
///        chapter 09's KV cache (attn::CachedDecoder), each token drawn by attn::sample_token()
///        from numpy's random stream, so that a seed reproduces the text.
#pragma once

#include <attn/math/sampling.hpp>
#include <attn/math/transformer.hpp>
#include <attn/numpy/numpy_random.hpp>

#include <cstddef>

namespace attn::gpt {

/// \brief A continuation and what the model's window did to it.
struct Continuation {
  arma::uvec tokens;            ///< the new tokens, without the prompt.
  std::size_t restarts = 0;     ///< how many times the window was full and the cache restarted.
  std::size_t prompt_read = 0;  ///< the prompt's tokens the model read (its last ones).
};

/// \brief Continues \p prompt by \p count tokens.
///
/// The model has max_length positions. While the text fits, each new token costs one
/// CachedDecoder::append(). When the text fills every position, the cache is restarted on the
/// text's last max_length / 2 tokens (1 if max_length is 1), re-read from position 0, so that
/// once the window has filled, every later token has at least half a window of context behind
/// it; a prompt longer than max_length
/// is read from its last max_length / 2 tokens the same way. Each token is drawn by
/// sample_token(next_token_distribution(logits, options), rng.random()).
/// \param weights the model. \param prompt at least one token. \param count new tokens.
/// \param options temperature, top-k, top-p. \param rng the random stream (advanced).
/// \return the new tokens and how the window was used.
/// \throws InputError if \p prompt is empty or holds a token outside the vocabulary.
Continuation continue_text(const TransformerWeights& weights, const arma::uvec& prompt,
                           std::size_t count, const SamplingOptions& options,
                           numpy::Generator& rng);

}  // namespace attn::gpt
