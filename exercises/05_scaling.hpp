/// \file
/// \brief Chapter 05's exercises: softmax's Jacobian, and its backward pass without it.
#pragma once

#include <armadillo>

namespace attn::exercises {

/// \brief Exercise 5.1: how each weight moves when one score moves.
///
/// Given the \p weights \f$y = \mathrm{softmax}(s)\f$ of one row, return the \f$m \times m\f$
/// Jacobian \f$J_{ij} = \partial y_i / \partial s_j\f$, the matrix whose size chapter 05
/// measures to show how little gradient reaches the scores when they are not scaled. The test
/// compares it with central finite differences of the softmax, and checks that it is symmetric
/// and that each row sums to 0 (adding the same number to every score leaves the weights
/// unchanged).
///
/// \param weights \f$y = \mathrm{softmax}(s)\f$, `(1 × m)`.
/// \return \f$J\f$, `(m × m)`.
///
/// \par Hint
/// Differentiate \f$y_i = e^{s_i} / \sum_k e^{s_k}\f$ with the quotient rule: two cases, \f$i =
/// j\f$ and \f$i \ne j\f$. Both are products of weights; `arma::diagmat` and an outer product
/// `y.t() * y` write all of them at once.
arma::mat softmax_jacobian_of(const arma::rowvec& weights);

/// \brief Exercise 5.2: softmax's backward pass, without building the Jacobian.
///
/// A loss \f$L\f$ depends on the weights \f$y\f$; you are given \p upstream
/// \f$g = \partial L / \partial y\f$. Return \f$\partial L / \partial s = J^\top g\f$, in time
/// and memory proportional to the row's length \f$m\f$, not \f$m^2\f$: a row of 65536 keys (the
/// length chapter 09 reaches) would need a 34 GB Jacobian. The test compares with the
/// Jacobian's product, with finite differences, and with a long row whose answer is known;
/// \p weights and
/// \p upstream of different lengths must throw std::invalid_argument.
///
/// \param weights \f$y\f$, `(1 × m)`. \param upstream \f$g = \partial L / \partial y\f$, `(1 × m)`.
/// \return \f$\partial L / \partial s\f$, `(1 × m)`.
///
/// \par Hint
/// Write out \f$\sum_i g_i J_{ij}\f$ with exercise 5.1's formula: one term is \f$g_j y_j\f$ and the
/// other is \f$y_j\f$ times a single number shared by every \f$j\f$, the dot product of \f$g\f$
/// and \f$y\f$.
arma::rowvec softmax_backward_row(const arma::rowvec& weights, const arma::rowvec& upstream);

}  // namespace attn::exercises
