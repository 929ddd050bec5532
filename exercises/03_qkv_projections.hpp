/// \file
/// \brief Chapter 03's exercises: one token's query, key and value, and one query's attention.
#pragma once

#include <attn/math/attention.hpp>

#include <armadillo>

namespace attn::exercises {

/// \brief One token's three projections (exercise 3.1).
struct TokenQKV {
  arma::rowvec q;  ///< `(1 × d_k)`: \f$x W_Q\f$.
  arma::rowvec k;  ///< `(1 × d_k)`: \f$x W_K\f$.
  arma::rowvec v;  ///< `(1 × d_v)`: \f$x W_V\f$.
};

/// \brief One query's attention, step by step (exercise 3.2).
struct OneQuery {
  arma::rowvec scores;   ///< `(1 × n)`: \f$q \cdot k_j / \sqrt{d_k}\f$ for every key.
  arma::rowvec weights;  ///< `(1 × n)`: the softmax of the scores.
  arma::rowvec output;   ///< `(1 × d_v)`: \f$\sum_j w_j v_j\f$.
};

/// \brief Exercise 3.1: one token's query, key and value.
///
/// Return \f$q = x W_Q\f$, \f$k = x W_K\f$ and \f$v = x W_V\f$ for the embedding \p x of one
/// token. For "export", x = [1.5 0.5], the article prints Q(export) = [0.35, 0.22], and chapter 03
/// prints K(export) = [0.95, 0.50] and V(export) = [1.10, 0.75]; the test asks for all three. If
/// \p x does not have as many entries as a matrix has rows, throw std::invalid_argument whose
/// message names both shapes, as every function of the library does.
///
/// \param x one token's embedding `(1 × d_model)`. \param W the head's \f$W_Q, W_K\f$
/// `(d_model × d_k)` and \f$W_V\f$ `(d_model × d_v)`.
/// \return `q, k: (1 × d_k)` and `v: (1 × d_v)`.
///
/// \par Hint
/// Armadillo multiplies a row by a matrix directly: `x * W.W_Q`. Check the shapes before you
/// multiply, or Armadillo throws its own error, which names no operand; attn::math::shape_of(m)
/// writes a shape the way the book does, `(1 × 3)`.
TokenQKV project_token(const arma::rowvec& x, const math::Projections& W);

/// \brief Exercise 3.2: one query against every key.
///
/// \p K and \p V hold one key and one value per row. Return the three steps of chapter 03's walk:
/// the scores \f$q \cdot k_j / \sqrt{d_k}\f$, their softmax, and the blend of the values. The
/// test walks "export" as chapter 03 does and checks each step on its own (scores -0.05 ... 0.36,
/// weights 0.14 ... 0.21, output [0.227, 0.675]), so a wrong step is named. A \p q whose width
/// is not \p K's, or \p K and \p V with different numbers of rows, throw std::invalid_argument.
///
/// \param q one query `(1 × d_k)`. \param K the keys `(n × d_k)`. \param V the values `(n × d_v)`.
/// \return scores and weights `(1 × n)` and the output `(1 × d_v)`.
///
/// \par Hint
/// \f$d_k\f$ is the width of \p q. `q * K.t()` gives every score in one product; for the output,
/// the weights times \p V blends the value rows.
OneQuery attend_one(const arma::rowvec& q, const arma::mat& K, const arma::mat& V);

}  // namespace attn::exercises
