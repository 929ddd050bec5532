/// \file
/// \brief Chapter 03's exercises: one token's query, key and value, and one query's attention.
#pragma once

#include <attn/attention.hpp>

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

TokenQKV project_token(const arma::rowvec& x, const Projections& W);
OneQuery attend_one(const arma::rowvec& q, const arma::mat& K, const arma::mat& V);

}  // namespace attn::exercises
