/// \file
/// \brief The layers a transformer block adds around attention (chapters 10 to 12): layer
///        norm, the GELU MLP, the cross-entropy of the next token and dropout, each with its
///        backward pass; and the two that today's transformers (Llama, Mistral) use in their
///        place, RMSNorm and the SwiGLU MLP, with theirs.
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

/// \brief What rms_norm() computes, with what its backward pass needs.
struct RmsNorm {
  arma::mat y;        ///< `(n × d)`: \f$y = \gamma \odot \hat{x}\f$ row by row.
  arma::mat x_hat;    ///< `(n × d)`: \f$\hat{x} = x / \mathrm{rms}(x)\f$.
  arma::vec inv_rms;  ///< `(n)`: \f$1/\mathrm{rms}(x) = 1/\sqrt{\overline{x^2} + \epsilon}\f$.
};

/// \brief RMSNorm of each row (Zhang and Sennrich 2019), as PyTorch's
///        `nn.RMSNorm(d, eps)` computes it:
///        \f$\mathrm{rms}(x) = \sqrt{\frac{1}{d}\sum_j x_j^2 + \epsilon}\f$,
///        \f$y = \gamma \odot x / \mathrm{rms}(x)\f$.
/// Layer norm without its centring and without its shift: no mean is subtracted and there is
/// no \f$\beta\f$, so a row is only rescaled, never moved. Llama and Mistral normalise with it.
/// \param x `(n × d)`. \param gamma `(1 × d)`.
/// \param eps 1e-5, Llama 2's and Mistral's choice (the first LLaMA took 1e-6). PyTorch's
///        default, `eps=None`, means the machine epsilon of the tensor's type (about 2.2e-16
///        in float64), so the book always passes it.
/// \return \f$y\f$ and what the backward pass reuses.
/// \throws ShapeError if \p gamma is not `(1 × d)` (the message names both shapes).
/// \throws InputError if \p x is empty, \p x or \p gamma holds a NaN or an infinity (it is
///         named), or \p eps is not positive and finite.
RmsNorm rms_norm(const arma::mat& x, const arma::rowvec& gamma, double eps = 1e-5);

/// \brief The gradients of a loss through rms_norm().
struct RmsNormGradients {
  arma::mat dx;         ///< `(n × d)`.
  arma::rowvec dgamma;  ///< `(1 × d)`: \f$\sum_i \partial L/\partial y_i \odot \hat{x}_i\f$.
};

