#include "attn/math/layers.hpp"

#include "attn/math/softmax.hpp"
#include "attn/math/validate.hpp"

#include <fmt/format.h>

#include <cmath>

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
