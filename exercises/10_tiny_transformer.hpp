/// \file
/// \brief Chapter 10's exercises: layer norm's backward pass and the cross-entropy of one row.
#pragma once

#include <armadillo>

namespace attn::exercises {

/// \brief Exercise 10.1: layer norm's backward pass, for one row.
///
/// Layer norm turns a row \p x of \f$d\f$ numbers into \f$y = \gamma \odot \hat{x} + \beta\f$,
/// with \f$\hat{x} = (x - \mu) / \sigma\f$, \f$\mu\f$ the row's mean and
/// \f$\sigma = \sqrt{v + \epsilon}\f$, where \f$v\f$ is the mean of \f$(x_j - \mu)^2\f$ (divided
/// by \f$d\f$, as PyTorch's `nn.LayerNorm` does) and \f$\epsilon\f$ is \p eps. Given \p dy, the
/// gradient \f$\partial L / \partial y\f$ of some loss, return \f$\partial L / \partial x\f$, a
/// row of \f$d\f$ numbers; \f$\beta\f$ does not change it, so it is not a parameter. The test
/// compares your row with attn::math::layer_norm_backward() on a one-row matrix and with central
/// finite differences of \f$L = \sum_j dy_j\, y_j\f$, and checks that its entries sum to 0. If
/// \p gamma or \p dy does not have as many entries as \p x, throw std::invalid_argument whose
/// message names the shape of \p x and the shape that does not fit it, both written as
/// attn::math::shape_of() writes them (`(1 × 4)`, from `<attn/math/validate.hpp>`).
///
/// \param x one row `(1 × d)`. \param gamma the scale `(1 × d)`.
/// \param dy \f$\partial L / \partial y\f$ `(1 × d)`. \param eps added to the variance.
/// \return \f$\partial L / \partial x\f$, `(1 × d)`.
///
/// \par Hint
/// Each \f$x_j\f$ reaches every \f$y_k\f$ three ways: directly, through \f$\mu\f$
/// (\f$\partial \mu / \partial x_j = 1/d\f$) and through \f$\sigma\f$
/// (\f$\partial \sigma / \partial x_j = \hat{x}_j / d\f$). Start from \f$g = \gamma \odot
/// dy\f$, the gradient with respect to \f$\hat{x}\f$, follow the three paths and collect the
/// terms: the answer is \f$g\f$ with two means over the row taken off, divided by \f$\sigma\f$.
/// Check your formula by hand on \f$d = 2\f$ before you write it.
arma::rowvec layer_norm_backward_row(const arma::rowvec& x, const arma::rowvec& gamma,
                                     const arma::rowvec& dy, double eps = 1e-5);

/// \brief Exercise 10.2: the cross-entropy of one row of logits.
///
/// Return the loss of one row of chapter 10's model: the \p logits \f$z\f$ score every word of
/// the vocabulary as the next word, \p target \f$t\f$ is the word that does come next, and the
/// loss is \f$-\log \mathrm{softmax}(z)_t = \log \sum_j e^{z_j} - z_t\f$. Compute the
/// log-sum-exp with the row's maximum taken out, so that logits near 1000 still give a finite
/// loss. The test checks that equal logits over chapter 10's 35 words give \f$\ln 35\f$, the
/// loss of a model that knows nothing (the chapter's first held-out loss, 3.5593, is close to
/// it); that logits near 1000 give the same loss as the same logits moved down to near 0; and
/// that your loss equals attn::math::cross_entropy() on one row. A \p target that is not a column
/// of \p logits must throw std::out_of_range.
///
/// \param logits one row of scores over the vocabulary `(1 × V)`.
/// \param target the index of the right word.
/// \return \f$-\log \mathrm{softmax}(z)_t\f$.
///
/// \par Hint
/// Do not form the softmax and then take its log: a logit 800 below the largest gives a weight
/// of \f$e^{-800} \approx 10^{-348}\f$, far below the smallest positive double (about
/// \f$5 \times 10^{-324}\f$), so it rounds to 0 and its log is \f$-\infty\f$. Instead use \f$\log
/// \sum_j e^{z_j} = m + \log \sum_j e^{z_j - m}\f$, true for any \f$m\f$; with \f$m\f$ the largest
/// logit no exponent is positive and one term is 1.
double cross_entropy_row(const arma::rowvec& logits, arma::uword target);

}  // namespace attn::exercises
