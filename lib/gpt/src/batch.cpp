#include "attn/gpt/batch.hpp"

#include <attn/math/validate.hpp>

#include <fmt/format.h>

#include <cmath>

namespace attn::gpt {

PackedBatch pack_sentences(const std::vector<arma::uvec>& sentences) {
  if (sentences.empty())
    throw math::InputError("pack_sentences: there are no sentences");
  PackedBatch batch;
  batch.starts.set_size(sentences.size());
  std::vector<arma::uword> tokens, targets;
  for (std::size_t s = 0; s < sentences.size(); ++s) {
    const arma::uvec& t = sentences[s];
    if (t.n_elem < 2)
      throw math::InputError(
          fmt::format("pack_sentences: sentence {} has {} token(s); a next-token "
                      "target needs at least 2",
                      s, t.n_elem));
    batch.starts(s) = tokens.size();
    tokens.insert(tokens.end(), t.begin(), t.end() - 1);
    targets.insert(targets.end(), t.begin() + 1, t.end());
  }
  batch.tokens = arma::uvec(tokens);
  batch.targets = arma::uvec(targets);
  return batch;
}

std::vector<SequenceRows> sequence_rows(arma::uword rows, const arma::uvec& starts) {
  if (starts.is_empty() || starts(0) != 0)
    throw math::InputError("packed sentences: the first sentence must start at row 0");
  std::vector<SequenceRows> out;
  for (arma::uword k = 0; k < starts.n_elem; ++k) {
    const arma::uword end = k + 1 < starts.n_elem ? starts(k + 1) : rows;
    if (end <= starts(k) || end > rows)
      throw math::InputError(
          fmt::format("packed sentences: sentence {} would run from row {} to row "
                      "{} of {}",
                      k, starts(k), end, rows));
    out.push_back({starts(k), end - 1});
  }
  return out;
}

arma::uvec positions_in_sentences(arma::uword rows, const arma::uvec& starts) {
  arma::uvec positions(rows);
  for (const SequenceRows& r : sequence_rows(rows, starts))
    positions.subvec(r.first, r.last) = arma::regspace<arma::uvec>(0, r.count() - 1);
  return positions;
}

std::vector<arma::uvec> random_windows(const arma::uvec& tokens, arma::uword window,
                                       arma::uword count, numpy::Generator& rng) {
  if (window == 0 || tokens.n_elem <= window)
    throw math::InputError(fmt::format("random_windows: {} tokens; a window of {} needs {}",
                                       tokens.n_elem, window, window + 1));
  const double offsets = static_cast<double>(tokens.n_elem - window);  // 0 ... N − W − 1
  std::vector<arma::uvec> windows;
  for (arma::uword b = 0; b < count; ++b) {
    const auto offset = static_cast<arma::uword>(std::floor(rng.random() * offsets));
    windows.push_back(tokens.subvec(offset, offset + window));  // window + 1 tokens
  }
  return windows;
}

}  // namespace attn::gpt
