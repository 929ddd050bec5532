/// \file
/// \brief One block of the GPT in its readable form, written once: its forward pass over packed
///        sequences, its backward pass, and the one-token step of KV-cached decoding. (The
///        float32 training step, float32_step.hpp, composes the same block from attn::fast's
///        kernels, each held by its tests to attn::math's readable form.)
///
/// The pre-norm block (GPT-2's): each branch reads a normalised copy of the residual stream
/// and adds its result back,
/// \f[ u = x + \mathrm{MultiHead}\big(\mathrm{Norm}_1(x)\big), \qquad
///     x' = u + \mathrm{MLP}\big(\mathrm{Norm}_2(u)\big). \f]
/// The model's config chooses the norm (layer norm or RMSNorm), the MLP (GELU or SwiGLU), and
/// what attention does: causal over the whole sequence or a sliding window of \f$w\f$ tokens,
/// \f$g\f$ key/value heads, and rotary positions or none inside it.
/// The cached step shares the forward pass's code wherever it can: the norms, the
/// projections (attn::math::affine(), which multi_head_attention() uses), RoPE (rotary()) and
/// the whole MLP half are the same functions; only attention itself reads the cache
/// (attn::math::KVCache::attend(), where the forward pass uses attend()). The tests hold the
/// two within 1e-12 for every choice.
#pragma once

#include <attn/gpt/batch.hpp>
#include <attn/gpt/head_mask.hpp>
#include <attn/gpt/model.hpp>
#include <attn/math/kv_cache.hpp>
#include <attn/math/layers.hpp>
#include <attn/math/mask.hpp>
#include <attn/math/multi_head.hpp>

#include <armadillo>

#include <optional>
#include <vector>

