#include "attn/math/optimizer.hpp"

#include "attn/math/validate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <utility>

namespace attn::math {

namespace {

// Throws ShapeError naming both matrices and their shapes unless they have the same shape.
void require_same_shape(std::string_view op, const std::string& a_name, const arma::mat& a,
                        const std::string& b_name, const arma::mat& b) {
  if (a.n_rows != b.n_rows || a.n_cols != b.n_cols)
    throw ShapeError(fmt::format("{}: {} is {} but {} is {}; they must have the same shape", op,
                                 a_name, shape_of(a), b_name, shape_of(b)));
}

}  // namespace

namespace {

// One Update per flag: λ for a parameter that decays, 0 for one that does not.
std::vector<AdamW::Update> updates_of(const std::vector<bool>& decays, double weight_decay) {
  if (!std::isfinite(weight_decay) || !(weight_decay >= 0))
    throw InputError(
        fmt::format("AdamW: the weight decay {} must be finite and at least 0", weight_decay));
  std::vector<AdamW::Update> updates;
  for (const bool decays_here : decays)
    updates.push_back({.weight_decay = decays_here ? weight_decay : 0.0, .rate_factor = 1.0});
  return updates;
}

}  // namespace

AdamW::AdamW(std::vector<bool> decays, double weight_decay, double beta1, double beta2,
             double epsilon)
    : AdamW(updates_of(decays, weight_decay), beta1, beta2, epsilon) {}

AdamW::AdamW(std::span<const Update> updates, double beta1, double beta2, double epsilon)
    : updates_(updates.begin(), updates.end()), beta1_(beta1), beta2_(beta2), epsilon_(epsilon) {
  for (std::size_t i = 0; i < updates_.size(); ++i) {
    const Update& u = updates_[i];
    if (!std::isfinite(u.weight_decay) || !(u.weight_decay >= 0))
      throw InputError(
          fmt::format("AdamW: the weight decay {} of parameter {} must be finite and at least 0",
                      u.weight_decay, i));
    if (!std::isfinite(u.rate_factor) || !(u.rate_factor >= 0))
      throw InputError(
          fmt::format("AdamW: the rate factor {} of parameter {} must be finite and at least 0",
                      u.rate_factor, i));
  }
  for (const auto& [name, beta] : {std::pair{"beta1", beta1}, std::pair{"beta2", beta2}})
    if (!(beta >= 0.0 && beta < 1.0))
      throw InputError(fmt::format("AdamW: {} = {} must be in [0, 1)", name, beta));
  if (!std::isfinite(epsilon) || !(epsilon > 0))
    throw InputError(fmt::format("AdamW: epsilon = {} must be finite and positive", epsilon));
}

void AdamW::step(const std::vector<arma::mat*>& parameters, const std::vector<arma::mat>& gradients,
                 double learning_rate) {
  if (!std::isfinite(learning_rate) || !(learning_rate >= 0))
    throw InputError(fmt::format("AdamW step: the learning rate {} must be finite and at least 0",
                                 learning_rate));
  if (parameters.size() != updates_.size())
    throw ShapeError(fmt::format("AdamW step: {} parameters, but {} given at construction",
                                 parameters.size(), updates_.size()));
  if (gradients.size() != parameters.size())
    throw ShapeError(fmt::format("AdamW step: {} parameters but {} gradients", parameters.size(),
                                 gradients.size()));
  // Everything is checked before anything moves, so a bad call leaves the optimiser and the
  // parameters as they were.
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    if (parameters[i] == nullptr)
      throw InputError(fmt::format("AdamW step: parameter {} is a null pointer", i));
    const std::string parameter = fmt::format("parameter {}", i);
    require_same_shape("AdamW step", fmt::format("gradient {}", i), gradients[i], parameter,
                       *parameters[i]);
    if (!state_.first.empty())
      require_same_shape("AdamW step", parameter, *parameters[i],
                         "the shape of its moments from earlier steps", state_.first[i]);
    require_finite(fmt::format("AdamW step: gradient {}", i), gradients[i]);
  }
  if (state_.first.empty())
    for (const arma::mat* p : parameters) {
      state_.first.emplace_back(arma::size(*p), arma::fill::zeros);
      state_.second.emplace_back(arma::size(*p), arma::fill::zeros);
    }
  //! [adamw-step]
  ++state_.steps;
  const double t = static_cast<double>(state_.steps);
  const double correct1 = 1.0 - std::pow(beta1_, t);
  const double correct2_sqrt = std::sqrt(1.0 - std::pow(beta2_, t));
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    arma::mat& theta = *parameters[i];
    const arma::mat& g = gradients[i];
    arma::mat &m = state_.first[i], &v = state_.second[i];
    const double rate = learning_rate * updates_[i].rate_factor;  // its group's
    const double step_size = rate / correct1;
    if (updates_[i].weight_decay != 0.0)
      theta *= 1.0 - rate * updates_[i].weight_decay;  // decoupled: g does not see it
    m = beta1_ * m + (1.0 - beta1_) * g;
    v = beta2_ * v + (1.0 - beta2_) * arma::square(g);
    theta -= step_size * m / (arma::sqrt(v) / correct2_sqrt + epsilon_);
  }
  //! [adamw-step]
}

