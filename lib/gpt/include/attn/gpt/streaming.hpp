/// \file
/// \brief Reading a text far longer than the model's context through a KV cache of fixed size,
///        as StreamingLLM does (Xiao et al., 2023): the cache keeps the text's first tokens
///        (the "attention sinks") and its most recent ones, and drops the tokens between.
///
/// A model trained on contexts of \f$n\f$ tokens has only ever seen the distances
/// \f$0 \dots n - 1\f$ between a query and a key. A cache of \f$s \le n\f$ tokens keeps them in
/// that range if a key's position is its place in the cache, not in the text: the \f$k\f$ sinks
/// at places \f$0 \dots k-1\f$, the recent tokens after them, the new token last. So the cache
/// keeps each key as it was before RoPE turned it, and turns every key at its place (and the
/// query at the last place) at every step, as StreamingLLM does. With \f$k = 0\f$ it is a plain
/// sliding window: the model with `sliding_window` \f$= s\f$ over the whole text, exactly.
#pragma once

#include <attn/gpt/model.hpp>

#include <armadillo>

namespace attn::gpt {

/// \brief The cache's shape.
struct StreamingCache {
  arma::uword size = 0;   ///< \f$s\f$, the tokens it holds at most (the new one included).
  arma::uword sinks = 0;  ///< \f$k < s\f$, the text's first tokens it never drops.
};

/// \brief Each token's cost when a text is read token by token through a StreamingCache:
///        entry \f$i\f$ is \f$-\ln p(t_{i+1})\f$ from the logits after token \f$i\f$, when the
///        cache holds the first \p cache.sinks tokens and the last
///        \f$s - k\f$ of tokens \f$0 \dots i\f$, each block's cache its own keys and values as
///        they were computed when their token was read. While the text fits in the cache, it is
///        the whole forward pass's cost.
/// \param weights a model whose positions are rotary or none (a table of positions, learned or
///        sinusoidal, has no place for a token past max_length).
/// \param tokens the text, at least 2 tokens. \param cache its shape; \f$s\f$ at most
///        max_length.
/// \return `(n − 1)` nats.
/// \throws InputError if the positions are learned or sinusoidal, if \f$s\f$ is 0 or above
///         max_length, if \f$k \ge s\f$, if the text has fewer than 2 tokens or a token outside
///         the vocabulary; as check_weights() does.
arma::vec streaming_costs(const TransformerWeights& weights, const arma::uvec& tokens,
                          const StreamingCache& cache);

}  // namespace attn::gpt
