/// \file
/// \brief A decoder-only transformer (chapters 10 and 11): every earlier piece in one model,
///        with its forward pass, its backward pass and its parameters in a fixed order.
///
/// For input tokens \f$t_0 \dots t_{n-1}\f$ at positions \f$p_0 \dots p_{n-1}\f$:
///
/// \f[ x^{(0)}_i = E_{t_i} + P_{p_i} \f]
/// \f[ u = x^{(l)} + \mathrm{MultiHead}\big(\mathrm{LN}_1(x^{(l)})\big), \qquad
///     x^{(l+1)} = u + \mathrm{MLP}\big(\mathrm{LN}_2(u)\big) \f]
/// \f[ z = \mathrm{LN}_f(x^{(L)})\, W_U + b_U
///     \qquad\text{or, with tied embeddings,}\qquad z = \mathrm{LN}_f(x^{(L)})\, E^\top \f]
///
/// \f$E\f$ is the learned embedding `(V × d)`; \f$P\f$ the positions: chapter 07's sinusoidal
/// table (fixed), a learned table `(max_length × d)`, or nothing (TransformerConfig::positions).
/// MultiHead is the causal attention of chapter 08 with biases, MLP the GELU network of
/// layers.hpp, LN layer norm. This is the "pre-norm" block: each branch reads a normalised copy
/// of the residual stream and adds its result back. Row \f$i\f$ of the logits \f$z\f$ scores
/// every token of the vocabulary as the token after \f$t_i\f$. With tied embeddings (GPT-2's
/// choice, chapter 11) the output layer is the embedding read backwards: a token's logit is the
/// dot product of the final state with that token's own embedding row, and the model has no
/// \f$W_U, b_U\f$.
///
/// Training may drop out (chapter 11): with a rate \f$p > 0\f$ and a source of uniform draws,
/// the forward pass applies dropout() to \f$x^{(0)}\f$ and to each branch's output before it is
/// added to the residual stream (GPT-2's embedding and residual dropout; GPT-2 also drops the
/// attention weights, which this model does not).
#pragma once

#include <armadillo>
#include <functional>
#include <string>
#include <vector>
#include "attn/math/layers.hpp"
#include "attn/math/multi_head.hpp"
#include "attn/math/streaming.hpp"

namespace attn {

/// \brief The sizes of a model: everything that fixes the shapes of its weights.
struct TransformerConfig {
  arma::uword vocabulary = 0;      ///< \f$V\f$, the number of words.
  arma::uword d_model = 0;         ///< \f$d\f$, the width of the residual stream (even).
  arma::uword heads = 1;           ///< \f$h\f$, dividing \f$d\f$.
  arma::uword layers = 1;          ///< \f$L\f$, the number of blocks.
  arma::uword d_ff = 0;            ///< the MLP's hidden width.
  arma::uword max_length = 0;      ///< the longest input; positions run from 0 to this − 1.
  bool positions = true;           ///< whether \f$P\f$ is added (off for chapter 10's ablation).
  bool learned_positions = false;  ///< \f$P\f$ learned `(max_length × d)`, not sinusoidal.
  bool tied_embeddings = false;    ///< \f$z = \mathrm{LN}_f(x) E^\top\f$: no \f$W_U, b_U\f$.
  double dropout = 0.0;            ///< \f$p \in [0, 1)\f$, applied only when training.
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
  arma::mat position_embedding;      ///< `P: (max_length × d)` if learned, else empty.
  std::vector<BlockWeights> blocks;  ///< \f$L\f$ blocks, the first applied first.
  arma::rowvec lnf_gamma;            ///< `(1 × d)`: the final layer norm.
  arma::rowvec lnf_beta;             ///< `(1 × d)`.
  arma::mat unembedding;             ///< `W_U: (d × V)`, empty with tied embeddings.
  arma::rowvec unembedding_bias;     ///< `b_U: (1 × V)`, empty with tied embeddings.
};

/// \brief One learned matrix with the name PyTorch's `named_parameters()` would give it
///        (`blocks.0.attention.W_Q`, ...), in the order of model_parameters().
struct NamedParameter {
  std::string name;  ///< for messages and for matching a fixture.
  arma::mat* value;  ///< points into the TransformerWeights it was taken from.
};

/// \brief Every learned matrix of \p weights, in a fixed order: the embedding, the learned
///        positions (if learned), then per block ln1 (gamma, beta), W_Q, W_K, W_V, W_O, b_Q, b_K,
///        b_V, b_O, ln2 (gamma, beta), W1, b1, W2, b2; then the final layer norm, and
///        \f$W_U\f$, \f$b_U\f$ unless the embeddings are tied.
/// \param weights the model (or a gradient of it). \return pointers into \p weights.
std::vector<NamedParameter> model_parameters(TransformerWeights& weights);

/// \brief The number of learned numbers: \f$Vd + L(4d^2 + 4d + 2 d\,d_{ff} + d_{ff} + d + 4d)
///        + 2d\f$, plus \f$dV + V\f$ unless the embeddings are tied, plus
///        \f$d \cdot \text{max\_length}\f$ if the positions are learned.
/// \param config the sizes. \return the count.
/// \throws InputError if a size is 0, \f$d\f$ is odd, \f$h \nmid d\f$ or the dropout rate is
///         outside [0, 1).
arma::uword parameter_count(const TransformerConfig& config);

/// \brief A new model, drawn from \p standard_normal in the order of model_parameters():
///        \f$E\f$ from \f$N(0, 1)\f$; every other matrix from \f$N(0, 1/\text{fan-in})\f$,
///        except \f$W_U\f$ from \f$N(0, 0.02^2)\f$ so that the first logits are near 0 and the
///        first loss near \f$\ln V\f$; biases 0; layer norms' gamma 1 and beta 0. With tied
///        embeddings \f$E\f$ is the output layer too, so it is drawn from \f$N(0, 0.02^2)\f$
///        for the same reason; learned positions are drawn from \f$N(0, 0.02^2)\f$ as well.
/// \param config the sizes.
/// \param standard_normal returns a `(rows × cols)` matrix of \f$N(0, 1)\f$ draws (the book
///        passes numpy's `default_rng(seed).normal(size=(rows, cols))`).
/// \return the weights.
/// \throws InputError if a size is 0, \f$d\f$ is odd, \f$h \nmid d\f$, the dropout rate is
///         outside [0, 1), or a draw holds a NaN or an infinity.
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
  arma::mat attention_keep;          ///< the attention branch's dropout mask, or empty.
  arma::mat middle;                  ///< `(N × d)`: \f$u\f$, after the attention branch is added.
  LayerNorm ln2;                     ///< the normalised input to the MLP.
  FeedForward mlp;                   ///< the MLP's values.
  arma::mat mlp_keep;                ///< the MLP branch's dropout mask, or empty.
  arma::mat output;                  ///< `(N × d)`: \f$x^{(l+1)}\f$.
};

