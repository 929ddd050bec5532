/// \file
/// \brief One block of the GPT, written once: its forward pass over packed sequences, its
///        backward pass, and the one-token step of KV-cached decoding.
///
/// The pre-norm block (GPT-2's): each branch reads a layer-normalised copy of the residual
/// stream and adds its result back,
/// \f[ u = x + \mathrm{MultiHead}\big(\mathrm{LN}_1(x)\big), \qquad
///     x' = u + \mathrm{MLP}\big(\mathrm{LN}_2(u)\big). \f]
/// The cached step shares the forward pass's code wherever it can: the layer norms, the
/// projections (attn::math::affine(), which multi_head_attention() uses) and the whole MLP half
/// are the same functions; only attention itself reads the cache (attn::math::KVCache::attend(),
/// chapter 09's online softmax, where the forward pass uses attend()). The tests hold the two
/// within 1e-12.
#pragma once

#include <attn/gpt/batch.hpp>
#include <attn/gpt/model.hpp>
#include <attn/math/kv_cache.hpp>
#include <attn/math/layers.hpp>
#include <attn/math/multi_head.hpp>

#include <armadillo>

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

/// \brief One block's forward pass, kept for its backward pass.
struct BlockForward {
  arma::mat input;                         ///< `(N × d)`: \f$x\f$.
  math::LayerNorm ln1;                     ///< the normalised input to attention.
  std::vector<math::MultiHead> attention;  ///< per sequence: every head's weights and the output.
  arma::mat attention_keep;                ///< the attention branch's dropout mask, or empty.
  arma::mat middle;       ///< `(N × d)`: \f$u\f$, after the attention branch is added.
  math::LayerNorm ln2;    ///< the normalised input to the MLP.
  math::FeedForward mlp;  ///< the MLP's values.
  arma::mat mlp_keep;     ///< the MLP branch's dropout mask, or empty.
  arma::mat output;       ///< `(N × d)`: \f$x'\f$.
};

/// \brief The block over packed sequences: every sequence attends to itself, causally.
/// \param block the weights. \param x `(N × d)`: the residual stream.
/// \param sequences from sequence_rows(). \param dropping the branches' dropout.
/// \return every value the backward pass needs, \f$x'\f$ last.
/// \throws as layer_norm(), multi_head_attention() and feed_forward() do.
BlockForward block_forward(const BlockWeights& block, const arma::mat& x,
                           const std::vector<SequenceRows>& sequences, const Dropping& dropping);

/// \brief A block's gradients.
struct BlockGradients {
  BlockWeights weights;  ///< \f$\partial L/\partial\f$ each of the block's weights.
  arma::mat dx;          ///< `(N × d)`: \f$\partial L/\partial x\f$.
};

/// \brief The backward pass of block_forward(): the residual passes \f$\partial L/\partial x'\f$
///        straight through and each branch adds its own gradient.
/// \param block,sequences as given to block_forward(). \param forward its result.
/// \param d_output `(N × d)`: \f$\partial L/\partial x'\f$.
/// \return the weights' gradients and \f$\partial L/\partial x\f$.
/// \throws as layer_norm_backward(), multi_head_backward() and feed_forward_backward() do.
BlockGradients block_backward(const BlockWeights& block, const BlockForward& forward,
                              const std::vector<SequenceRows>& sequences,
                              const arma::mat& d_output);

/// \brief One new token through the block, its keys and values appended to \p caches (one
///        per head): the last row of block_forward() over every token so far, at
///        \f$O(t\,d)\f$ attention work instead of \f$O(t^2 d)\f$. Never drops out.
/// \param block the weights. \param x `(1 × d)`: the token's residual stream.
/// \param caches one KVCache per head, holding the earlier tokens' keys and values.
/// \return `(1 × d)`: \f$x'\f$.
/// \throws ShapeError if there is not one cache per head, or as attn::math::KVCache does.
arma::mat block_step(const BlockWeights& block, const arma::mat& x,
                     std::vector<math::KVCache>& caches);

}  // namespace attn::gpt
