/// \file
/// \brief Chapter 10's exercises: layer norm's backward pass and the cross-entropy of one row.
#pragma once

#include <armadillo>

namespace attn::exercises {

arma::rowvec layer_norm_backward_row(const arma::rowvec& x, const arma::rowvec& gamma,
                                     const arma::rowvec& dy, double eps = 1e-5);
double cross_entropy_row(const arma::rowvec& logits, arma::uword target);

}  // namespace attn::exercises
