/// \file
/// \brief A small decoder-only transformer (chapter 10): every earlier piece in one model,
///        with its forward pass, its backward pass and its parameters in a fixed order.
///
/// For input tokens \f$t_0 \dots t_{n-1}\f$ at positions \f$p_0 \dots p_{n-1}\f$:
///
/// \f[ x^{(0)}_i = E_{t_i} + PE_{p_i} \f]
/// \f[ u = x^{(l)} + \mathrm{MultiHead}\big(\mathrm{LN}_1(x^{(l)})\big), \qquad
///     x^{(l+1)} = u + \mathrm{MLP}\big(\mathrm{LN}_2(u)\big) \f]
/// \f[ z = \mathrm{LN}_f(x^{(L)})\, W_U + b_U \f]
///
/// \f$E\f$ is the learned embedding `(V × d)`, \f$PE\f$ the sinusoidal positions of chapter 07
/// (fixed, not learned; zero when TransformerConfig::positions is off), MultiHead the causal
/// attention of chapter 08 with biases, MLP the GELU network of layers.hpp, LN layer norm. This
/// is the "pre-norm" block: each branch reads a normalised copy of the residual stream and adds
/// its result back. Row \f$i\f$ of the logits \f$z\f$ scores every word of the vocabulary as the
/// token after \f$t_i\f$.
#pragma once

#include <armadillo>
#include <functional>
#include <string>
#include <vector>
#include "attn/math/layers.hpp"
#include "attn/math/multi_head.hpp"

