#include "attn/math/training.hpp"

#include "attn/math/attention.hpp"
#include "attn/math/backward.hpp"
#include "attn/math/softmax.hpp"
#include "attn/math/validate.hpp"

#include <fmt/format.h>

#include <cmath>

namespace attn::math {

LossGradient attention_target_loss(const std::vector<AttentionExample>& examples,
                                   const arma::mat& W_Q, const arma::mat& W_K,
                                   double weight_decay) {
  if (examples.empty())
    throw InputError("attention_target_loss needs at least one example");
  if (!std::isfinite(weight_decay) || weight_decay < 0)
    throw InputError(
        fmt::format("attention_target_loss: the weight decay {} must be finite and "
                    "at least 0",
                    weight_decay));
  require_finite("W_Q", W_Q);
  require_finite("W_K", W_K);
  const double scale = score_scale(W_K.n_cols);
  const double share = 1.0 / static_cast<double>(examples.size());
  LossGradient result{0.0, weight_decay * W_Q, weight_decay * W_K};
  result.loss =
      0.5 * weight_decay * (arma::accu(arma::square(W_Q)) + arma::accu(arma::square(W_K)));
  for (const AttentionExample& e : examples) {
    if (e.query >= e.X.n_rows || e.target >= e.X.n_rows)
      throw InputError(fmt::format("example with {} tokens: query {} or target {} is not a token",
                                   e.X.n_rows, e.query, e.target));
    require_multipliable("Q = X W_Q", "X", e.X, "W_Q", W_Q);
    require_multipliable("K = X W_K", "X", e.X, "W_K", W_K);
    require_finite("X", e.X);
    const arma::mat Q = e.X * W_Q, K = e.X * W_K;                           // (n × d_k) each
    const arma::mat weights = softmax_rows(attention_scores(Q, K, scale));  // (n × n)
    if (weights(e.query, e.target) == 0.0)  // log 0 = −∞, and ∂L/∂W would divide by 0
      throw InputError(
          fmt::format("attention_target_loss: the weight of query {} on target {} "
                      "underflowed to 0, so the loss is infinite; W_Q or W_K is too "
                      "large",
                      e.query, e.target));
    result.loss -= share * std::log(weights(e.query, e.target));
    arma::mat dWeights(arma::size(weights), arma::fill::zeros);  // ∂L/∂W: one non-zero entry
    dWeights(e.query, e.target) = -share / weights(e.query, e.target);
    const Projections d =
        projections_backward(e.X, weights_backward(Q, K, weights, dWeights, scale));
    result.dW_Q += d.W_Q;
    result.dW_K += d.W_K;
  }
  return result;
}

}  // namespace attn::math
