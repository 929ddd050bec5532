/// \file
/// \brief Attention's backward pass: how a change in the output flows back to Q, K, V, to the
///        projection matrices and to the embeddings.
///
/// Notation: the forward pass is \f$S = c\,Q K^\top\f$, \f$W =
/// \mathrm{softmax}_{\text{rows}}(S)\f$, \f$Z = W V\f$ (attend()). Given the gradient of a loss
/// with respect to the output, \f$\bar Z = \partial L / \partial Z\f$, these functions return the
/// gradients with respect to the inputs, written with a bar.
#pragma once

#include "attn/math/attention.hpp"

#include <armadillo>

namespace attn::math {

/// \brief The Jacobian of softmax for one row of weights: \f$ J = \mathrm{diag}(w) - w^\top w \f$.
///
/// \f$J_{jk} = \partial w_j / \partial s_k = w_j(\delta_{jk} - w_k)\f$. Every row of
/// \f$J\f$ sums to 0, because adding a constant to all scores leaves the weights unchanged.
/// \param weights `w: (1 × m)`, a softmax output.
/// \return `J: (m × m)`, symmetric.
/// \throws InputError if \p weights is empty or holds a NaN or an infinity.
arma::mat softmax_jacobian(const arma::rowvec& weights);

/// \brief Backward pass of the row-wise softmax (a Jacobian-vector product per row).
///
/// \f[ \bar S_{ij} = W_{ij} \Big(\bar W_{ij} - \sum_k \bar W_{ik} W_{ik}\Big) \f]
///
/// which is \f$\bar w J\f$ for each row, without forming \f$J\f$.
/// \param weights `W: (n × m)`, the forward pass's softmax output.
/// \param upstream `W̄: (n × m)`, the gradient with respect to the weights.
/// \return `S̄: (n × m)`, the gradient with respect to the scores.
/// \throws ShapeError unless both have the same shape (the message names both).
/// \throws InputError if \p weights (`W`) or \p upstream (`dW`) holds a NaN or an infinity.
arma::mat softmax_rows_backward(const arma::mat& weights, const arma::mat& upstream);

/// \brief Gradients of attend() with respect to its three inputs.
struct AttentionGradients {
  arma::mat dQ;  ///< `Q̄: (n × d_k)`
  arma::mat dK;  ///< `K̄: (m × d_k)`
  arma::mat dV;  ///< `V̄: (m × d_v)`
};

/// \brief Backward pass from the weights to the queries and keys.
///
/// \f[ \bar S = \text{softmax\_rows\_backward}(W, \bar W), \quad
///     \bar Q = c\,\bar S K, \quad \bar K = c\,\bar S^\top Q \f]
///
/// Used on its own when a loss looks at the weights directly (chapter 06 trains a head so that
/// one query's weights pick a target token).
/// \param Q `(n × d_k)`. \param K `(m × d_k)`. \param weights `W: (n × m)` from the forward pass.
/// \param dWeights `W̄: (n × m)`, the gradient with respect to the weights.
/// \param scale the \f$c\f$ used in the forward pass.
/// \return `Q̄` and `K̄`; `dV` is left empty.
/// \throws ShapeError if \p Q, \p K and \p weights do not fit together, or as
///         softmax_rows_backward() does (the message names both shapes).
/// \throws InputError if \p Q or \p K holds a NaN or an infinity, \p scale is not finite, or
///         as softmax_rows_backward() does.
AttentionGradients weights_backward(const arma::mat& Q, const arma::mat& K,
                                    const arma::mat& weights, const arma::mat& dWeights,
                                    double scale);

/// \brief Backward pass of \f$ Z = \mathrm{softmax}(c\,Q K^\top) V \f$.
///
/// \f[ \bar V = W^\top \bar Z, \quad \bar W = \bar Z V^\top, \quad
///     \bar S = \text{softmax\_rows\_backward}(W, \bar W), \quad
///     \bar Q = c\,\bar S K, \quad \bar K = c\,\bar S^\top Q \f]
///
/// \param Q `(n × d_k)`. \param K `(m × d_k)`. \param V `(m × d_v)`.
/// \param forward the result of `attend(Q, K, V, scale)`.
/// \param dZ `Z̄: (n × d_v)`, the gradient with respect to the output.
/// \param scale the \f$c\f$ used in the forward pass.
/// \return `Q̄, K̄, V̄`, each the shape of its input.
/// \throws ShapeError if \p dZ is not the shape of the forward output or \p V does not fit
///         it, or as weights_backward() does.
/// \throws InputError if \p dZ or \p V holds a NaN or an infinity, or as weights_backward()
///         does.
AttentionGradients attend_backward(const arma::mat& Q, const arma::mat& K, const arma::mat& V,
                                   const Attention& forward, const arma::mat& dZ, double scale);

/// \brief Gradients of self_attention() with respect to the embeddings and the projections.
struct SelfAttentionGradients {
  arma::mat dX;    ///< `X̄: (n × d_model)`
  Projections dW;  ///< `W̄_Q, W̄_K: (d_model × d_k)`, `W̄_V: (d_model × d_v)`
};

/// \brief Backward pass through the projections \f$Q = X W_Q\f$, \f$K = X W_K\f$, \f$V = X W_V\f$.
///
/// \f[ \bar W_Q = X^\top \bar Q, \quad \bar W_K = X^\top \bar K, \quad \bar W_V = X^\top \bar V \f]
///
/// \param X embeddings `(n × d_model)`. \param g the gradients with respect to Q, K and V
///        (an empty `dV` gives an empty `W̄_V`).
/// \return `W̄_Q, W̄_K: (d_model × d_k)`, `W̄_V: (d_model × d_v)`.
/// \throws ShapeError if a gradient does not have one row per row of \p X.
/// \throws InputError if \p X or a gradient holds a NaN or an infinity (it is named).
Projections projections_backward(const arma::mat& X, const AttentionGradients& g);

/// \brief Backward pass of self_attention(): through attend_backward(), then the projections.
///
/// \f[ \bar W_Q = X^\top \bar Q, \quad \bar W_K = X^\top \bar K, \quad \bar W_V = X^\top \bar V,
///     \quad \bar X = \bar Q W_Q^\top + \bar K W_K^\top + \bar V W_V^\top \f]
///
/// \param X embeddings `(n × d_model)`. \param W the head's matrices.
/// \param dZ `Z̄: (n × d_v)`, the gradient with respect to the output.
/// \return `X̄` and the three `W̄`.
/// \throws ShapeError, InputError as self_attention() and attend_backward() do.
SelfAttentionGradients self_attention_backward(const arma::mat& X, const Projections& W,
                                               const arma::mat& dZ);

}  // namespace attn::math
