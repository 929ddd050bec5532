/// \file
/// \brief How far one computation of a matrix is from another: the one number the tests and
///        chapter 09 hold attn::fast's kernels, and the streaming pass, to.
#pragma once

#include <armadillo>

namespace attn::math {

/// \brief How far \p ours is from \p reference, one number for matrices of any size:
///        \f$\max_{ij} |a_{ij} - b_{ij}| \,/\, \max(1, \max_{ij} |b_{ij}|)\f$, relative to the
///        reference's largest entry (absolute when that is below 1).
/// \param ours,reference matrices of one shape. \return the gap.
/// \throws ShapeError if the shapes differ (both are named).
/// \throws InputError if they are empty or either holds a NaN or an infinity.
double relative_gap(const arma::mat& ours, const arma::mat& reference);

}  // namespace attn::math
