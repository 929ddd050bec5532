/// \file
/// \brief Chapter 05's exercises: softmax's Jacobian, and its backward pass without it.
#pragma once

#include <armadillo>

namespace attn::exercises {

arma::mat softmax_jacobian_of(const arma::rowvec& weights);
arma::rowvec softmax_backward_row(const arma::rowvec& weights, const arma::rowvec& upstream);

}  // namespace attn::exercises
