/// \file
/// \brief The fast form of streaming attention: attn::math::streaming_attention()'s online softmax,
///        with BLAS GEMMs on blocks in place, a vectorised exponential and OpenMP threads, in
///        double and in single precision.
///
/// The math layer's attn::math::streaming_attention() is the readable reference of the recurrence;
/// this is the same recurrence written for speed, and its tests hold it to that reference.
/// It is the only library code that calls BLAS directly, starts threads or is compiled
/// for particular CPUs (on x86 once for AVX-512, once for AVX2 with FMA and once for any
/// x86-64, the loader choosing; on every other CPU, arm64 among them, once, in plain C++).
/// Both precisions are one implementation, a template over the element type.
#pragma once

#include "attn/math/streaming.hpp"

#include <armadillo>

/// \brief The fast layer: streaming attention written for speed (BLAS, OpenMP, vector kernels).
namespace attn::fast {

/// \brief attn::math::streaming_attention(), fast: the same arguments, checks and result (within
///        rounding, \f$10^{-12}\f$ relative).
///
/// In the block of keys where the queries of a block see different numbers of keys (along a
/// causal mask's diagonal), the keys that all of them see are taken in one step (a whole
/// number of 64s of them) and the rest 64 at a time (or `blocks.keys` at a time, if fewer); a
/// query that sees none of a step's keys takes no part in its GEMMs. So less is computed only
/// to be masked.
///
/// Query blocks run in parallel on OpenMP's threads (`OMP_NUM_THREADS`); while they do,
/// OpenBLAS is held to one thread, so each thread's GEMMs do not compete for the same cores.
/// (OpenBLAS's thread count is process-wide: it is set back when the call returns.) The result
/// does not depend on the number of threads.
/// \param Q `(n × d_k)`. \param K `(m × d_k)`. \param V `(m × d_v)`. \param scale \f$c\f$.
/// \param mask which keys each query may attend to. \param blocks the block sizes.
/// \return the output and each row's log-sum-exp.
/// \throws ShapeError and InputError exactly as attn::math::streaming_attention() does.
math::StreamingAttention streaming_attention(const arma::mat& Q, const arma::mat& K,
                                             const arma::mat& V, double scale,
                                             const math::StreamingMask& mask = {},
                                             const math::StreamingBlocks& blocks = {});

/// \brief The block sizes single precision runs with unless told otherwise: 256 queries against
///        512 keys, whose scores take 512 KiB in `float` (double's default, 128 × 256, takes
///        256 KiB).
///
/// Chosen by measurement, d = 64, one thread, on an AVX-512 CPU with 1 MiB of L2 per core:
/// without a mask they were a few percent faster than double's shape, with the causal mask
/// about as fast; chapter 09's page ("What makes a fused kernel fast") gives the sweeps. Larger
/// blocks pack each block of K and V once for more queries and make fewer GEMM calls. With the
/// blocks of Q, K, V and the output beside them a thread works on 896 KiB; on a core with less
/// L2, a smaller block may be faster (pass one). In double precision no shape was faster than
/// StreamingBlocks' default in every sweep, so double keeps it.
inline constexpr math::StreamingBlocks kFloatBlocks{.queries = 256, .keys = 512};

/// \brief streaming_attention() in single precision, as attention usually runs: the scores,
///        their exponentials and the outputs in `float` (sgemm), each query's running maximum
///        and sum of exponentials in `double`.
///
/// Equal to the double-precision result on the same numbers within `float`'s rounding: the
/// tests hold the output to \f$10^{-5}\f$ of its scale at \f$c = 1/\sqrt{d}\f$, and to
/// \f$2 \cdot 10^{-5}\f$ on random shapes, masks and blocks with scores up to about 125 (the
/// worst of 3000 such cases was \f$1.9 \cdot 10^{-6}\f$). `float` would be enough for the
/// running sum as well: measured once, with 500 queries against 65536 keys, the log-sum-exp
/// was \f$1.1 \cdot 10^{-6}\f$ from the double-precision result with a `float` sum and
/// \f$4.8 \cdot 10^{-7}\f$ with a `double` one, which costs one operation per query per block.
/// \param Q `(n × d_k)`. \param K `(m × d_k)`. \param V `(m × d_v)`. \param scale \f$c\f$.
/// \param mask which keys each query may attend to. \param blocks the block sizes (by default
///        kFloatBlocks).
/// \return the output and each row's log-sum-exp, in `float`.
/// \throws ShapeError and InputError as the double-precision form does, in the same words; a
///         score \f$c\,q \cdot k\f$ that overflows `float` (beyond about
///         \f$3.4 \cdot 10^{38}\f$) is refused, as one that overflows `double` is.
math::StreamingAttentionF streaming_attention(const arma::fmat& Q, const arma::fmat& K,
                                              const arma::fmat& V, double scale,
                                              const math::StreamingMask& mask = {},
                                              const math::StreamingBlocks& blocks = kFloatBlocks);

/// \brief \f$x_i \leftarrow e^{x_i - c}\f$ in place, returning \f$\sum_i e^{x_i - c}\f$: the
///        exponentials of one block of scores and their sum, in one loop the compiler
///        vectorises.
///
/// \f$e^t = 2^k e^r\f$ with \f$k = \mathrm{round}(t / \ln 2)\f$, \f$|r| \le \ln(2)/2\f$, and
/// \f$e^r\f$ from its Taylor series to \f$r^{13}\f$. It is written for the online softmax,
/// which passes a shift \f$c\f$ at least every \f$x_i\f$, so that \f$t = x_i - c \le 0\f$:
/// for \f$t\f$ in \f$[-708, 0]\f$ the result is within a relative \f$2\varepsilon\f$ of
/// `std::exp`; below \f$-708\f$ (where \f$e^t < 3.3 \cdot 10^{-308}\f$), and for
/// \f$t = -\infty\f$, a masked score, it is 0; NaN stays NaN. Only that low end is guarded,
/// which keeps the loop short: a positive \f$t\f$ still gives \f$e^t\f$ up to 709, but from
/// about 709.44 the exponent of \f$2^k\f$ overflows into the sign bit and the result is wrong
/// (\f$+\infty\f$, or a finite number of either sign): pass a \p shift at least every value. A
/// NaN \p shift makes every value NaN, and \p count 0 does nothing: this kernel does no checks,
/// its callers do.
/// \param x `count` values, overwritten. \param count how many. \param shift \f$c\f$.
/// \return the sum of the new values (added in any order).
double exp_shifted(double* x, arma::uword count, double shift);

/// \brief exp_shifted() in single precision: the same loop, with \f$e^r\f$'s series to
///        \f$r^{7}\f$ (enough for `float`), within a relative \f$2\varepsilon\f$ of `std::exp` for
///        \f$t\f$ in \f$[-87, 0]\f$; 0 below \f$-87\f$ (\f$e^t < 1.7 \cdot 10^{-38}\f$, near the
///        smallest normal `float`); a positive \f$t\f$ gives \f$e^t\f$ up to 88 and a wrong
///        result from about 88.38.
/// \param x `count` values, overwritten. \param count how many. \param shift \f$c\f$.
/// \return the sum of the new values (added in any order, in `float`).
float exp_shifted(float* x, arma::uword count, float shift);

}  // namespace attn::fast