void AdamW::restore(AdamWState state) {
  if (state.steps < 0)
    throw InputError(fmt::format("AdamW restore: {} steps; it must be at least 0", state.steps));
  if (state.first.size() != state.second.size())
    throw ShapeError(fmt::format("AdamW restore: {} first moments but {} second moments",
                                 state.first.size(), state.second.size()));
  if (state.first.empty() != (state.steps == 0))
    throw ShapeError(fmt::format(
        "AdamW restore: {} steps with {} moment pairs; a state has moments if and only if it "
        "has taken a step",
        state.steps, state.first.size()));
  if (!state.first.empty() && state.first.size() != updates_.size())
    throw ShapeError(fmt::format("AdamW restore: {} moment pairs, but {} parameters",
                                 state.first.size(), updates_.size()));
  for (std::size_t i = 0; i < state.first.size(); ++i) {
    require_same_shape("AdamW restore", fmt::format("first moment {}", i), state.first[i],
                       fmt::format("second moment {}", i), state.second[i]);
    require_finite(fmt::format("AdamW restore: first moment {}", i), state.first[i]);
    require_finite(fmt::format("AdamW restore: second moment {}", i), state.second[i]);
    if (arma::any(arma::vectorise(state.second[i]) < 0.0))
      throw InputError(fmt::format(
          "AdamW restore: second moment {} has a negative entry {}; a mean of squares is not", i,
          state.second[i].min()));
  }
  state_ = std::move(state);
}

double learning_rate(const WarmupCosine& schedule, std::int64_t step) {
  const auto& [peak, minimum, warmup, total, s] = schedule;
  if (!std::isfinite(peak) || !(minimum >= 0 && minimum <= peak))
    throw InputError(fmt::format(
        "learning_rate: the peak {} and minimum {} must be finite with 0 <= minimum <= peak", peak,
        minimum));
  if (!(warmup >= 0 && warmup < total))
    throw InputError(
        fmt::format("learning_rate: {} warm-up steps of {} in all; it needs 0 <= warm-up < total",
                    warmup, total));
  if (!(s >= 0.0 && s <= 1.0))
    throw InputError(fmt::format("learning_rate: the start factor {} must be in [0, 1]", s));
  if (step < 0)
    throw InputError(fmt::format("learning_rate: step {} must be at least 0", step));
  //! [learning-rate]
  const auto t = static_cast<double>(step), W = static_cast<double>(warmup),
             T = static_cast<double>(total);
  if (step < warmup)
    return peak * (s + (1.0 - s) * t / W);
  if (step <= total)
    return minimum + (peak - minimum) * (1.0 + std::cos(std::numbers::pi * (t - W) / (T - W))) / 2;
  return minimum;
  //! [learning-rate]
}

double clip_grad_norm(std::vector<arma::mat>& gradients, double max_norm) {
  if (!(max_norm > 0))
    throw InputError(fmt::format("clip_grad_norm: the maximum norm {} must be positive", max_norm));
  //! [clip-grad-norm]
  double squares = 0.0;
  for (const arma::mat& g : gradients)
    squares += arma::accu(arma::square(g));
  const double norm = std::sqrt(squares);
  if (!std::isfinite(norm))
    throw InputError(fmt::format(
        "clip_grad_norm: the gradients' norm is {}, so they cannot be clipped: a gradient holds "
        "a NaN or an infinity, or the sum of their squares overflows",
        norm));
  const double coefficient = std::min(1.0, max_norm / (norm + 1e-6));
  for (arma::mat& g : gradients)
    g *= coefficient;  // 1 leaves every entry as it was
  return norm;
  //! [clip-grad-norm]
}

}  // namespace attn::math
