#include "fit.hpp"

#include <attn/math/optimizer.hpp>
#include <attn/math/validate.hpp>

#include <fmt/format.h>

#include <cmath>
#include <utility>

namespace attn::ch06 {

double gradient_norm(const math::LossGradient& g) {
  math::require_finite("dW_Q", g.dW_Q);
  math::require_finite("dW_K", g.dW_K);
  return std::sqrt(arma::accu(arma::square(g.dW_Q)) + arma::accu(arma::square(g.dW_K)));
}

HeadFit fit_head(const std::vector<math::AttentionExample>& examples, arma::mat W_Q, arma::mat W_K,
                 const FitSettings& settings) {
  if (std::isnan(settings.stop_gradient) || settings.stop_gradient < 0 || settings.max_steps < 0)
    throw math::InputError(
        fmt::format("fit_head: stop_gradient = {} and max_steps = {} must be at "
                    "least 0",
                    settings.stop_gradient, settings.max_steps));
  //! [fit-head]
  HeadFit fit;
  math::AdamW adam({false, false}, 0.0);  // Adam: AdamW with its own decay off
  for (int step = 0;; ++step) {
    const math::LossGradient g =
        math::attention_target_loss(examples, W_Q, W_K, settings.weight_decay);
    fit.losses.push_back(g.loss);
    fit.final_gradient = gradient_norm(g);
    fit.converged = fit.final_gradient < settings.stop_gradient;
    if (fit.converged || step >= settings.max_steps)
      break;
    adam.step({&W_Q, &W_K}, {g.dW_Q, g.dW_K}, settings.learning_rate);
  }
  fit.W_Q = std::move(W_Q);
  fit.W_K = std::move(W_K);
  return fit;
  //! [fit-head]
}

}  // namespace attn::ch06
