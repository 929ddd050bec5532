/// \file
/// \brief The MLP's two activations in `float`, one column a token, forward and backward: GELU
///        (attn::math::gelu(), with erf from Abramowitz and Stegun so that it vectorises) and
///        SwiGLU's middle (attn::math::silu() of the gate times the up projection).
#pragma once

#include <armadillo>

namespace attn::fast {

/// \brief What gelu_forward() keeps for gelu_backward().
struct GeluCache {
  arma::fmat cdf;  ///< `(d_ff × N)`: \f$\Phi(h)\f$.
  arma::fmat
      gauss;  ///< `(d_ff × N)`: \f$e^{-h^2/2}\f$, the Gaussian's density up to \f$\sqrt{2\pi}\f$.
};

/// \brief GELU entry by entry: \f$\mathrm{gelu}(h) = h\,\Phi(h)\f$,
///        \f$\Phi(h) = \tfrac12\bigl(1 + \mathrm{erf}(h/\sqrt2)\bigr)\f$, with erf from
///        Abramowitz and Stegun 7.1.26: \f$\mathrm{erf}(x) = 1 - (a_1 t + \dots + a_5 t^5)\,
///        e^{-x^2}\f$, \f$t = 1/(1 + p x)\f$, \f$x \ge 0\f$, within \f$1.5 \cdot 10^{-7}\f$,
///        about `float`'s own rounding.
///
/// With \f$x = |h|/\sqrt2\f$, \f$e^{-x^2} = e^{-h^2/2}\f$ is also the Gaussian's density up to
/// \f$1/\sqrt{2\pi}\f$, which the backward pass needs: one vectorised exponential
/// (exp_shifted()) serves both.
///
/// `// h, y: (d_ff × N), one column a token`
/// \param h the MLP's first layer's output. \param cache \f$\Phi(h)\f$ and \f$e^{-h^2/2}\f$,
///        sized here. \param y \f$\mathrm{gelu}(h)\f$, sized here.
void gelu_forward(const arma::fmat& h, GeluCache& cache, arma::fmat& y);

/// \brief The backward pass of gelu_forward(), in place:
///        \f$\partial L/\partial h = \partial L/\partial y \odot \mathrm{gelu}'(h)\f$,
///        \f$\mathrm{gelu}'(h) = \Phi(h) + h\,\varphi(h)\f$,
///        \f$\varphi(h) = e^{-h^2/2}/\sqrt{2\pi}\f$.
///
/// `// h, d: (d_ff × N)`
/// \param h as given to gelu_forward(). \param cache what it kept.
/// \param d \f$\partial L/\partial y\f$ in, \f$\partial L/\partial h\f$ out.
void gelu_backward(const arma::fmat& h, const GeluCache& cache, arma::fmat& d);

/// \brief What swiglu_forward() keeps for swiglu_backward().
struct SwiGluCache {
  arma::fmat sigmoid;  ///< `(d_ff × N)`: \f$\sigma(\text{gate})\f$.
};

/// \brief SwiGLU's middle: \f$y = \mathrm{silu}(\text{gate}) \odot \text{up}\f$,
///        \f$\mathrm{silu}(a) = a\,\sigma(a)\f$, with \f$\sigma(a) = 1/(1 + e^{-a})\f$ for
///        \f$a \ge 0\f$ and \f$e^{a}/(1 + e^{a})\f$ below, both from \f$e^{-|a|} \le 1\f$, which
///        never overflows: one vectorised exponential per entry.
///
/// `// pre: (2 d_ff × N), each column the token's gate above its up; y: (d_ff × N)`
/// \param pre the gate and up projections (one product, \f$[W_\text{gate}\,W_\text{up}]^\top x\f$).
/// \param cache \f$\sigma(\text{gate})\f$, sized here. \param y the output, sized here.
void swiglu_forward(const arma::fmat& pre, SwiGluCache& cache, arma::fmat& y);

/// \brief The backward pass of swiglu_forward(): the gate's rows
///        \f$\partial L/\partial y \odot \text{up} \odot \mathrm{silu}'(\text{gate})\f$,
///        \f$\mathrm{silu}'(a) = \sigma(a)\bigl(1 + a(1 - \sigma(a))\bigr)\f$, and up's rows
///        \f$\partial L/\partial y \odot \mathrm{silu}(\text{gate})\f$.
///
/// `// pre, d_pre: (2 d_ff × N), gate above up; dy: (d_ff × N)`
/// \param pre as given to swiglu_forward(). \param cache what it kept.
/// \param dy \f$\partial L/\partial y\f$. \param d_pre \f$\partial L/\partial \text{pre}\f$,
///        sized here.
void swiglu_backward(const arma::fmat& pre, const SwiGluCache& cache, const arma::fmat& dy,
                     arma::fmat& d_pre);

}  // namespace attn::fast
