#include "attn/gpt/decoder.hpp"

#include <attn/gpt/block.hpp>
#include <attn/gpt/forward.hpp>
#include <attn/math/validate.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <functional>

namespace attn::gpt {

Decoder::Decoder(const TransformerWeights& weights) : weights_(&weights) {
  check_weights(weights);
  const TransformerConfig& c = weights.config;
  const arma::uword d_k = c.d_model / c.heads;
  caches_.assign(
      weights.blocks.size(),
      std::vector<math::KVCache>(key_value_heads(c), math::KVCache(d_k, d_k, c.sliding_window)));
}

arma::uword Decoder::cache_bytes() const {
  arma::uword bytes = 0;
  for (const std::vector<math::KVCache>& block : caches_)
    for (const math::KVCache& cache : block)
      bytes += cache.bytes();
  return bytes;
}

arma::rowvec Decoder::append(arma::uword token) {
  const TransformerWeights& w = *weights_;
  const TransformerConfig& c = w.config;
  if (token >= c.vocabulary)
    throw math::InputError(
        fmt::format("Decoder: token {} is outside a vocabulary of {}", token, c.vocabulary));
  if (length_ >= c.max_length)
    throw math::InputError(
        fmt::format("Decoder: it holds {} tokens, the model's whole context (max_length); "
                    "start a new decoder on the text's last tokens",
                    length_));
  //! [decoder-append]
  arma::mat x = embed(w, arma::uvec{token}, arma::uvec{length_});  // (1 × d)
  for (std::size_t l = 0; l < w.blocks.size(); ++l)
    x = block_step(w.blocks[l], c, x, length_, caches_[l]);
  ++length_;
  return unembed(w, normalise(c.norm, x, w.lnf_gamma, w.lnf_beta).y());
  //! [decoder-append]
}

namespace {

// The one decoding loop; `choose` picks the next token from its logits.
Continuation decode(const TransformerWeights& weights, const arma::uvec& prompt, std::size_t count,
                    const std::function<arma::uword(const arma::rowvec&)>& choose,
                    std::optional<arma::uword> stop) {
  if (prompt.is_empty())
    throw math::InputError("continue_text: the prompt has no token");
  for (arma::uword i = 0; i < prompt.n_elem; ++i)  // the unread part of a long prompt too
    if (prompt(i) >= weights.config.vocabulary)
      throw math::InputError(
          fmt::format("continue_text: token {} (position {} of the prompt) is "
                      "outside a vocabulary of {}",
                      prompt(i), i, weights.config.vocabulary));
  //! [generation]
  const arma::uword context = weights.config.max_length;
  const arma::uword kept = kept_context(weights.config);
  Continuation out;
  std::vector<arma::uword> text(prompt.begin(), prompt.end());
  Decoder decoder(weights);
  // Reads text[first ...] into a fresh cache; returns the logits after the last token.
  const auto read_from = [&](std::size_t first) {
    decoder = Decoder(weights);
    arma::rowvec logits;
    for (std::size_t i = first; i < text.size(); ++i)
      logits = decoder.append(text[i]);
    return logits;
  };
  const std::size_t start = prompt.n_elem > context ? prompt.n_elem - kept : 0;
  out.prompt_read = prompt.n_elem - start;
  const bool ends_with_stop = stop && text.back() == *stop;
  std::vector<arma::uword> added;
  arma::rowvec logits = count > 0 && !ends_with_stop ? read_from(start) : arma::rowvec();
  for (std::size_t k = 0; k < count && !ends_with_stop; ++k) {
    const arma::uword next = choose(logits);
    text.push_back(next);
    added.push_back(next);
    if (k + 1 == count || (stop && next == *stop))
      break;
    if (decoder.size() == context) {  // no position left: restart on the last `kept` tokens
      ++out.restarts;
      logits = read_from(text.size() - kept);
    } else {
      logits = decoder.append(next);
    }
  }
  //! [generation]
  out.tokens = arma::uvec(added);
  return out;
}

}  // namespace

Continuation continue_text(const TransformerWeights& weights, const arma::uvec& prompt,
                           std::size_t count, const math::SamplingOptions& options,
                           numpy::Generator& rng, std::optional<arma::uword> stop) {
  const auto draw = [&](const arma::rowvec& logits) {
    return math::sample_token(math::next_token_distribution(logits, options), rng.random());
  };
  return decode(weights, prompt, count, draw, stop);
}

Continuation continue_greedily(const TransformerWeights& weights, const arma::uvec& prompt,
                               std::size_t count, std::optional<arma::uword> stop) {
  const auto most_likely = [](const arma::rowvec& logits) {
    return logits.index_max();
  };
  return decode(weights, prompt, count, most_likely, stop);
}

double largest_cache_difference(const TransformerWeights& weights, const arma::uvec& tokens) {
  if (tokens.is_empty())
    throw math::InputError("largest_cache_difference: the text has no token");
  Decoder decoder(weights);
  double largest = 0.0;
  for (arma::uword t = 0; t < tokens.n_elem; ++t) {
    const arma::rowvec cached = decoder.append(tokens(t));                 // (1 × V)
    const arma::mat whole = sentence_logits(weights, tokens.head(t + 1));  // ((t + 1) × V)
    largest = std::max(largest, arma::abs(cached - whole.row(t)).max());
  }
  return largest;
}

}  // namespace attn::gpt
