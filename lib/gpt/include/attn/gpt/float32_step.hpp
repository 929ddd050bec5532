/// \file
/// \brief The GPT's training step in single precision, written for speed: what
///        transformer_step() computes, in `float`, for the whole batch at once.
///
/// transformer_step() is the reference: every layer in its readable form, in double, equal to
/// PyTorch within \f$10^{-10}\f$. Float32Step computes the same loss and the same gradients in
/// `float` (within \f$10^{-4}\f$ of each gradient's largest entry; the tests hold it to the
/// reference), several times as fast (bench/training_bench.cpp measures both). It is a
/// composition: each piece below is a kernel of attn::fast, a forward and a backward function
/// (fast/norms.hpp, fast/activations.hpp, fast/linear.hpp, fast/embedding.hpp,
/// fast/causal_attention.hpp, fast/cross_entropy.hpp) tested alone against its readable twin in
/// attn::math; Float32Step rounds the weights to `float`, calls the kernels in the block's order
/// and widens the gradients back. Where the time goes decides how the kernels are written:
///
/// - The activations are kept one column per token, \f$x^\top\f$ `(d × N)`, so that a token's
///   norm, its GELU and its softmax over the vocabulary run over contiguous memory.
/// - Every product with a weight is one GEMM over the whole batch (BLAS `sgemm`): the three
///   projections \f$W_Q, W_K, W_V\f$ as one \f$W_{QKV}\f$ `(d × 3d)`, then \f$W_O\f$,
///   \f$W_1\f$, \f$W_2\f$ and the tied output layer \f$E^\top\f$. These are about nine tenths of
///   the step's arithmetic (for GPT-2's block, chapter 11's).
/// - Attention runs per sentence and head, on the columns of \f$Q, K, V\f$ in place: the scores
///   \f$S^\top = K_h^\top Q_h / \sqrt{d_k}\f$ (one column per query, so its causal softmax is
///   over the contiguous keys \f$0 \dots i\f$), \f$O_h = V_h P^\top\f$, and the backward pass's
///   four products, each an `sgemm`. The probabilities are kept for the backward pass.
/// - Softmax and cross-entropy over the vocabulary are one pass per token forwards, which leaves
///   the exponentials \f$e^{z - \max z}\f$ where the logits were, and one backwards, which
///   scales them into \f$\partial L/\partial z = (p - \mathrm{onehot})/N\f$ in place.
/// - The exponentials are attn::fast::exp_shifted()'s vectorised ones; GELU's
///   \f$\Phi(x) = \tfrac12(1 + \mathrm{erf}(x/\sqrt2))\f$ takes erf from Abramowitz and
///   Stegun's formula 7.1.26, \f$1 - (a_1 t + \dots + a_5 t^5)\,e^{-x^2}\f$ with
///   \f$t = 1/(1 + p x)\f$, whose error is below \f$1.5 \cdot 10^{-7}\f$, about `float`'s own
///   rounding, so that it too vectorises.
/// - Two threads (OpenMP) share every loop: the GEMMs by columns of their result, attention by
///   (sentence, head), the per-token passes by token; OpenBLAS itself is held to one thread
///   meanwhile (attn::fast::OneThread), so that the two never compete for the cores.
///
/// Every choice of TransformerConfig's block is computed too, in any combination, each where
/// the same layout makes it cheapest (GPT-2's block pays nothing for them):
///
/// - **Rotary positions** (RoPE): after the \f$W_{QKV}\f$ product, every query head's and key
///   head's pairs of rows \f$(2i, 2i+1)\f$ of a token's column are turned in place by
///   \f$p\,\theta_i\f$, \f$\theta_i = 10000^{-2i/d_k}\f$, at the token's position \f$p\f$ in
///   its sentence (attn::math::rotary()'s interleaved pairs), from tables of
///   \f$\cos p\,\theta_i\f$ and \f$\sin p\,\theta_i\f$ made once; the backward pass turns
///   the gradients of \f$Q\f$ and \f$K\f$ back (the transposed rotation) before the weights'
///   product.
/// - **Grouped-query attention** (\f$g\f$ key/value heads): \f$W_{QKV}\f$ is
///   `(d × (d + 2 g d_k))` and query head \f$k\f$ reads key/value head \f$k/(h/g)\f$ where it lies.
///   The backward pass sums a shared head's \f$\partial L/\partial K\f$ and
///   \f$\partial L/\partial V\f$ over its group: the threads divide the (sentence, key/value
///   head) pairs among them, and each takes its pair's query heads in turn, so that no two
///   threads add to the same columns.
/// - **A sliding window** of \f$w\f$ keys: query \f$i\f$'s softmax runs over keys
///   \f$i - w < j \le i\f$ (the others get weight exactly 0), and the blocks of the products
///   wholly below that band are skipped, as those above the diagonal are.
/// - **RMSNorm**: \f$\gamma \odot x / \sqrt{\mathrm{mean}(x^2) + 10^{-5}}\f$ per token, before
///   each branch and at the end, with no \f$\beta\f$ (its gradients are left empty).
/// - **SwiGLU**: \f$W_\text{gate}\f$ and \f$W_\text{up}\f$ side by side as one product
///   `(d × 2 d_ff)`, then \f$\mathrm{silu}(\text{gate}) \odot \text{up}\f$ with the logistic
///   \f$\sigma\f$ from the same vectorised exponential (of \f$-|a|\f$, which never overflows),
///   then \f$W_\text{down}\f$; no biases.
/// - **Attention without biases**: \f$b_{QKV}\f$ and \f$b_O\f$ are left empty, and the linear
///   kernels then add no bias and compute no bias gradient.
///
/// The weights stay `TransformerWeights` in double: the optimiser updates them in double (as
/// mixed-precision training keeps a full-precision master copy), and the step rounds them to
/// `float` as it starts. Dropout and an untied output layer are the reference's alone.
#pragma once

