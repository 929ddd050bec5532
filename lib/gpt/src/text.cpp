#include "attn/gpt/text.hpp"

#include <attn/gpt/forward.hpp>
#include <attn/math/layers.hpp>
#include <attn/math/validate.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <numbers>
#include <vector>

namespace attn::gpt {

TokenText encode(const text::BpeTokenizer& tokenizer, const std::string& text) {
  const std::vector<text::TokenId> ids = tokenizer.encode(text);
  TokenText out;
  out.tokens.set_size(ids.size());
  out.lengths.set_size(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    out.tokens(i) = ids[i];
    out.lengths(i) = tokenizer.token_bytes(ids[i]).size();
  }
  return out;
}

double bits_per_byte(const TransformerWeights& weights, const TokenText& text, std::size_t tokens) {
  const arma::uword n = tokens == 0 || tokens > text.tokens.n_elem ? text.tokens.n_elem : tokens;
  const arma::uword window = weights.config.max_length;
  const arma::uword stride = kept_context(weights.config);
  if (n < 2)
    throw math::InputError(fmt::format("bits_per_byte: {} token(s); scoring needs at least 2", n));
  double nats = 0.0;
  arma::uword scored_up_to = 0;  // tokens 1 ... scored_up_to have been scored
  for (arma::uword start = 0; scored_up_to + 1 < n; start += stride) {
    const arma::uword end = std::min(start + window, n - 1);  // inputs start ... end − 1
    const arma::uvec inputs = text.tokens.subvec(start, end - 1);
    const arma::mat logits = sentence_logits(weights, inputs);
    // Targets scored_up_to + 1 ... end, each predicted by the row before it (row i − 1 − start):
    // their summed cost is cross-entropy's mean times their number.
    const arma::uvec targets = text.tokens.subvec(scored_up_to + 1, end);
    const arma::mat rows = logits.rows(scored_up_to - start, end - 1 - start);
    nats += math::cross_entropy(rows, targets).loss * static_cast<double>(targets.n_elem);
    scored_up_to = end;
  }
  const double bytes = static_cast<double>(arma::accu(text.lengths.subvec(1, n - 1)));
  return nats / (bytes * std::numbers::ln2);
}

Evaluation held_out_bits(const TokenText& held_out, std::size_t tokens) {
  return [held_out, tokens](const TransformerWeights& weights) {
    return Measurement{.held_out = bits_per_byte(weights, held_out, tokens), .training = {}};
  };
}

Evaluation bits_on_both(const TokenText& held_out, const TokenText& training, std::size_t tokens) {
  return [held_out, training, tokens](const TransformerWeights& weights) {
    return Measurement{.held_out = bits_per_byte(weights, held_out, tokens),
                       .training = bits_per_byte(weights, training, tokens)};
  };
}

}  // namespace attn::gpt
