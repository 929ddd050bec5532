#include "attn/math/training.hpp"

#include "attn/math/attention.hpp"
#include "attn/math/backward.hpp"
#include "attn/math/softmax.hpp"
#include "attn/math/validate.hpp"

#include <fmt/format.h>

#include <cmath>

namespace attn {

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

Adam::Adam(double learning_rate, double beta1, double beta2, double epsilon)
    : learning_rate_(learning_rate), beta1_(beta1), beta2_(beta2), epsilon_(epsilon) {
  if (!std::isfinite(learning_rate) || learning_rate < 0)
    throw InputError(
        fmt::format("Adam: the learning rate {} must be finite and at least 0", learning_rate));
  for (const auto& [name, beta] : {std::pair{"beta1", beta1}, std::pair{"beta2", beta2}})
    if (!(beta >= 0.0 && beta < 1.0))
      throw InputError(fmt::format("Adam: {} = {} must be in [0, 1)", name, beta));
  if (!std::isfinite(epsilon) || !(epsilon > 0))
    throw InputError(fmt::format("Adam: epsilon = {} must be finite and positive", epsilon));
}

void Adam::step(const std::vector<arma::mat*>& parameters,
                const std::vector<arma::mat>& gradients) {
  if (parameters.size() != gradients.size())
    throw ShapeError(
        fmt::format("Adam: {} parameters but {} gradients", parameters.size(), gradients.size()));
  for (std::size_t i = 0; i < parameters.size(); ++i)
    if (parameters[i] == nullptr)
      throw InputError(fmt::format("Adam: parameter {} is a null pointer", i));
  if (first_.empty())
    for (const arma::mat* p : parameters) {
      first_.emplace_back(arma::size(*p), arma::fill::zeros);
      second_.emplace_back(arma::size(*p), arma::fill::zeros);
    }
  if (first_.size() != parameters.size())
    throw ShapeError("Adam: the number of parameters changed between steps");
  // Every shape is checked before anything moves, so a bad call leaves the optimiser as it was.
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    require_same_rows("Adam step", "parameter", *parameters[i], "gradient", gradients[i]);
    require_same_cols("Adam step", "parameter", *parameters[i], "gradient", gradients[i]);
    require_same_rows("Adam step", "parameter", *parameters[i], "its first step", first_[i]);
    require_same_cols("Adam step", "parameter", *parameters[i], "its first step", first_[i]);
    require_finite(fmt::format("Adam step: gradient {}", i), gradients[i]);
  }
  //! [adam-step]
  ++steps_;
  const double correct1 = 1.0 - std::pow(beta1_, steps_);
  const double correct2 = 1.0 - std::pow(beta2_, steps_);
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    first_[i] = beta1_ * first_[i] + (1.0 - beta1_) * gradients[i];
    second_[i] = beta2_ * second_[i] + (1.0 - beta2_) * arma::square(gradients[i]);
    *parameters[i] -=
        learning_rate_ * (first_[i] / correct1) / (arma::sqrt(second_[i] / correct2) + epsilon_);
  }
  //! [adam-step]
}

}  // namespace attn