#include <attn/gpt/batch.hpp>
#include <attn/gpt/forward.hpp>
#include <attn/gpt/model.hpp>

#include <memory>
#include <string>

namespace attn::gpt {

/// \brief transformer_step() in `float`, for models with tied embeddings and no dropout
///        (chapter 11's), with any of the block's choices (positions, key/value heads, window,
///        norm, MLP). It keeps its working memory from one step to the next, so a trainer makes
///        one and runs it every step.
class Float32Step {
 public:
  /// \brief A step for models of these sizes.
  /// \param config the sizes.
  /// \throws InputError as check_config() does, or with refusal()'s reason if the step does
  ///         not support the configuration (untied embeddings and dropout are
  ///         transformer_step()'s).
  explicit Float32Step(const TransformerConfig& config);

  /// \brief Whether this step computes models of this configuration: those with tied
  ///        embeddings and no dropout, whatever their other choices.
  /// \param config the sizes and choices. \return whether refusal() is empty.
  [[nodiscard]] static bool supports(const TransformerConfig& config);

  /// \brief Why this step does not compute models of this configuration, naming the field
  ///        (`"dropout 0.1: ..."`), or empty if it does.
  /// \param config the sizes and choices. \return the reason, or empty.
  [[nodiscard]] static std::string refusal(const TransformerConfig& config);
  ~Float32Step();
  /// \brief Takes over \p other's working memory. \param other left empty.
  Float32Step(Float32Step&& other) noexcept;
  /// \brief Takes over \p other's working memory. \param other left empty. \return this.
  Float32Step& operator=(Float32Step&& other) noexcept;
  Float32Step(const Float32Step&) = delete;
  Float32Step& operator=(const Float32Step&) = delete;

  /// \brief Forward pass, mean cross-entropy against the batch's targets, backward pass.
  /// \param weights the model, of the sizes given at construction (rounded to `float`).
  /// \param batch from pack_sentences().
  /// \return the loss and the gradients, in double; `logits` is left empty. They are this
  ///         object's, overwritten by the next call: once the first step has sized it, a step
  ///         allocates no memory.
  /// \throws InputError, ShapeError as transformer_step() does, and ShapeError naming the
  ///         first field (difference()) if \p weights' configuration is not the one given at
  ///         construction.
  const TransformerStep& run(const TransformerWeights& weights, const PackedBatch& batch);

  /// \brief The forward pass and the loss alone, to measure a model.
  /// \param weights the model. \param batch the text to score.
  /// \return the mean cross-entropy over the batch's rows (nats per token).
  /// \throws as run() does.
  double loss(const TransformerWeights& weights, const PackedBatch& batch);

  /// \brief The forward pass alone, each row's cost: \f$-\ln p(\text{target}_i)\f$.
  /// \param weights the model. \param batch the text to score.
  /// \return `(N)` nats, one per row of \p batch; loss() is their mean.
  /// \throws as run() does.
  arma::vec row_losses(const TransformerWeights& weights, const PackedBatch& batch);

 private:
  struct Work;
  std::unique_ptr<Work> work_;
};

}  // namespace attn::gpt
