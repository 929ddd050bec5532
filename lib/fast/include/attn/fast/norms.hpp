/// \file
/// \brief Layer norm and RMSNorm in `float`, one column a token, forward and backward: the
///        fast forms of attn::math::layer_norm() and attn::math::rms_norm(), which are one row a
///        token and in double.
#pragma once

#include <armadillo>

namespace attn::fast {

/// \brief What a norm's forward pass computes and its backward pass reads.
struct Normalised {
  arma::fmat y;        ///< `(d × N)`: the output.
  arma::fmat x_hat;    ///< `(d × N)`: \f$\hat{x}\f$, each token normalised, before \f$\gamma\f$.
  arma::fvec inv_std;  ///< `(N)`: \f$1/\sigma\f$ (layer norm) or \f$1/\mathrm{rms}\f$ (RMSNorm).
};

/// \brief The norms' \f$\epsilon\f$, PyTorch's default and attn::math's.
inline constexpr float kNormEpsilon = 1e-5f;

/// \brief Layer norm of each token: \f$\mu = \frac{1}{d}\sum_i x_i\f$,
///        \f$\sigma^2 = \frac{1}{d}\sum_i (x_i - \mu)^2\f$,
///        \f$\hat{x} = (x - \mu)/\sqrt{\sigma^2 + \epsilon}\f$, \f$y = \gamma \odot \hat{x} +
///        \beta\f$.
///
/// `// x: (d × N), one column a token; gamma, beta: (d)`
/// \param x the tokens. \param gamma,beta the scale and the shift. \param out \f$y\f$,
///        \f$\hat{x}\f$ and \f$1/\sigma\f$, sized here.
void layer_norm_forward(const arma::fmat& x, const arma::fvec& gamma, const arma::fvec& beta,
                        Normalised& out);

/// \brief The backward pass of layer_norm_forward(): with \f$g = \gamma \odot \partial L/\partial
///        y\f$ per token, \f$\partial L/\partial x \mathrel{+}= (g - \overline{g} - \hat{x}\,
///        \overline{g \odot \hat{x}})/\sigma\f$ (the bars are means over the token's \f$d\f$
///        entries), \f$\partial L/\partial\gamma = \sum_{\text{tokens}} \partial L/\partial y \odot
///        \hat{x}\f$, \f$\partial L/\partial\beta = \sum_{\text{tokens}} \partial L/\partial y\f$.
///
/// `// dy, dx: (d × N); gamma, dgamma, dbeta: (d)`
/// \param forward what layer_norm_forward() kept. \param gamma its scale.
/// \param dy \f$\partial L/\partial y\f$. \param dx \f$\partial L/\partial x\f$ is added to it
///        (the residual stream's gradient, to which each branch adds its own).
/// \param dgamma,dbeta the parameters' gradients, overwritten.
void layer_norm_backward(const Normalised& forward, const arma::fvec& gamma, const arma::fmat& dy,
                         arma::fmat& dx, arma::fvec& dgamma, arma::fvec& dbeta);

/// \brief RMSNorm of each token: \f$\mathrm{rms}(x) = \sqrt{\frac{1}{d}\sum_i x_i^2 + \epsilon}\f$,
///        \f$\hat{x} = x / \mathrm{rms}(x)\f$, \f$y = \gamma \odot \hat{x}\f$: layer norm
///        without centring and without \f$\beta\f$.
///
/// `// x: (d × N), one column a token; gamma: (d)`
/// \param x the tokens. \param gamma the scale. \param out \f$y\f$, \f$\hat{x}\f$ and
///        \f$1/\mathrm{rms}\f$, sized here.
void rms_norm_forward(const arma::fmat& x, const arma::fvec& gamma, Normalised& out);

/// \brief The backward pass of rms_norm_forward(): with \f$g = \gamma \odot \partial L/\partial
///        y\f$, \f$\partial L/\partial x \mathrel{+}= (g - \hat{x}\,\overline{g \odot
///        \hat{x}})/\mathrm{rms}(x)\f$ (layer norm's without its \f$-\overline{g}\f$),
///        \f$\partial L/\partial\gamma = \sum_{\text{tokens}} \partial L/\partial y \odot
///        \hat{x}\f$.
///
/// `// dy, dx: (d × N); gamma, dgamma: (d)`
/// \param forward what rms_norm_forward() kept. \param gamma its scale.
/// \param dy \f$\partial L/\partial y\f$. \param dx \f$\partial L/\partial x\f$ is added to it.
/// \param dgamma the scale's gradient, overwritten.
void rms_norm_backward(const Normalised& forward, const arma::fvec& gamma, const arma::fmat& dy,
                       arma::fmat& dx, arma::fvec& dgamma);

}  // namespace attn::fast