/// \brief The backward pass of rms_norm(): with \f$g = \gamma \odot \partial L/\partial y\f$
///        for one row,
///        \f[ \frac{\partial L}{\partial x} = \frac{1}{\mathrm{rms}(x)}\Bigl(g -
///            \hat{x}\,\overline{g \odot \hat{x}}\Bigr), \f]
///        the bar being the mean over the row's \f$d\f$ entries. It follows from
///        \f$\partial\,\mathrm{rms}^{-1}/\partial x_k = -x_k / (d\,\mathrm{rms}^3)\f$. Layer
///        norm's gradient has one more term, \f$-\overline{g}\f$, which its centring brings;
///        RMSNorm does not centre, so it has none.
/// \param forward what rms_norm() returned. \param gamma `(1 × d)`.
/// \param dy `(n × d)`: \f$\partial L/\partial y\f$.
/// \return the two gradients.
/// \throws ShapeError if \p dy or \p gamma does not fit \p forward (the message names the
///         shapes).
/// \throws InputError if \p dy or \p gamma holds a NaN or an infinity (it is named).
RmsNormGradients rms_norm_backward(const RmsNorm& forward, const arma::rowvec& gamma,
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

/// \brief SiLU (the "swish"), as PyTorch's `F.silu` computes it for finite inputs:
///        \f$\mathrm{silu}(a) = a\,\sigma(a) = \frac{a}{1 + e^{-a}}\f$, entry by entry.
/// The logistic \f$\sigma\f$ is computed from \f$e^{-|a|}\f$, which never overflows (the
/// plain form's \f$e^{-a}\f$ is infinite below about \f$-709\f$, though its quotient still
/// comes out as \f$-0\f$). NaN gives NaN where it is, \f$+\infty\f$ gives \f$+\infty\f$ and
/// \f$-\infty\f$ gives 0, the limit (PyTorch gives NaN there: \f$a\,\sigma(a)\f$ is
/// \f$-\infty \cdot 0\f$); an empty \p a gives an empty result.
/// \param a any shape. \return the same shape.
arma::mat silu(const arma::mat& a);

/// \brief The weights of the SwiGLU MLP: three matrices, no biases.
struct SwiGluWeights {
  arma::mat W_gate;  ///< `(d × h)`.
  arma::mat W_up;    ///< `(d × h)`.
  arma::mat W_down;  ///< `(h × d)`.
};

/// \brief What swiglu() computes, with what its backward pass needs.
struct SwiGlu {
  arma::mat gate;     ///< `(n × h)`: \f$x W_\text{gate}\f$.
  arma::mat up;       ///< `(n × h)`: \f$x W_\text{up}\f$.
  arma::mat sigmoid;  ///< `(n × h)`: \f$\sigma(\text{gate})\f$, which the backward pass reuses.
  arma::mat hidden;   ///< `(n × h)`: \f$\mathrm{silu}(\text{gate}) \odot \text{up}\f$.
  arma::mat y;        ///< `(n × d)`: \f$\text{hidden}\,W_\text{down}\f$.
};

/// \brief The SwiGLU MLP (Shazeer 2020, "GLU Variants Improve Transformer"), the MLP of Llama
///        and Mistral, row by row:
///        \f[ y = \bigl(\mathrm{silu}(x W_\text{gate}) \odot x W_\text{up}\bigr)\,
///            W_\text{down}. \f]
/// One product of \p x, passed through SiLU, gates another, entry by entry; the gated
/// \f$h\f$ columns are projected back to \f$d\f$. At the same hidden width \f$h\f$ it has
/// \f$3dh\f$ weights against the GELU MLP's \f$2dh\f$ (and its biases), so a model that
/// keeps the count of parameters gives SwiGLU \f$\tfrac{2}{3}\f$ of the GELU MLP's width:
/// the first LLaMA's \f$h \approx \tfrac{8}{3}d\f$ (rounded up) in place of \f$4d\f$.
/// \param x `(n × d)`. \param W the weights.
/// \return the output and the intermediate values.
/// \throws ShapeError if `W.W_gate` and `W.W_up` differ in shape, \p x does not have their
///         \f$d\f$ rows as columns, or `W.W_down` is not `(h × d)` (the message names both
///         shapes).
/// \throws InputError if \p x is empty, or \p x or a weight holds a NaN or an infinity (it
///         is named).
SwiGlu swiglu(const arma::mat& x, const SwiGluWeights& W);

/// \brief The gradients of a loss through swiglu().
struct SwiGluGradients {
  arma::mat dx;      ///< `(n × d)`.
  SwiGluWeights dW;  ///< one gradient per weight, each of its weight's shape.
};

/// \brief The backward pass of swiglu(). With \f$\partial L/\partial\,\text{hidden} =
///        \partial L/\partial y\,W_\text{down}^\top\f$, `(n × h)`:
///        \f[ \frac{\partial L}{\partial\,\text{up}} = \frac{\partial L}{\partial\,
///            \text{hidden}} \odot \mathrm{silu}(\text{gate}), \qquad
///            \frac{\partial L}{\partial\,\text{gate}} = \frac{\partial L}{\partial\,
///            \text{hidden}} \odot \text{up} \odot \mathrm{silu}'(\text{gate}), \f]
///        with \f$\mathrm{silu}'(a) = \sigma(a)\bigl(1 + a(1 - \sigma(a))\bigr)\f$; then
///        \f$\partial L/\partial W_\text{down} = \text{hidden}^\top \partial L/\partial y\f$,
///        \f$\partial L/\partial W_\text{gate} = x^\top \partial L/\partial\,\text{gate}\f$,
///        \f$\partial L/\partial W_\text{up} = x^\top \partial L/\partial\,\text{up}\f$ and
///        \f$\partial L/\partial x\f$ the sum of both branches,
///        \f$\partial L/\partial\,\text{gate}\,W_\text{gate}^\top +
///        \partial L/\partial\,\text{up}\,W_\text{up}^\top\f$.
/// \param x `(n × d)`. \param W the weights. \param forward what swiglu() returned.
/// \param dy `(n × d)`: \f$\partial L/\partial y\f$.
/// \return the gradients.
/// \throws ShapeError if \p W does not fit \p x, or \p dy or one of \p forward's matrices
///         does not fit them (the message names both shapes).
/// \throws InputError if \p dy holds a NaN or an infinity.
SwiGluGradients swiglu_backward(const arma::mat& x, const SwiGluWeights& W, const SwiGlu& forward,
                                const arma::mat& dy);

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
