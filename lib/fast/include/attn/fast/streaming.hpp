/// \file
/// \brief The fast form of streaming attention: attn::streaming_attention()'s online softmax,
///        with BLAS GEMMs on blocks in place, a vectorised exponential and OpenMP threads.
///
/// The math layer's attn::streaming_attention() is the readable reference of the recurrence;
/// this is the same recurrence written for speed, and its tests hold it to that reference.
/// It is the only code of the book that calls BLAS directly, starts threads or is compiled
/// for particular CPUs (on x86 once for AVX-512 and once for any x86-64, the loader choosing;
/// on every other CPU, arm64 among them, once, in plain C++).
#pragma once

#include "attn/math/streaming.hpp"

#include <armadillo>

namespace attn::fast {

/// \brief attn::streaming_attention(), fast: the same arguments, checks and result (within
///        rounding, \f$10^{-12}\f$ relative).
///
/// Query blocks run in parallel on OpenMP's threads (`OMP_NUM_THREADS`); while they do,
/// OpenBLAS is held to one thread, so each thread's GEMMs do not compete for the same cores.
/// (OpenBLAS's thread count is process-wide: it is set back when the call returns.) The result
/// does not depend on the number of threads.
/// \param Q `(n × d_k)`. \param K `(m × d_k)`. \param V `(m × d_v)`. \param scale \f$c\f$.
/// \param mask which keys each query may attend to. \param blocks the block sizes.
/// \return the output and each row's log-sum-exp.
/// \throws ShapeError and InputError exactly as attn::streaming_attention() does.
StreamingAttention streaming_attention(const arma::mat& Q, const arma::mat& K, const arma::mat& V,
                                       double scale, const StreamingMask& mask = {},
                                       const StreamingBlocks& blocks = {});

/// \brief \f$x_i \leftarrow e^{x_i - c}\f$ in place: the exponentials of one block of scores,
///        in a loop the compiler vectorises.
///
/// \f$e^t = 2^k e^r\f$ with \f$k = \mathrm{round}(t / \ln 2)\f$, \f$|r| \le \ln(2)/2\f$, and
/// \f$e^r\f$ from its Taylor series to \f$r^{13}\f$. For \f$t = x_i - c\f$ in
/// \f$[-708, 709]\f$ the result is within 2 ulp of `std::exp`. Below \f$-708\f$ (where
/// \f$e^t < 3.3 \cdot 10^{-308}\f$), and for \f$t = -\infty\f$, a masked score, it is 0; above
/// 709 it is \f$+\infty\f$; NaN stays NaN. The online softmax calls it with \f$c\f$ at least
/// every \f$x_i\f$, so \f$t \le 0\f$ there.
/// A NaN \p shift makes every value NaN, and \p count 0 does nothing: this kernel does no
/// checks, its callers do.
/// \param x `count` values, overwritten. \param count how many. \param shift \f$c\f$.
void exp_shifted(double* x, arma::uword count, double shift);

}  // namespace attn::fast
