#include "attn/gpt/heads.hpp"

#include <attn/math/validate.hpp>

#include <fmt/format.h>

#include <cmath>
#include <string_view>

namespace attn::gpt {

//! [attention-weights]
HeadWeights attention_weights(const TransformerForward& forward, arma::uword sentence) {
  HeadWeights weights;
  for (const BlockForward& block : forward.blocks) {
    if (sentence >= block.attention.size())
      throw math::InputError(fmt::format("attention_weights: sentence {} of a pass over {}",
                                         sentence, block.attention.size()));
    std::vector<arma::mat>& layer = weights.emplace_back();
    for (const math::Attention& head : block.attention[sentence].heads)
      layer.push_back(head.weights);
  }
  return weights;
}
//! [attention-weights]

HeadWeights attention_weights(const TransformerWeights& weights, const arma::uvec& tokens) {
  if (tokens.n_elem == 0 || tokens.n_elem > weights.config.max_length)
    throw math::InputError(fmt::format("attention_weights: {} tokens; the model reads 1 to {}",
                                       tokens.n_elem, weights.config.max_length));
  return attention_weights(transformer_forward(weights, tokens, arma::uvec{0}));
}

std::vector<std::vector<arma::rowvec>> head_means(const TransformerWeights& weights,
                                                  const arma::uvec& tokens,
                                                  const arma::uvec& starts) {
  const TransformerForward forward = transformer_forward(weights, tokens, starts);
  std::vector<std::vector<arma::rowvec>> means;
  for (const BlockForward& block : forward.blocks) {
    std::vector<arma::rowvec>& layer = means.emplace_back();
    for (arma::uword k = 0; k < weights.config.heads; ++k) {
      arma::rowvec sum(weights.config.d_model / weights.config.heads, arma::fill::zeros);
      for (const math::MultiHead& sentence : block.attention)
        sum += arma::sum(sentence.heads[k].output, 0);
      layer.push_back(sum / static_cast<double>(tokens.n_elem));
    }
  }
  return means;
}

namespace {

void require_square(std::string_view who, const arma::mat& weights, arma::uword rows) {
  if (weights.n_rows != weights.n_cols || weights.n_rows < rows)
    throw math::ShapeError(
        fmt::format("{}: the weights are {}; they need to be square, with {} "
                    "rows or more",
                    who, math::shape_of(weights), rows));
  math::require_finite("the weights", weights);
}

}  // namespace

HeadProfile profile(const arma::mat& weights) {
  require_square("profile", weights, 2);
  if (weights.min() < 0.0)
    throw math::InputError(
        fmt::format("profile: the weights hold {}; a weight is 0 or more", weights.min()));
  const arma::uword n = weights.n_rows;
  HeadProfile p;
  for (arma::uword i = 1; i < n; ++i) {
    p.previous_token += weights(i, i - 1);
    p.first_token += weights(i, 0);
    p.self += weights(i, i);
    for (arma::uword j = 0; j <= i; ++j) {
      const double a = weights(i, j);
      p.mean_distance += a * static_cast<double>(i - j);
      if (a > 0.0)
        p.entropy -= a * std::log(a);  // 0 ln 0 = 0, the limit
    }
  }
  const double queries = static_cast<double>(n - 1);
  p.previous_token /= queries;
  p.first_token /= queries;
  p.self /= queries;
  p.mean_distance /= queries;
  p.entropy /= queries;
  return p;
}

double induction_score(const arma::mat& weights, arma::uword first, arma::uword period) {
  if (period == 0)
    throw math::InputError("induction_score: the repeated segment has no token");
  require_square("induction_score", weights, first + 2 * period);
  double sum = 0.0;
  for (arma::uword i = first + period; i < first + 2 * period; ++i)
    sum += weights(i, i - period + 1);
  return sum / static_cast<double>(period);
}

}  // namespace attn::gpt
