#include "generation.hpp"

#include <attn/math/validate.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <memory>

namespace attn::gpt {

Continuation continue_text(const TransformerWeights& weights, const arma::uvec& prompt,
                           std::size_t count, const SamplingOptions& options,
                           numpy::Generator& rng) {
  if (prompt.is_empty())
    throw InputError("continue_text: the prompt has no token");
  const arma::uword window = weights.config.max_length;
  const arma::uword kept = std::max<arma::uword>(window / 2, 1);  // what a restart reads again
  for (arma::uword i = 0; i < prompt.n_elem; ++i)  // the unread part of a long prompt too
    if (prompt(i) >= weights.config.vocabulary)
      throw InputError(
          fmt::format("continue_text: token {} (position {} of the prompt) is "
                      "outside a vocabulary of {}",
                      prompt(i), i, weights.config.vocabulary));
  Continuation out;
  arma::uvec text = prompt;
  auto decoder = std::make_unique<CachedDecoder>(weights);
  // Reads text(first ... end − 1) into a fresh cache; returns the logits after the last.
  const auto read_from = [&](arma::uword first) {
    decoder = std::make_unique<CachedDecoder>(weights);
    arma::rowvec logits;
    for (arma::uword i = first; i < text.n_elem; ++i)
      logits = decoder->append(text(i));
    return logits;
  };
  const arma::uword start = prompt.n_elem > window ? prompt.n_elem - kept : 0;
  out.prompt_read = prompt.n_elem - start;
  //! [generation]
  arma::rowvec logits = read_from(start);
  for (std::size_t k = 0; k < count; ++k) {
    const arma::rowvec p = next_token_distribution(logits, options);
    const arma::uword next = sample_token(p, rng.random());
    text.resize(text.n_elem + 1);
    text(text.n_elem - 1) = next;
    if (k + 1 == count)
      break;
    if (decoder->size() == window) {  // no position left: restart on the last `kept` tokens
      ++out.restarts;
      logits = read_from(text.n_elem - kept);
    } else {
      logits = decoder->append(next);
    }
  }
  //! [generation]
  out.tokens = text.tail(count);
  return out;
}

}  // namespace attn::gpt
