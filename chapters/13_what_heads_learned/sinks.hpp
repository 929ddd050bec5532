/// \file
/// \brief Chapter 13's attention sinks: how much weight each block puts on the first token of
///        its context, and the StreamingLLM experiment (Xiao et al., 2023) on chapter 12's models
///        with rotary positions: a text sixteen contexts long read through a KV cache of one
///        context that keeps the text's first k tokens, for k = 0, 1 and 4.
#pragma once

#include <11_small_gpt/small_gpt.hpp>
#include <attn/gpt/model.hpp>
#include <attn/gpt/streaming.hpp>
#include <attn/gpt/text.hpp>

#include <armadillo>

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace attn::ch13 {

//! [streaming]
/// The text read: the validation part's first tokens, sixteen of the models' contexts.
inline constexpr arma::uword kStreamedTokens = 1024;
/// The caches compared, each one context (64 tokens) in all: no sink (a sliding window), the
/// first token kept, the first four kept (StreamingLLM's choice).
inline const std::vector<arma::uword> kSinks = {0, 1, 4};
//! [streaming]

/// \brief Chapter 12's models with rotary positions (its "rope" change), one a seed, read back
///        from chapter 12's checkpoints, or trained as chapter 12 trains them where a checkpoint
///        is missing; --quick: random models of that configuration.
/// \param log what the runs have to say. \param data chapter 11's corpus.
/// \param seeds the seeds. \param folder chapter 12's checkpoints; empty: random models
///        (--quick). \return one model a seed.
std::vector<gpt::TransformerWeights> rotary_models(std::ostream& log,
                                                   const ch11::EncodedCorpus& data,
                                                   const std::vector<std::uint64_t>& seeds,
                                                   const std::string& folder);

/// \brief A text read through a streaming cache, in bits per byte: for each stretch of
///        \p stretch tokens after the first, the bits per byte of its tokens.
/// \param weights the model. \param text the text, encoded. \param tokens how many to read.
/// \param cache the cache. \param stretch tokens a point.
/// \return `(1 × tokens / stretch)`: point \f$j\f$ scores tokens \f$j \cdot\f$ stretch + 1 ...
///         \f$(j + 1) \cdot\f$ stretch.
arma::rowvec streamed_bits(const gpt::TransformerWeights& weights, const gpt::TokenText& text,
                           arma::uword tokens, const gpt::StreamingCache& cache,
                           arma::uword stretch);

}  // namespace attn::ch13