/// \brief A whole forward pass.
struct TransformerForward {
  arma::mat x0_keep;                 ///< the dropout mask of the embeddings' sum, or empty.
  arma::mat x0;                      ///< `(N × d)`: embeddings plus positions (dropped out).
  std::vector<BlockForward> blocks;  ///< one per block.
  LayerNorm ln_f;                    ///< the final layer norm.
  arma::mat logits;                  ///< `(N × V)`: \f$z\f$.
};

/// \brief The forward pass over packed sentences.
/// \param weights the model. \param tokens `(N)`, each below \f$V\f$.
/// \param starts the first row of each sentence (`{0}` for one sentence); each sentence is
///        at most TransformerConfig::max_length long.
/// \param dropout_draws null to evaluate (no dropout); to train with
///        TransformerConfig::dropout above 0, the uniform draws in [0, 1) that dropout() takes.
/// \return every intermediate value, the logits last.
/// \throws InputError naming a token out of range, a sentence too long, bad \p starts, no
///         token, or a weight holding a NaN or an infinity (named as model_parameters() names
///         it, for example `blocks.0.attention.W_Q`).
/// \throws ShapeError if a weight does not have the shape \p weights' config gives it (both
///         shapes are named).
TransformerForward transformer_forward(const TransformerWeights& weights, const arma::uvec& tokens,
                                       const arma::uvec& starts,
                                       const UniformDraws* dropout_draws = nullptr);

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
/// \param dropout_draws as for transformer_forward(): null for no dropout.
/// \return the loss, the logits and the gradients.
/// \throws InputError, ShapeError as transformer_forward() and cross_entropy() do.
TransformerStep transformer_step(const TransformerWeights& weights, const PackedBatch& batch,
                                 const UniformDraws* dropout_draws = nullptr);

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

/// \brief Decoding one token at a time through chapter 09's KV cache: each block keeps the keys
///        and values of the tokens read so far, one KVCache per head, so that a new token costs
///        one query per head instead of a whole forward pass over the prefix.
///
/// Token \f$t\f$ (at position \f$t\f$) runs the same equations as transformer_forward() on one
/// row: its key and value rows are appended to each head's cache and its query attends to
/// rows \f$0 \dots t\f$, which is row \f$t\f$ of the causal attention over the prefix. So the
/// logits it returns are the last row of transformer_forward() on tokens \f$0 \dots t\f$ (the
/// tests hold them within 1e-12), at \f$O(t\,d)\f$ attention work per block instead of
/// \f$O(t^2 d)\f$. Dropout is never applied: this is for generating, not training.
/// The decoder reads the weights it was made with; they must outlive it and not change.
class CachedDecoder {
 public:
  /// \brief An empty decoder. \param weights the model.
  /// \throws InputError, ShapeError as transformer_forward() does for bad weights.
  explicit CachedDecoder(const TransformerWeights& weights);

  /// \brief Reads one more token. \param token below \f$V\f$.
  /// \return `(1 × V)`: the logits for the token after it.
  /// \throws InputError if \p token is outside the vocabulary, or the decoder already holds
  ///         max_length tokens (the model has no position for another: start a new decoder
  ///         on the text's last tokens).
  arma::rowvec append(arma::uword token);

  /// \brief The number of tokens read. \return \f$t\f$.
  arma::uword size() const { return length_; }

 private:
  const TransformerWeights* weights_;
  std::vector<std::vector<KVCache>> caches_;  // [block][head]
  arma::uword length_ = 0;
};

}  // namespace attn
