/// \file
/// \brief Training one attention head so that chosen queries attend to chosen keys.
#pragma once

#include <armadillo>

#include <string>
#include <vector>

namespace attn::math {

/// \brief One sentence and the token that one of its queries should attend to.
struct AttentionExample {
  std::vector<std::string> tokens;  ///< the sentence's tokens, one per row of `X`.
  arma::mat X;                      ///< embeddings `(n × d_model)`.
  arma::uword query = 0;            ///< the asking token (for example "it").
  arma::uword target = 0;           ///< the token it should attend to (its antecedent).
};

/// \brief A loss value and its gradients with respect to the query and key matrices.
struct LossGradient {
  double loss = 0.0;  ///< the value of the loss.
  arma::mat dW_Q;     ///< `∂L/∂W_Q: (d_model × d_k)`.
  arma::mat dW_K;     ///< `∂L/∂W_K: (d_model × d_k)`.
};

/// \brief Cross-entropy of each example's query row against its target, plus weight decay.
///
/// With \f$W^{(s)} = \mathrm{softmax}_{\text{rows}}\!\big((X_s W_Q)(X_s W_K)^\top /
/// \sqrt{d_k}\big)\f$ for example \f$s\f$ of \f$N\f$: \f[ L = -\frac{1}{N} \sum_s \log W^{(s)}_{q_s
/// t_s}
///       + \frac{\lambda}{2}\left(\lVert W_Q \rVert_F^2 + \lVert W_K \rVert_F^2\right) \f]
///
/// The first term rewards weight on the target; the second keeps the matrices small, so the
/// head settles where a larger weight on the target no longer pays for larger matrices,
/// instead of growing until softmax is one-hot. Gradients go through weights_backward() and
/// projections_backward().
/// \param examples the training sentences. \param W_Q `(d_model × d_k)`. \param W_K `(d_model ×
/// d_k)`. \param weight_decay \f$\lambda \ge 0\f$. \return \f$L\f$ and its gradients. \throws
/// InputError if \p examples is empty, an index is not a row of its sentence,
///         \p weight_decay is negative, NaN or infinite, \p W_Q, \p W_K or an example's `X`
///         holds a NaN or an infinity (it is named), or a target's weight underflows to 0
///         (the loss would be infinite).
/// \throws ShapeError if an example's `X` does not have `d_model` columns (both shapes named).
LossGradient attention_target_loss(const std::vector<AttentionExample>& examples,
                                   const arma::mat& W_Q, const arma::mat& W_K, double weight_decay);

}  // namespace attn::math
