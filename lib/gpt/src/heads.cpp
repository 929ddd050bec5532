#include "attn/gpt/heads.hpp"

#include <attn/math/validate.hpp>

#include <fmt/format.h>

namespace attn::gpt {

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

}  // namespace attn::gpt
