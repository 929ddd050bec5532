/// \file
/// \brief The GPT's passes over packed sequences: forward, backward, and one training step's
///        loss and gradients.
///
/// For input tokens \f$t_0 \dots t_{n-1}\f$ at positions \f$p_0 \dots p_{n-1}\f$:
/// \f[ x^{(0)}_i = E_{t_i} + P_{p_i}, \qquad x^{(l+1)} = \mathrm{Block}_l\big(x^{(l)}\big), \qquad
///     z = \mathrm{Norm}_f(x^{(L)})\, W_U + b_U \;\text{ or, tied, }\; \mathrm{Norm}_f(x^{(L)})\,
///     E^\top \f]
/// (model.hpp names the weights, block.hpp gives the block).
#pragma once

#include <attn/gpt/batch.hpp>
#include <attn/gpt/block.hpp>
#include <attn/gpt/head_mask.hpp>
#include <attn/gpt/model.hpp>
#include <attn/math/layers.hpp>

#include <armadillo>

#include <vector>

namespace attn::gpt {

/// \brief The residual stream's first rows: \f$x^{(0)}_i = E_{t_i} + P_{p_i}\f$, with \f$P\f$ the
///        learned table, chapter 07's sinusoidal one, or nothing (TransformerConfig::positions).
/// \param weights the model. \param tokens `(N)`. \param positions `(N)`, each below max_length.
/// \return `(N × d)`. Indices are not checked here: transformer_forward() checks them.
arma::mat embed(const TransformerWeights& weights, const arma::uvec& tokens,
                const arma::uvec& positions);

/// \brief The logits from the final norm's output: \f$z = y\,W_U + b_U\f$, or with tied
///        embeddings \f$z = y\,E^\top\f$ (a token's logit is the dot product of the final state
///        with its own embedding row).
/// \param weights the model. \param final_state `(N × d)`: \f$y = \mathrm{Norm}_f(x^{(L)})\f$.
/// \return `(N × V)`.
arma::mat unembed(const TransformerWeights& weights, const arma::mat& final_state);

/// \brief A whole forward pass.
struct TransformerForward {
  arma::mat x0_keep;                 ///< the dropout mask of the embeddings' sum, or empty.
  arma::mat x0;                      ///< `(N × d)`: embeddings plus positions (dropped out).
  std::vector<BlockForward> blocks;  ///< one per block.
  NormForward ln_f;                  ///< the final norm.
  arma::mat logits;                  ///< `(N × V)`: \f$z\f$.
};

/// \brief The forward pass over packed sentences.
/// \param weights the model. \param tokens `(N)`, each below \f$V\f$.
/// \param starts the first row of each sentence (`{0}` for one sentence); each sentence is
///        at most TransformerConfig::max_length long.
/// \param dropout_draws empty to evaluate (no dropout); to train with
///        TransformerConfig::dropout above 0, the uniform draws in [0, 1) that dropout() takes.
/// \return every intermediate value, the logits last.
/// \throws InputError naming a token out of range, a sentence too long, bad \p starts, no
///         token, or a weight holding a NaN or an infinity (named as parameters() names
///         it, for example `blocks.0.attention.W_Q`).
/// \throws ShapeError if a weight does not have the shape \p weights' config gives it (both
///         shapes are named).
TransformerForward transformer_forward(const TransformerWeights& weights, const arma::uvec& tokens,
                                       const arma::uvec& starts,
                                       const math::UniformDraws& dropout_draws = {});

/// \brief The forward pass with heads switched off, to measure what they do (an ablation; no
///        dropout). With a mask that masks nothing it is transformer_forward() exactly.
/// \param weights,tokens,starts as for transformer_forward(). \param mask the heads masked and
///        what replaces their outputs (head_mask.hpp).
/// \return every intermediate value, the logits last; the masked heads' outputs are their rows.
///         It has no backward pass: transformer_backward() refuses it.
/// \throws as transformer_forward() and HeadMask::check() do.
TransformerForward transformer_forward(const TransformerWeights& weights, const arma::uvec& tokens,
                                       const arma::uvec& starts, const HeadMask& mask);

/// \brief The backward pass: every weight's gradient, given \f$\partial L/\partial z\f$.
///
/// Each step runs a layer's backward pass in reverse order; a residual connection adds its
/// two gradients, and the embedding's gradient is row \f$t_i\f$ of \f$E\f$ collecting row
/// \f$i\f$ of \f$\partial L / \partial x^{(0)}\f$.
/// \param weights,tokens,starts the forward pass's model and input. \param forward its result.
/// \param dlogits `(N × V)`.
/// \return the gradients, in a TransformerWeights of the model's shapes.
/// \throws ShapeError if \p dlogits does not fit, or \p tokens, \p starts or \p weights do
///         not match \p forward's rows, sentences or blocks.
/// \throws InputError if \p dlogits holds a NaN or an infinity, a token is outside the
///         vocabulary, \p starts is bad, or \p forward masked heads (head_mask.hpp): an
///         ablation has no backward pass.
TransformerWeights transformer_backward(const TransformerWeights& weights, const arma::uvec& tokens,
                                        const arma::uvec& starts, const TransformerForward& forward,
                                        const arma::mat& dlogits);

/// \brief One batch's loss, logits and gradients.
struct TransformerStep {
  double loss = 0.0;             ///< the mean cross-entropy over the batch's rows.
  arma::mat logits;              ///< `(N × V)`.
  TransformerWeights gradients;  ///< \f$\partial L / \partial\f$ every weight.
};

/// \brief Forward pass, cross-entropy against the batch's targets, backward pass.
/// \param weights the model. \param batch from pack_sentences().
/// \param dropout_draws as for transformer_forward(): empty for no dropout.
/// \return the loss, the logits and the gradients.
/// \throws InputError, ShapeError as transformer_forward() and cross_entropy() do.
TransformerStep transformer_step(const TransformerWeights& weights, const PackedBatch& batch,
                                 const math::UniformDraws& dropout_draws = {});

/// \brief The logits for the token after each token of one sentence (causal mask, positions
///        from 0).
/// \param weights the model. \param tokens `(n)`, with \f$1 \le n \le\f$ max_length.
/// \return `(n × V)`.
/// \throws InputError if \p tokens is empty or longer than max_length, or as
///         transformer_forward() does.
/// \throws ShapeError as transformer_forward() does.
arma::mat sentence_logits(const TransformerWeights& weights, const arma::uvec& tokens);

/// \brief sentence_logits() with heads switched off. \param weights,tokens as for
///        sentence_logits(). \param mask the heads masked (head_mask.hpp).
/// \return `(n × V)`. \throws as sentence_logits() and HeadMask::check() do.
arma::mat sentence_logits(const TransformerWeights& weights, const arma::uvec& tokens,
                          const HeadMask& mask);

}  // namespace attn::gpt