namespace attn::gpt {

/// \brief Dropout while training, the identity otherwise: at rate \f$p > 0\f$ with uniform
///        draws, attn::math::dropout() of what it is given; with \f$p = 0\f$ or no draws, nothing.
struct Dropping {
  double rate = 0.0;         ///< \f$p \in [0, 1)\f$.
  math::UniformDraws draws;  ///< uniform draws in [0, 1), or empty to evaluate.
  /// \brief \param values what the layer computed. \param keep receives the mask (left empty
  ///        when nothing is dropped). \return the values, dropped out or as they were.
  arma::mat apply(arma::mat values, arma::mat& keep) const;
};

/// \brief A norm's values, of the kind the config chooses, with what its backward pass needs.
struct NormForward {
  Norm kind = Norm::layer_norm;  ///< which of the two below holds the values.
  math::LayerNorm layer;         ///< with Norm::layer_norm.
  math::RmsNorm rms;             ///< with Norm::rms_norm.
  /// \brief The normalised rows. \return `(N × d)`.
  [[nodiscard]] const arma::mat& y() const;
};

/// \brief Layer norm or RMSNorm of each row (attn::math::layer_norm(), attn::math::rms_norm()).
/// \param kind which. \param x `(N × d)`. \param gamma `(1 × d)`.
/// \param beta `(1 × d)` for a layer norm; ignored by RMSNorm.
/// \return the values. \throws as the norm does.
NormForward normalise(Norm kind, const arma::mat& x, const arma::rowvec& gamma,
                      const arma::rowvec& beta);

/// \brief The gradients of a loss through normalise().
struct NormGradients {
  arma::mat dx;         ///< `(N × d)`.
  arma::rowvec dgamma;  ///< `(1 × d)`.
  arma::rowvec dbeta;   ///< `(1 × d)` for a layer norm, empty for RMSNorm.
};

/// \brief The backward pass of normalise(). \param forward its values.
/// \param gamma `(1 × d)`. \param dy `(N × d)`. \return the gradients.
/// \throws as layer_norm_backward() or rms_norm_backward() does.
NormGradients normalise_backward(const NormForward& forward, const arma::rowvec& gamma,
                                 const arma::mat& dy);

/// \brief One block's forward pass, kept for its backward pass.
struct BlockForward {
  arma::mat input;                         ///< `(N × d)`: \f$x\f$.
  NormForward ln1;                         ///< the normalised input to attention.
  std::vector<math::MultiHead> attention;  ///< per sequence: every head's weights and the output.
  arma::mat attention_keep;                ///< the attention branch's dropout mask, or empty.
  arma::mat middle;           ///< `(N × d)`: \f$u\f$, after the attention branch is added.
  NormForward ln2;            ///< the normalised input to the MLP.
  math::FeedForward mlp;      ///< the GELU MLP's values (empty with SwiGLU).
  math::SwiGlu swiglu;        ///< the SwiGLU MLP's values (empty with GELU).
  arma::mat mlp_keep;         ///< the MLP branch's dropout mask, or empty.
  arma::mat output;           ///< `(N × d)`: \f$x'\f$.
  bool heads_masked = false;  ///< whether a head's output was replaced (head_mask.hpp).
};

/// \brief The attention mask of one sequence of \p n tokens: Mask::causal(), or
///        Mask::causal_window() if the config sets a window.
/// \param config the model's choices. \param n the sequence's length. \return `(n × n)`.
math::Mask attention_mask(const TransformerConfig& config, arma::uword n);

/// \brief The block over packed sequences: every sequence attends to itself, causally (within
///        the window, if there is one), its queries and keys turned by RoPE at positions 0, 1, ...
///        if the positions are rotary.
/// \param block the weights. \param config the model's choices.
/// \param x `(N × d)`: the residual stream.
/// \param sequences from sequence_rows(). \param dropping the branches' dropout.
/// \param masked_heads empty, or one entry a head (HeadMask::heads_of()): nothing keeps the
///        head, a `(1 × d_k)` row replaces its output at every token before \f$W_O\f$.
/// \return every value the backward pass needs, \f$x'\f$ last.
/// \throws ShapeError if \p masked_heads has neither no entry nor one a head, or a row is not
///         \f$d_k\f$ wide; as normalise(), multi_head_attention() and the MLP do.
BlockForward block_forward(const BlockWeights& block, const TransformerConfig& config,
                           const arma::mat& x, const std::vector<SequenceRows>& sequences,
                           const Dropping& dropping,
                           const std::vector<std::optional<arma::rowvec>>& masked_heads = {});

/// \brief A block's gradients.
struct BlockGradients {
  BlockWeights weights;  ///< \f$\partial L/\partial\f$ each of the block's weights.
  arma::mat dx;          ///< `(N × d)`: \f$\partial L/\partial x\f$.
};

/// \brief The backward pass of block_forward(): the residual passes \f$\partial L/\partial x'\f$
///        straight through and each branch adds its own gradient.
/// \param block,config,sequences as given to block_forward(). \param forward its result.
/// \param d_output `(N × d)`: \f$\partial L/\partial x'\f$.
/// \return the weights' gradients and \f$\partial L/\partial x\f$.
/// \throws InputError if \p forward masked a head: an ablation has no backward pass.
/// \throws as normalise_backward(), multi_head_backward() and the MLP's backward pass do.
BlockGradients block_backward(const BlockWeights& block, const TransformerConfig& config,
                              const BlockForward& forward,
                              const std::vector<SequenceRows>& sequences,
                              const arma::mat& d_output);

/// \brief A block's second half, for rows whose attention is done: \f$x' = u +
///        \mathrm{MLP}(\mathrm{Norm}(u))\f$ without dropout, or \f$x' = u\f$ with Mlp::none.
///        block_step() ends with it, and so does a decoder with a cache of its own
///        (streaming.hpp). \param block the weights. \param config the model's choices.
/// \param middle \f$u\f$, `(n × d)`, the residual stream after attention. \return \f$x'\f$.
arma::mat mlp_step(const BlockWeights& block, const TransformerConfig& config,
                   const arma::mat& middle);

/// \brief One new token through the block, its keys and values appended to \p caches (one
///        per key/value head): the last row of block_forward() over every token so far, at
///        \f$O(t\,d)\f$ attention work instead of \f$O(t^2 d)\f$ (with a window \f$w\f$,
///        \f$O(\min(t, w)\,d)\f$). Never drops out.
/// \param block the weights. \param config the model's choices.
/// \param x `(1 × d)`: the token's residual stream.
/// \param position the token's position in its sequence (where RoPE turns its query and key).
/// \param caches one KVCache per key/value head, holding the earlier tokens' keys (turned,
///        with RoPE) and values; with a window, caches that keep the last \f$w\f$.
/// \return `(1 × d)`: \f$x'\f$.
/// \throws ShapeError if there is not one cache per key/value head, or as
///         attn::math::KVCache does.
arma::mat block_step(const BlockWeights& block, const TransformerConfig& config, const arma::mat& x,
                     arma::uword position, std::vector<math::KVCache>& caches);

}  // namespace attn::gpt
