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
///        \f$\mathrm{softmax}(\ldots)V\f$, the row mean-ablation puts in its place. Every token
///        counts once, whatever its position, so a longer sentence weighs more.
/// \param weights the model. \param tokens,starts the sentences, packed as for
///        transformer_forward(). \return the means.
/// \throws as transformer_forward() does.
std::vector<std::vector<arma::rowvec>> head_means(const TransformerWeights& weights,
                                                  const arma::uvec& tokens,
                                                  const arma::uvec& starts);

/// \brief What one head does over a sentence, read from its weights \f$A\f$ `(n × n)`, each
///        figure a mean over the queries \f$i = 1 \dots n-1\f$ (query 0 can attend only to
///        itself, so it says nothing about the head).
struct HeadProfile {
  double previous_token = 0.0;  ///< \f$A_{i,i-1}\f$: the weight on the token just before.
  double first_token = 0.0;     ///< \f$A_{i,0}\f$: the weight on the sentence's first token.
  double self = 0.0;            ///< \f$A_{i,i}\f$: the weight on the query's own token.
  double mean_distance = 0.0;   ///< \f$\sum_j A_{ij}\,(i - j)\f$: how far back it looks, in tokens.
  double entropy = 0.0;  ///< \f$-\sum_j A_{ij} \ln A_{ij}\f$ in nats: 0 for a head that looks at
                         ///< one token, \f$\ln(i+1)\f$ for one that spreads evenly.
};

/// \brief The profile of one head's weights.
/// \param weights `(n × n)`, \f$n \ge 2\f$, rows of weights (attention_weights()); what lies
///        above the diagonal, where a causal head puts nothing, is not read.
/// \return the five means. \throws ShapeError if \p weights is not square or has fewer than two
///         rows. \throws InputError if it holds a NaN, an infinity or a negative entry.
HeadProfile profile(const arma::mat& weights);

/// \brief A head's induction score on a sentence that repeats a segment (Olsson et al., 2022):
///        the segment's \f$p\f$ tokens start at row \f$f\f$ and again at \f$f + p\f$, and
///        an induction head, at a token of the second copy, looks at the token that came after
///        the same token in the first copy. The score is the mean of that weight,
///        \f[ \frac{1}{p} \sum_{i = f+p}^{f+2p-1} A_{i,\, i-p+1}. \f]
///        A perfect induction head scores 1; a previous-token head, 0 (for \f$p \ne 2\f$).
/// \param weights `(n × n)`. \param first \f$f\f$. \param period \f$p \ge 1\f$.
/// \return the score, in [0, 1] for weights of rows that sum to 1.
/// \throws ShapeError if \p weights is not square or shorter than \f$f + 2p\f$ rows.
/// \throws InputError if \p period is 0 or \p weights holds a NaN or an infinity.
double induction_score(const arma::mat& weights, arma::uword first, arma::uword period);

}  // namespace attn::gpt
