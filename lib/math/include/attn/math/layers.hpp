/// \file
/// \brief The layers a transformer block adds around attention (chapters 10 and 11): layer
///        norm, the GELU MLP, the cross-entropy of the next token and dropout, each with its
///        backward pass.
#pragma once

#include <armadillo>

#include <functional>

namespace attn::math {

/// \brief What layer_norm() computes, with what its backward pass needs.
struct LayerNorm {
  arma::mat y;        ///< `(n × d)`: \f$y = \gamma \odot \hat{x} + \beta\f$ row by row.
  arma::mat x_hat;    ///< `(n × d)`: \f$\hat{x} = (x - \mu) / \sigma\f$.
  arma::vec inv_std;  ///< `(n)`: \f$1/\sigma = 1/\sqrt{\mathrm{var}(x) + \epsilon}\f$ per row.
};

/// \brief Layer norm of each row, as PyTorch's `nn.LayerNorm(d)` computes it:
///        \f$\mu = \frac{1}{d}\sum_j x_j\f$, \f$\sigma^2 = \frac{1}{d}\sum_j (x_j - \mu)^2\f$ (the
///        biased variance), \f$y = \gamma \odot (x - \mu)/\sqrt{\sigma^2 + \epsilon} + \beta\f$.
/// \param x `(n × d)`. \param gamma,beta `(1 × d)`. \param eps PyTorch's default, 1e-5.
/// \return \f$y\f$ and what the backward pass reuses.
/// \throws ShapeError if \p gamma or \p beta is not `(1 × d)` (the message names the shapes).
/// \throws InputError if \p x is empty, \p x, \p gamma or \p beta holds a NaN or an infinity
///         (it is named), or \p eps is not positive and finite.
LayerNorm layer_norm(const arma::mat& x, const arma::rowvec& gamma, const arma::rowvec& beta,
                     double eps = 1e-5);

/// \brief The gradients of a loss through layer_norm().
struct LayerNormGradients {
  arma::mat dx;         ///< `(n × d)`.
  arma::rowvec dgamma;  ///< `(1 × d)`: \f$\sum_i \partial L/\partial y_i \odot \hat{x}_i\f$.
  arma::rowvec dbeta;   ///< `(1 × d)`: \f$\sum_i \partial L/\partial y_i\f$.
};

/// \brief The backward pass of layer_norm(): with \f$g = \gamma \odot \partial L/\partial y\f$
///        for one row,
///        \f[ \frac{\partial L}{\partial x} = \frac{1}{\sigma}\Bigl(g - \overline{g} -
///            \hat{x}\,\overline{g \odot \hat{x}}\Bigr), \f]
///        the bars being means over the row's \f$d\f$ entries.
/// \param forward what layer_norm() returned. \param gamma `(1 × d)`.
/// \param dy `(n × d)`: \f$\partial L/\partial y\f$.
/// \return the three gradients.
/// \throws ShapeError if \p dy or \p gamma does not fit \p forward.
/// \throws InputError if \p dy or \p gamma holds a NaN or an infinity (it is named).
LayerNormGradients layer_norm_backward(const LayerNorm& forward, const arma::rowvec& gamma,
                                       const arma::mat& dy);

/// \brief The mean cross-entropy of the next token and its gradient.
struct CrossEntropy {
  double loss = 0.0;  ///< \f$-\frac{1}{n}\sum_i \log \mathrm{softmax}(z_i)_{t_i}\f$.
  arma::mat dlogits;  ///< `(n × V)`: \f$(\mathrm{softmax}(z_i) - e_{t_i}) / n\f$.
};

/// \brief Cross-entropy of logits against target tokens, as PyTorch's `F.cross_entropy`
///        computes it (mean over the rows), with its gradient.
/// \param logits `(n × V)`. \param targets `(n)`, each in `[0, V)`.
/// \return the loss and \f$\partial L/\partial z\f$.
/// \throws ShapeError if the counts differ (both are named).
/// \throws InputError on a target outside the vocabulary (its row and value are named), or if
///         \p logits is empty or holds a NaN or an infinity.
CrossEntropy cross_entropy(const arma::mat& logits, const arma::uvec& targets);

/// \brief GELU, as PyTorch's `nn.GELU()` computes it (the exact form):
///        \f$\mathrm{gelu}(x) = x\,\Phi(x) = \tfrac{x}{2}\bigl(1 +
///        \mathrm{erf}(x/\sqrt{2})\bigr)\f$, entry by entry.
/// NaN gives NaN where it is, \f$+\infty\f$ gives \f$+\infty\f$ and \f$-\infty\f$ gives 0 (the
/// limit; \f$x\,\Phi(x)\f$ would be \f$-\infty \cdot 0\f$ there); an empty \p x gives an empty
/// result. \param x any shape. \return the same shape.
arma::mat gelu(const arma::mat& x);

/// \brief The standard normal distribution function entry by entry,
///        \f$\Phi(x) = \tfrac{1}{2}\bigl(1 + \mathrm{erf}(x/\sqrt{2})\bigr)\f$.
/// NaN gives NaN where it is, \f$\pm\infty\f$ gives 1 and 0; an empty \p x gives an empty result.
/// \param x any shape. \return the same shape, each entry in [0, 1] (or NaN where \p x is).
arma::mat normal_cdf(const arma::mat& x);

/// \brief The weights of a transformer block's two-layer MLP.
struct FeedForwardWeights {
  arma::mat W1;     ///< `(d × h)`.
  arma::rowvec b1;  ///< `(1 × h)`.
  arma::mat W2;     ///< `(h × d)`.
  arma::rowvec b2;  ///< `(1 × d)`.
};

/// \brief What feed_forward() computes, with what its backward pass needs.
struct FeedForward {
  arma::mat pre;     ///< `(n × h)`: \f$x W_1 + b_1\f$.
  arma::mat cdf;     ///< `(n × h)`: \f$\Phi(\text{pre})\f$, which the backward pass reuses.
  arma::mat hidden;  ///< `(n × h)`: \f$\mathrm{gelu}(\text{pre})\f$.
  arma::mat y;       ///< `(n × d)`: \f$\text{hidden}\,W_2 + b_2\f$.
};

/// \brief The MLP of a transformer block, row by row: \f$y = \mathrm{gelu}(x W_1 + b_1) W_2 +
/// b_2\f$. \param x `(n × d)`. \param W the weights. \return the output and the intermediate
/// values. \throws ShapeError naming both shapes when they do not fit. \throws InputError if \p x
/// is empty, or \p x or a weight holds a NaN or an infinity (it is
///         named).
FeedForward feed_forward(const arma::mat& x, const FeedForwardWeights& W);

/// \brief The gradients of a loss through feed_forward().
struct FeedForwardGradients {
  arma::mat dx;           ///< `(n × d)`.
  FeedForwardWeights dW;  ///< one gradient per weight, each of its weight's shape.
};

/// \brief The backward pass of feed_forward(), with
///        \f$\mathrm{gelu}'(x) = \Phi(x) + x\,\varphi(x)\f$.
/// \param x `(n × d)`. \param W the weights. \param forward what feed_forward() returned.
/// \param dy `(n × d)`: \f$\partial L/\partial y\f$.
/// \return the gradients.
/// \throws ShapeError if \p dy does not fit \p forward, or \p x or \p W does not fit
///         \p forward (the message names both shapes).
/// \throws InputError if \p dy holds a NaN or an infinity.
FeedForwardGradients feed_forward_backward(const arma::mat& x, const FeedForwardWeights& W,
                                           const FeedForward& forward, const arma::mat& dy);

/// \brief A source of uniform draws in [0, 1), one per call. The book passes numpy's
///        `rng.random()` (attn::numpy::Generator::random), so that a seed fixes every draw.
using UniformDraws = std::function<double()>;

/// \brief What dropout() computes.
struct Dropout {
  arma::mat y;     ///< the input with entries dropped: \f$y = x \odot \text{keep}\f$.
  arma::mat keep;  ///< the mask, of the input's shape: 0 where dropped, \f$1/(1-p)\f$ where kept.
};

/// \brief Dropout as PyTorch's `nn.Dropout(p)` computes it in training ("inverted" dropout):
///        each entry is zeroed with probability \f$p\f$ and the others are scaled by
///        \f$1/(1-p)\f$, so that every entry keeps its expected value:
///        \f[ y_{ij} = x_{ij}\,\frac{[u_{ij} \ge p]}{1-p}, \qquad
///            \mathbb{E}[y_{ij}] = x_{ij}. \f]
/// One draw \f$u_{ij}\f$ is taken per entry, in Armadillo's storage order (column by column);
/// the backward pass multiplies by the same mask, \f$\partial L/\partial x = \partial
/// L/\partial y \odot \text{keep}\f$. PyTorch draws its masks from its own generator, so its
/// masks and these are not the same numbers; what they share is the rule. With \f$p = 0\f$
/// no draw is taken and \f$y = x\f$.
/// \param x any shape. \param p the rate, in [0, 1). \param uniform the draws.
/// \return \f$y\f$ and the mask.
/// \throws InputError if \p p is outside [0, 1) (or NaN), or a draw is outside [0, 1).
Dropout dropout(const arma::mat& x, double p, const UniformDraws& uniform);

}  // namespace attn::math
