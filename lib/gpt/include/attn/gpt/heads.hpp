/// \file
/// \brief Looking at a model's heads: every head's attention weights over a sentence, read
///        from the forward pass that uses them, and each head's mean output over a text (what
///        mean-ablation puts in its place, head_mask.hpp).
#pragma once

#include <attn/gpt/forward.hpp>
#include <attn/gpt/head_mask.hpp>
#include <attn/gpt/model.hpp>

#include <armadillo>

#include <vector>

namespace attn::gpt {

/// \brief Every head's attention weights over one sentence of \f$n\f$ tokens: `weights[l][k]`,
///        `(n × n)`, is head \f$k\f$ of block \f$l\f$. Row \f$i\f$ is token \f$i\f$'s weights
///        over tokens \f$0 \dots i\f$ (the last \f$w\f$ of them with a window): zero above the
///        diagonal, each row summing to 1.
using HeadWeights = std::vector<std::vector<arma::mat>>;

/// \brief The weights a forward pass computed and used, for one of its sentences.
/// \param forward a pass of transformer_forward(). \param sentence which of its packed
///        sentences, 0 for the first. \return the weights of every head.
/// \throws InputError if \p sentence is not one of the pass's.
HeadWeights attention_weights(const TransformerForward& forward, arma::uword sentence = 0);

/// \brief A forward pass over one sentence and its heads' weights.
/// \param weights the model. \param tokens `(n)`, \f$1 \le n \le\f$ max_length.
/// \return the weights of every head. \throws as sentence_logits() does.
HeadWeights attention_weights(const TransformerWeights& weights, const arma::uvec& tokens);

/// \brief Each head's output averaged over every token of some sentences: `means[l][k]`,
///        `(1 × d_k)`, the mean of head \f$k\f$ of block \f$l\f$'s rows of
///        \f$\mathrm{softmax}(\ldots)V\f$, the row mean-ablation puts in its place.
/// \param weights the model. \param tokens,starts the sentences, packed as for
///        transformer_forward(). \return the means.
/// \throws as transformer_forward() does.
std::vector<std::vector<arma::rowvec>> head_means(const TransformerWeights& weights,
                                                  const arma::uvec& tokens,
                                                  const arma::uvec& starts);

}  // namespace attn::gpt
