#include "attn/gpt/text.hpp"

#include <attn/gpt/float32_step.hpp>
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

namespace {

// The windows bits_per_byte() reads: inputs first ... last − 1, predicting tokens first + 1 ...
// last, of which those from scored_from + 1 on are scored (no earlier window scored them).
struct ScoredWindow {
  arma::uword first = 0;
  arma::uword last = 0;
  arma::uword scored_from = 0;
};

std::vector<ScoredWindow> scored_windows(arma::uword n, const TransformerConfig& config) {
  const arma::uword context = config.max_length;
  const arma::uword stride = kept_context(config);
  std::vector<ScoredWindow> windows;
  arma::uword scored_up_to = 0;  // tokens 1 ... scored_up_to have been scored
  for (arma::uword start = 0; scored_up_to + 1 < n; start += stride) {
    const arma::uword end = std::min(start + context, n - 1);
    windows.push_back({.first = start, .last = end, .scored_from = scored_up_to});
    scored_up_to = end;
  }
  return windows;
}

// The summed cost of a window's scored tokens, each predicted by the row before it (row
// i − 1 − first): cross-entropy's mean times their number. The heads in `mask` are switched off.
double window_nats(const TransformerWeights& weights, const TokenText& text, const ScoredWindow& w,
                   const HeadMask& mask = {}) {
  const arma::uvec inputs = text.tokens.subvec(w.first, w.last - 1);
  const arma::mat logits = sentence_logits(weights, inputs, mask);
  const arma::uvec targets = text.tokens.subvec(w.scored_from + 1, w.last);
  const arma::mat rows = logits.rows(w.scored_from - w.first, w.last - 1 - w.first);
  return math::cross_entropy(rows, targets).loss * static_cast<double>(targets.n_elem);
}

// The same in float, kWindowsAtOnce windows packed into each batch, with the run's float32 step.
double float32_nats(const TransformerWeights& weights, const TokenText& text,
                    const std::vector<ScoredWindow>& windows, Float32Step& step) {
  constexpr std::size_t kWindowsAtOnce = 16;
  double nats = 0.0;
  for (std::size_t begin = 0; begin < windows.size(); begin += kWindowsAtOnce) {
    const std::size_t end = std::min(windows.size(), begin + kWindowsAtOnce);
    std::vector<arma::uvec> sentences;  // inputs and the token after the last
    for (std::size_t k = begin; k < end; ++k)
      sentences.push_back(text.tokens.subvec(windows[k].first, windows[k].last));
    const PackedBatch batch = pack_sentences(sentences);
    const arma::vec losses = step.row_losses(weights, batch);
    for (std::size_t k = begin; k < end; ++k) {
      const ScoredWindow& w = windows[k];
      const arma::uword row = batch.starts(k - begin);
      nats += arma::accu(losses.subvec(row + w.scored_from - w.first, row + w.last - 1 - w.first));
    }
  }
  return nats;
}

}  // namespace

double bits_per_byte(const TransformerWeights& weights, const TokenText& text, std::size_t tokens,
                     Step& step) {
  const arma::uword n = tokens == 0 || tokens > text.tokens.n_elem ? text.tokens.n_elem : tokens;
  if (n < 2)
    throw math::InputError(fmt::format("bits_per_byte: {} token(s); scoring needs at least 2", n));
  step.require_made_for(weights.config, "bits_per_byte");
  const std::vector<ScoredWindow> windows = scored_windows(n, weights.config);
  double nats = 0.0;
  if (Float32Step* float32 = step.float32()) {
    nats = float32_nats(weights, text, windows, *float32);
  } else {
    for (const ScoredWindow& w : windows)
      nats += window_nats(weights, text, w);
  }
  const double bytes = static_cast<double>(arma::accu(text.lengths.subvec(1, n - 1)));
  return nats / (bytes * std::numbers::ln2);
}

double bits_per_byte(const TransformerWeights& weights, const TokenText& text, std::size_t tokens,
                     Precision precision) {
  Step step = make_step(weights.config, precision);
  return bits_per_byte(weights, text, tokens, step);
}

arma::vec window_bits(const TransformerWeights& weights, const TokenText& text,
                      const std::vector<arma::uword>& starts, arma::uword length,
                      const HeadMask& mask) {
  if (starts.empty())
    throw math::InputError("window_bits: there is no window");
  if (length == 0 || length > weights.config.max_length)
    throw math::InputError(fmt::format("window_bits: windows of {} tokens; the model reads 1 to {}",
                                       length, weights.config.max_length));
  for (const arma::uword s : starts)
    if (s + length >= text.tokens.n_elem)
      throw math::InputError(fmt::format(
          "window_bits: a window of {} tokens from token {} needs {} tokens, the text has {}",
          length, s, s + length + 1, text.tokens.n_elem));
  // A forward pass a window: one pass over all of them would hold every block's values for every
  // window at once, and run slower for the memory it walks through.
  arma::vec bits(starts.size());
  for (std::size_t k = 0; k < starts.size(); ++k) {
    const arma::uword s = starts[k];
    const ScoredWindow window{.first = s, .last = s + length, .scored_from = s};
    const double bytes = static_cast<double>(arma::accu(text.lengths.subvec(s + 1, s + length)));
    bits(k) = window_nats(weights, text, window, mask) / (bytes * std::numbers::ln2);
  }
  return bits;
}

Evaluation held_out_bits(const TokenText& held_out, std::size_t tokens) {
  return [held_out, tokens](const TransformerWeights& weights, Step& step) {
    return Measurement{.held_out = bits_per_byte(weights, held_out, tokens, step), .training = {}};
  };
}

Evaluation bits_on_both(const TokenText& held_out, const TokenText& training, std::size_t tokens) {
  return [held_out, training, tokens](const TransformerWeights& weights, Step& step) {
    return Measurement{.held_out = bits_per_byte(weights, held_out, tokens, step),
                       .training = bits_per_byte(weights, training, tokens, step)};
  };
}

}  // namespace attn::gpt
