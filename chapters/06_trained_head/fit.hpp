/// \file
/// \brief Training one head's query and key matrices with Adam until the gradient vanishes.
#pragma once

#include <attn/math/training.hpp>

#include <armadillo>

#include <vector>

namespace attn::ch06 {

/// \brief Everything that decides a training run, fixed before it starts.
struct FitSettings {
  double weight_decay = 0.0;   ///< \f$\lambda\f$ in attention_target_loss().
  double learning_rate = 0.0;  ///< Adam's step size \f$\eta\f$.
  double stop_gradient = 0.0;  ///< stop once \f$\lVert \nabla L \rVert\f$ is below this ...
  int max_steps = 0;           ///< ... or after this many updates, whichever comes first.
};

/// \brief The trained matrices and how training went.
struct HeadFit {
  arma::mat W_Q;                ///< `(d_model × d_k)`, trained.
  arma::mat W_K;                ///< `(d_model × d_k)`, trained.
  std::vector<double> losses;   ///< the loss before every update, then after the last one.
  double final_gradient = 0.0;  ///< \f$\lVert \nabla L \rVert\f$ where training stopped.
  bool converged = false;       ///< true when the gradient rule stopped it, not the step limit.
};

/// \brief The size of the whole gradient, both matrices together:
///
/// \f[ \lVert \nabla L \rVert = \sqrt{\lVert \partial L / \partial W_Q \rVert_F^2
///                                    + \lVert \partial L / \partial W_K \rVert_F^2} \f]
///
/// \param g a loss and its gradients `(d_model × d_k)` each.
/// \return \f$\lVert \nabla L \rVert\f$; 0 for empty gradients.
/// \throws InputError if `dW_Q` or `dW_K` holds a NaN or an infinity.
double gradient_norm(const math::LossGradient& g);

/// \brief Trains \f$W_Q, W_K\f$ with Adam to lower attention_target_loss():
///
/// \f[ (W_Q, W_K) \leftarrow \mathrm{Adam}\big(\nabla L(W_Q, W_K)\big)
///     \quad \text{until} \quad \lVert \nabla L \rVert < \text{stop\_gradient} \f]
///
/// The rule asks for a stationary point of the loss (where the gradient is nearly zero), not
/// for a number of steps; `max_steps` only guards against a run that never gets there. A
/// stationary point need not be a minimum: at \f$W_Q = W_K = 0\f$ the gradient is exactly zero
/// (a saddle when \f$\lambda\f$ is small), and a run started there meets any positive
/// `stop_gradient` at once.
/// \param examples the training sentences.
/// \param W_Q,W_K the starting matrices `(d_model × d_k)` each.
/// \param settings \f$\lambda\f$, \f$\eta\f$, the stopping rule and the step limit.
/// \return the trained matrices, the loss at every step and why training stopped.
/// \throws InputError as attention_target_loss() and Adam's constructor do (a NaN or negative
///         learning rate among them), or if `stop_gradient` is NaN or negative or `max_steps`
///         negative.
/// \throws ShapeError as attention_target_loss() does.
HeadFit fit_head(const std::vector<math::AttentionExample>& examples, arma::mat W_Q, arma::mat W_K,
                 const FitSettings& settings);

}  // namespace attn::ch06