namespace attn {

/// \brief The sizes of a model: everything that fixes the shapes of its weights.
struct TransformerConfig {
  arma::uword vocabulary = 0;  ///< \f$V\f$, the number of words.
  arma::uword d_model = 0;     ///< \f$d\f$, the width of the residual stream (even).
  arma::uword heads = 1;       ///< \f$h\f$, dividing \f$d\f$.
  arma::uword layers = 1;      ///< \f$L\f$, the number of blocks.
  arma::uword d_ff = 0;        ///< the MLP's hidden width.
  arma::uword max_length = 0;  ///< the longest input; positions run from 0 to this − 1.
  bool positions = true;       ///< whether \f$PE\f$ is added (off for the chapter's ablation).
};

/// \brief One block's weights.
struct BlockWeights {
  arma::rowvec ln1_gamma;      ///< `(1 × d)`: the layer norm before attention.
  arma::rowvec ln1_beta;       ///< `(1 × d)`.
  MultiHeadWeights attention;  ///< four `(d × d)` matrices and four `(1 × d)` biases.
  arma::rowvec ln2_gamma;      ///< `(1 × d)`: the layer norm before the MLP.
  arma::rowvec ln2_beta;       ///< `(1 × d)`.
  FeedForwardWeights mlp;      ///< `W1: (d × d_ff)`, `W2: (d_ff × d)` and their biases.
};

/// \brief All of a model's weights. The same type holds their gradients.
struct TransformerWeights {
  TransformerConfig config;          ///< the sizes.
  arma::mat embedding;               ///< `E: (V × d)`, one row per word.
  std::vector<BlockWeights> blocks;  ///< \f$L\f$ blocks, the first applied first.
  arma::rowvec lnf_gamma;            ///< `(1 × d)`: the final layer norm.
  arma::rowvec lnf_beta;             ///< `(1 × d)`.
  arma::mat unembedding;             ///< `W_U: (d × V)`.
  arma::rowvec unembedding_bias;     ///< `b_U: (1 × V)`.
};

/// \brief One learned matrix with the name PyTorch's `named_parameters()` would give it
///        (`blocks.0.attention.W_Q`, ...), in the order of model_parameters().
struct NamedParameter {
  std::string name;  ///< for messages and for matching a fixture.
  arma::mat* value;  ///< points into the TransformerWeights it was taken from.
};

/// \brief Every learned matrix of \p weights, in a fixed order: the embedding, then per block
///        ln1 (gamma, beta), W_Q, W_K, W_V, W_O, b_Q, b_K, b_V, b_O, ln2 (gamma, beta), W1, b1,
///        W2, b2; then the final layer norm, \f$W_U\f$, \f$b_U\f$.
/// \param weights the model (or a gradient of it). \return pointers into \p weights.
std::vector<NamedParameter> model_parameters(TransformerWeights& weights);

/// \brief The number of learned numbers: \f$Vd + L(4d^2 + 4d + 2 d\,d_{ff} + d_{ff} + d + 4d)
///        + 2d + dV + V\f$.
/// \param config the sizes. \return the count.
/// \throws InputError if a size is 0, \f$d\f$ is odd or \f$h \nmid d\f$.
arma::uword parameter_count(const TransformerConfig& config);

/// \brief A new model, drawn from \p rng in the order of model_parameters(): \f$E\f$ from
///        \f$N(0, 1)\f$; every other matrix from \f$N(0, 1/\text{fan-in})\f$, except \f$W_U\f$
///        from \f$N(0, 0.02^2)\f$ so that the first logits are near 0 and the first loss near
///        \f$\ln V\f$; biases 0; layer norms' gamma 1 and beta 0.
/// \param config the sizes.
/// \param standard_normal returns a `(rows × cols)` matrix of \f$N(0, 1)\f$ draws (the book
///        passes numpy's `default_rng(seed).normal(size=(rows, cols))`).
/// \return the weights.
/// \throws InputError if a size is 0, \f$d\f$ is odd or \f$h \nmid d\f$, or a draw holds a NaN
///         or an infinity.
/// \throws ShapeError if \p standard_normal returns a matrix of another shape than asked.
TransformerWeights init_transformer(
    const TransformerConfig& config,
    const std::function<arma::mat(arma::uword, arma::uword)>& standard_normal);

/// \brief Sentences laid end to end as one input, the way a batch is trained here.
///
/// Each sentence of \f$k\f$ tokens gives \f$k - 1\f$ rows: inputs \f$t_0 \dots t_{k-2}\f$ and
/// targets \f$t_1 \dots t_{k-1}\f$. The position-wise layers (embedding, layer norms, MLP,
/// unembedding) run on all rows at once; attention runs sentence by sentence, causal inside
/// each and blind to the others, which is what a block-diagonal causal mask over the whole
/// batch would compute, without the blocks that are all zero.
struct PackedBatch {
  arma::uvec tokens;   ///< `(N)`: the input tokens, sentence after sentence.
  arma::uvec targets;  ///< `(N)`: the token that follows each input token.
  arma::uvec starts;   ///< the first row of each sentence, from 0, increasing.
};

/// \brief Pack \p sentences (token ids) into one batch.
/// \param sentences each with at least 2 tokens. \return the batch.
/// \throws InputError if there is no sentence or one has fewer than 2 tokens.
PackedBatch pack_sentences(const std::vector<arma::uvec>& sentences);

/// \brief The position of each row in its own sentence: \f$i - \text{start}\f$.
/// \param rows \f$N\f$. \param starts as in PackedBatch. \return `(N)`.
/// \throws InputError unless \p starts begins with 0 and increases below \p rows.
arma::uvec positions_in_sentences(arma::uword rows, const arma::uvec& starts);

/// \brief One block's forward pass, kept for its backward pass.
struct BlockForward {
  arma::mat input;                   ///< `(N × d)`: \f$x^{(l)}\f$.
  LayerNorm ln1;                     ///< the normalised input to attention.
  std::vector<MultiHead> attention;  ///< per sentence: every head's weights and the output.
  arma::mat middle;                  ///< `(N × d)`: \f$u\f$, after the attention branch is added.
  LayerNorm ln2;                     ///< the normalised input to the MLP.
  FeedForward mlp;                   ///< the MLP's values.
  arma::mat output;                  ///< `(N × d)`: \f$x^{(l+1)}\f$.
};

/// \brief A whole forward pass.
struct TransformerForward {
  arma::mat x0;                      ///< `(N × d)`: embeddings plus positions.
  std::vector<BlockForward> blocks;  ///< one per block.
  LayerNorm ln_f;                    ///< the final layer norm.
  arma::mat logits;                  ///< `(N × V)`: \f$z\f$.
};

/// \brief The forward pass over packed sentences.
/// \param weights the model. \param tokens `(N)`, each below \f$V\f$.
/// \param starts the first row of each sentence (`{0}` for one sentence); each sentence is
///        at most TransformerConfig::max_length long.
/// \return every intermediate value, the logits last.
/// \throws InputError naming a token out of range, a sentence too long, bad \p starts, no
///         token, or a weight holding a NaN or an infinity (named as model_parameters() names
///         it, for example `blocks.0.attention.W_Q`).
/// \throws ShapeError if a weight does not have the shape \p weights' config gives it (both
///         shapes are named).
TransformerForward transformer_forward(const TransformerWeights& weights, const arma::uvec& tokens,
                                       const arma::uvec& starts);

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
///         vocabulary, or \p starts is bad.
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
/// \return the loss, the logits and the gradients.
/// \throws InputError, ShapeError as transformer_forward() and cross_entropy() do.
TransformerStep transformer_step(const TransformerWeights& weights, const PackedBatch& batch);

/// \brief The logits for the token after each token of one sentence (causal mask, positions
///        from 0).
/// \param weights the model. \param tokens `(n)`, with \f$1 \le n \le\f$ max_length.
/// \return `(n × V)`.
/// \throws InputError if \p tokens is empty or longer than max_length, or as
///         transformer_forward() does.
/// \throws ShapeError as transformer_forward() does.
arma::mat sentence_logits(const TransformerWeights& weights, const arma::uvec& tokens);

/// \brief Greedy decoding: append the most likely next token until \p stop or \p max_length.
/// \param weights the model. \param prompt at least one token. \param stop the end token.
/// \return the prompt followed by the tokens chosen (the prompt alone if it already reaches
///         max_length or ends with \p stop).
/// \throws InputError if \p prompt is empty, or as sentence_logits() does.
/// \throws ShapeError as sentence_logits() does.
arma::uvec greedy_continue(const TransformerWeights& weights, const arma::uvec& prompt,
                           arma::uword stop);

}  // namespace attn
