/// \file
/// \brief Chapter 01's exercises: the softmax of a row and one token's blend, by hand.
#pragma once

#include <armadillo>

namespace attn::exercises {

arma::rowvec row_softmax(const arma::rowvec& scores);
arma::rowvec blend_for(const arma::mat& E, arma::uword query);

}  // namespace attn::exercises
