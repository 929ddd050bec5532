#include "attn/math/layers.hpp"

#include "attn/math/softmax.hpp"
#include "attn/math/validate.hpp"

#include <fmt/format.h>

#include <cmath>
#include <string_view>

namespace attn::math {

LayerNorm layer_norm(const arma::mat& x, const arma::rowvec& gamma, const arma::rowvec& beta,
                     double eps) {
  require_nonempty("x", x);
  require_finite("x", x);
  if (gamma.n_elem != x.n_cols || beta.n_elem != x.n_cols)
    throw ShapeError(fmt::format("layer_norm: x {} needs gamma and beta of {}, not {} and {}",
                                 shape_of(x), x.n_cols, gamma.n_elem, beta.n_elem));
  require_finite("gamma", gamma);
  require_finite("beta", beta);
  if (!(eps > 0.0) || !std::isfinite(eps))
    throw InputError(fmt::format("layer_norm: eps must be positive and finite, not {}", eps));
  //! [layer-norm]
  const arma::vec mean = arma::mean(x, 1);
  const arma::mat centred = x.each_col() - mean;
  const arma::vec variance = arma::mean(arma::square(centred), 1);  // biased, as PyTorch's
  const arma::vec inv_std = 1.0 / arma::sqrt(variance + eps);
  const arma::mat x_hat = centred.each_col() % inv_std;
  arma::mat y = x_hat.each_row() % gamma;
  y.each_row() += beta;
  //! [layer-norm]
  return {std::move(y), x_hat, inv_std};
}

LayerNormGradients layer_norm_backward(const LayerNorm& forward, const arma::rowvec& gamma,
                                       const arma::mat& dy) {
  if (dy.n_rows != forward.x_hat.n_rows || dy.n_cols != forward.x_hat.n_cols ||
      gamma.n_elem != dy.n_cols)
    throw ShapeError(fmt::format("layer_norm_backward: dy {} against x {} and gamma of {}",
                                 shape_of(dy), shape_of(forward.x_hat), gamma.n_elem));
  require_finite("dy", dy);
  require_finite("gamma", gamma);
  //! [layer-norm-backward]
  const arma::mat g = dy.each_row() % gamma;  // dL/dx_hat
  const arma::vec g_mean = arma::mean(g, 1);
  const arma::vec gx_mean = arma::mean(g % forward.x_hat, 1);
  arma::mat dx = g.each_col() - g_mean;
  dx -= forward.x_hat.each_col() % gx_mean;
  dx.each_col() %= forward.inv_std;
  //! [layer-norm-backward]
  return {std::move(dx), arma::sum(dy % forward.x_hat, 0), arma::sum(dy, 0)};
}

RmsNorm rms_norm(const arma::mat& x, const arma::rowvec& gamma, double eps) {
  require_nonempty("x", x);
  require_finite("x", x);
  if (gamma.n_elem != x.n_cols)
    throw ShapeError(fmt::format("rms_norm: x {} needs gamma (1 × {}), not {}", shape_of(x),
                                 x.n_cols, shape_of(gamma)));
  require_finite("gamma", gamma);
  if (!(eps > 0.0) || !std::isfinite(eps))
    throw InputError(fmt::format("rms_norm: eps must be positive and finite, not {}", eps));
  //! [rms-norm]
  const arma::vec mean_square = arma::mean(arma::square(x), 1);  // no mean is subtracted
  const arma::vec inv_rms = 1.0 / arma::sqrt(mean_square + eps);
  const arma::mat x_hat = x.each_col() % inv_rms;
  arma::mat y = x_hat.each_row() % gamma;  // and no beta is added
  //! [rms-norm]
  return {std::move(y), x_hat, inv_rms};
}

RmsNormGradients rms_norm_backward(const RmsNorm& forward, const arma::rowvec& gamma,
                                   const arma::mat& dy) {
  if (dy.n_rows != forward.x_hat.n_rows || dy.n_cols != forward.x_hat.n_cols ||
      gamma.n_elem != dy.n_cols || forward.inv_rms.n_elem != forward.x_hat.n_rows)
    throw ShapeError(fmt::format("rms_norm_backward: dy {} against x {}, gamma {} and inv_rms {}",
                                 shape_of(dy), shape_of(forward.x_hat), shape_of(gamma),
                                 shape_of(forward.inv_rms)));
  require_finite("dy", dy);
  require_finite("gamma", gamma);
  //! [rms-norm-backward]
  const arma::mat g = dy.each_row() % gamma;  // dL/dx_hat
  const arma::vec gx_mean = arma::mean(g % forward.x_hat, 1);
  arma::mat dx = g - forward.x_hat.each_col() % gx_mean;  // layer norm also subtracts mean(g)
  dx.each_col() %= forward.inv_rms;
  //! [rms-norm-backward]
  return {std::move(dx), arma::sum(dy % forward.x_hat, 0)};
}

CrossEntropy cross_entropy(const arma::mat& logits, const arma::uvec& targets) {
  require_nonempty("logits", logits);
  require_finite("logits", logits);
  if (targets.n_elem != logits.n_rows)
    throw ShapeError(
        fmt::format("cross_entropy: {} targets for logits {}", targets.n_elem, shape_of(logits)));
  for (arma::uword i = 0; i < targets.n_elem; ++i)
    if (targets(i) >= logits.n_cols)
      throw InputError(
          fmt::format("cross_entropy: target {} of row {} is outside a vocabulary "
                      "of {}",
                      targets(i), i, logits.n_cols));
  //! [cross-entropy]
  arma::mat p = softmax_rows(logits);
  double loss = 0.0;
  for (arma::uword i = 0; i < targets.n_elem; ++i) {
    const arma::rowvec z = logits.row(i);
    const double lse = z.max() + std::log(arma::accu(arma::exp(z - z.max())));
    loss += lse - z(targets(i));  // −log softmax(z)_t, without forming the log of a tiny p
    p(i, targets(i)) -= 1.0;
  }
  const double n = static_cast<double>(targets.n_elem);
  return {loss / n, p / n};  // the mean over the rows, and its gradient
  //! [cross-entropy]
}

//! [gelu]
arma::mat normal_cdf(const arma::mat& x) {
  return 0.5 * (1.0 + arma::erf(x / std::sqrt(2.0)));
}

arma::mat gelu(const arma::mat& x) {
  arma::mat y = x % normal_cdf(x);
  y.elem(arma::find(x == -arma::datum::inf)).zeros();  // the limit, not −∞ · 0 = NaN
  return y;
}
//! [gelu]

FeedForward feed_forward(const arma::mat& x, const FeedForwardWeights& W) {
  require_nonempty("x", x);
  require_finite("x", x);
  require_multipliable("x W1", "x", x, "W1", W.W1);
  require_multipliable("hidden W2", "hidden", arma::mat(x.n_rows, W.W1.n_cols), "W2", W.W2);
  if (W.b1.n_elem != W.W1.n_cols || W.b2.n_elem != W.W2.n_cols || W.W2.n_cols != x.n_cols)
    throw ShapeError(fmt::format("feed_forward: x {}, W1 {}, b1 of {}, W2 {}, b2 of {} do not fit",
                                 shape_of(x), shape_of(W.W1), W.b1.n_elem, shape_of(W.W2),
                                 W.b2.n_elem));
  require_finite("W1", W.W1);
  require_finite("b1", W.b1);
  require_finite("W2", W.W2);
  require_finite("b2", W.b2);
  //! [feed-forward]
  arma::mat pre = x * W.W1;
  pre.each_row() += W.b1;
  arma::mat cdf = normal_cdf(pre);
  arma::mat hidden = pre % cdf;  // gelu(pre), keeping Φ(pre) for the backward pass
  arma::mat y = hidden * W.W2;
  y.each_row() += W.b2;
  //! [feed-forward]
  return {std::move(pre), std::move(cdf), std::move(hidden), std::move(y)};
}

FeedForwardGradients feed_forward_backward(const arma::mat& x, const FeedForwardWeights& W,
                                           const FeedForward& forward, const arma::mat& dy) {
  if (dy.n_rows != forward.y.n_rows || dy.n_cols != forward.y.n_cols)
    throw ShapeError(fmt::format("feed_forward_backward: dy {} for an output {}", shape_of(dy),
                                 shape_of(forward.y)));
  require_same_rows("feed_forward_backward", "x", x, "forward.pre", forward.pre);
  require_same_cols("feed_forward_backward: dy W2^T", "dy", dy, "W2", W.W2);
  require_multipliable("feed_forward_backward: hidden W2", "forward.pre", forward.pre, "W2", W.W2);
  require_same_cols("feed_forward_backward: dpre W1^T", "forward.pre", forward.pre, "W1", W.W1);
  require_finite("dy", dy);
  //! [feed-forward-backward]
  const arma::mat& u = forward.pre;
  const double inv_sqrt_2pi = 1.0 / std::sqrt(2.0 * arma::datum::pi);
  const arma::mat gelu_slope = forward.cdf + u % arma::exp(-0.5 * arma::square(u)) * inv_sqrt_2pi;
  const arma::mat dhidden = dy * W.W2.t();
  const arma::mat dpre = dhidden % gelu_slope;
  FeedForwardGradients g;
  g.dW.W2 = forward.hidden.t() * dy;
  g.dW.b2 = arma::sum(dy, 0);
  g.dW.W1 = x.t() * dpre;
  g.dW.b1 = arma::sum(dpre, 0);
  g.dx = dpre * W.W1.t();
  //! [feed-forward-backward]
  return g;
}

namespace {

// The logistic function entry by entry, from e^(−|a|) ≤ 1, which never overflows:
// σ(a) = 1 / (1 + e^(−a)) for a ≥ 0 and e^a / (1 + e^a) for a < 0. NaN stays NaN.
arma::mat logistic(const arma::mat& a) {
  arma::mat s = a;
  s.transform([](double v) {
    const double e = std::exp(-std::abs(v));
    return v >= 0.0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
  });
  return s;
}

// The shapes swiglu() and swiglu_backward() need: W_gate and W_up (d × h), x (n × d),
// W_down (h × d).
void require_swiglu_shapes(std::string_view op, const arma::mat& x, const SwiGluWeights& W) {
  if (W.W_up.n_rows != W.W_gate.n_rows || W.W_up.n_cols != W.W_gate.n_cols)
    throw ShapeError(fmt::format("{}: W_gate is {} and W_up is {}; they need the same shape", op,
                                 shape_of(W.W_gate), shape_of(W.W_up)));
  require_multipliable(fmt::format("{}: x W_gate", op), "x", x, "W_gate", W.W_gate);
  if (W.W_down.n_rows != W.W_gate.n_cols || W.W_down.n_cols != W.W_gate.n_rows)
    throw ShapeError(fmt::format("{}: W_gate is {} and W_down is {}; W_down needs ({} × {})", op,
                                 shape_of(W.W_gate), shape_of(W.W_down), W.W_gate.n_cols,
                                 W.W_gate.n_rows));
}

}  // namespace

//! [silu]
arma::mat silu(const arma::mat& a) {
  arma::mat y = a % logistic(a);
  y.elem(arma::find(a == -arma::datum::inf)).zeros();  // the limit, not −∞ · 0 = NaN
  return y;
}
//! [silu]

SwiGlu swiglu(const arma::mat& x, const SwiGluWeights& W) {
  require_nonempty("x", x);
  require_finite("x", x);
  require_swiglu_shapes("swiglu", x, W);
  require_finite("W_gate", W.W_gate);
  require_finite("W_up", W.W_up);
  require_finite("W_down", W.W_down);
  //! [swiglu]
  arma::mat gate = x * W.W_gate;
  arma::mat up = x * W.W_up;
  arma::mat sigmoid = logistic(gate);
  arma::mat hidden = gate % sigmoid % up;  // silu(gate) ⊙ up, keeping σ(gate) for backward
  arma::mat y = hidden * W.W_down;
  //! [swiglu]
  return {std::move(gate), std::move(up), std::move(sigmoid), std::move(hidden), std::move(y)};
}

SwiGluGradients swiglu_backward(const arma::mat& x, const SwiGluWeights& W, const SwiGlu& forward,
                                const arma::mat& dy) {
  require_swiglu_shapes("swiglu_backward", x, W);
  const auto require_n_by_h = [&](std::string_view name, const arma::mat& m) {
    if (m.n_rows != x.n_rows || m.n_cols != W.W_gate.n_cols)
      throw ShapeError(fmt::format("swiglu_backward: forward.{} is {} for x {} and W_gate {}", name,
                                   shape_of(m), shape_of(x), shape_of(W.W_gate)));
  };
  require_n_by_h("gate", forward.gate);
  require_n_by_h("up", forward.up);
  require_n_by_h("sigmoid", forward.sigmoid);
  require_n_by_h("hidden", forward.hidden);
  if (dy.n_rows != x.n_rows || dy.n_cols != x.n_cols)
    throw ShapeError(
        fmt::format("swiglu_backward: dy {} for an input x {}", shape_of(dy), shape_of(x)));
  require_finite("dy", dy);
  //! [swiglu-backward]
  const arma::mat& a = forward.gate;
  const arma::mat& s = forward.sigmoid;
  const arma::mat silu_slope = s % (1.0 + a % (1.0 - s));  // silu'(a) = σ(a)(1 + a(1 − σ(a)))
  const arma::mat dhidden = dy * W.W_down.t();
  const arma::mat dup = dhidden % a % s;  // ⊙ silu(gate)
  const arma::mat dgate = dhidden % forward.up % silu_slope;
  SwiGluGradients g;
  g.dW.W_down = forward.hidden.t() * dy;
  g.dW.W_gate = x.t() * dgate;
  g.dW.W_up = x.t() * dup;
  g.dx = dgate * W.W_gate.t() + dup * W.W_up.t();
  //! [swiglu-backward]
  return g;
}

Dropout dropout(const arma::mat& x, double p, const UniformDraws& uniform) {
  if (!(p >= 0.0 && p < 1.0))
    throw InputError(fmt::format("dropout: the rate {} is outside [0, 1)", p));
  Dropout out{x, arma::mat(arma::size(x), arma::fill::ones)};
  if (p == 0.0)
    return out;
  const double kept = 1.0 / (1.0 - p);
  for (double& k : out.keep) {
    const double u = uniform();
    if (!(u >= 0.0 && u < 1.0))
      throw InputError(fmt::format("dropout: a draw of {} is outside [0, 1)", u));
    k = u >= p ? kept : 0.0;
  }
  out.y %= out.keep;
  return out;
}

}  // namespace attn::math
