#include "attn/fast/streaming.hpp"

#include "attn/fast/threads.hpp"

#include <cblas.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

namespace attn::fast {

namespace {

// Multiversioning by target_clones is an x86 feature: there the loader picks the AVX-512 copy,
// the AVX2-with-FMA copy or the plain one, whichever the CPU runs. Elsewhere (arm64, for one)
// only the plain copy is built.
#if defined(__x86_64__)
#define ATTN_X86_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define ATTN_X86_CLONES
#endif

// e^t = 2^k e^r for one precision. The layout of the floating-point bits comes from the type;
// where e^t stops being a normal number, ln 2 in two parts and the Taylor coefficients of e^r
// (Horner order, highest power first) are set for each precision below.
template <typename eT>
struct ExpRange;

template <typename eT>
struct ExpConstants : ExpRange<eT> {
  using Bits = std::conditional_t<sizeof(eT) == 8, std::uint64_t, std::uint32_t>;
  static constexpr int kFractionBits = std::numeric_limits<eT>::digits - 1;         // 52 or 23
  static constexpr Bits kExponentBias = std::numeric_limits<eT>::max_exponent - 1;  // 1023 or 127
};

template <>
struct ExpRange<double> {
  static constexpr double kSmallest = -708.0;  // below this e^t < 3.3e-308: flushed to 0
  static constexpr double kLn2Hi = 0x1.62e42fefa3800p-1, kLn2Lo = 0x1.ef35793c76730p-45;
  // 1/13!, ..., 1/2!, 1, 1: to r^13, truncation below 1e-17
  static constexpr std::array<double, 14> kTaylor = {1.0 / 6227020800.0,
                                                     1.0 / 479001600.0,
                                                     1.0 / 39916800.0,
                                                     1.0 / 3628800.0,
                                                     1.0 / 362880.0,
                                                     1.0 / 40320.0,
                                                     1.0 / 5040.0,
                                                     1.0 / 720.0,
                                                     1.0 / 120.0,
                                                     1.0 / 24.0,
                                                     1.0 / 6.0,
                                                     0.5,
                                                     1.0,
                                                     1.0};
};

template <>
struct ExpRange<float> {
  static constexpr float kSmallest = -87.0f;  // below this e^t < 1.7e-38: flushed to 0
  static constexpr float kLn2Hi = 0x1.63p-1f, kLn2Lo = -0x1.bd0106p-13f;
  // 1/7!, ..., 1/2!, 1, 1: to r^7, truncation below 1e-8
  static constexpr std::array<float, 8> kTaylor = {
      1.0f / 5040.0f, 1.0f / 720.0f, 1.0f / 120.0f, 1.0f / 24.0f, 1.0f / 6.0f, 0.5f, 1.0f, 1.0f};
};

// The loop of exp_shifted, for either precision; exp_shifted's two forms below are its copies
// compiled for each CPU. It is inlined into them, so that each copy vectorises it for its CPU.
//! [exp]
template <typename eT>
[[gnu::always_inline]] inline eT exp_and_sum(eT* x, arma::uword count, eT shift) {
  // e^t = 2^k · e^r with k = round(t / ln 2) and r = t − k ln 2, |r| ≤ ln(2)/2. Adding 1.5 · 2^52
  // (1.5 · 2^23 for float) rounds t / ln 2 to the integer k and leaves k in the low bits, from
  // which 2^k's exponent bits are made; ln 2 is split in two so that k ln 2 is subtracted exactly;
  // e^r is its Taylor series. The shift is at least every x, so t ≤ 0: only the low end of the
  // range needs a guard. No branch, no call: it vectorises.
  using C = ExpConstants<eT>;
  using Bits = typename C::Bits;
  constexpr eT kInvLn2 = static_cast<eT>(1.4426950408889634);
  constexpr eT kRound =
      static_cast<eT>(Bits{3} << (C::kFractionBits - 1));  // 1.5 · 2^52 (float: 1.5 · 2^23)
  eT sum = 0;
#pragma omp simd reduction(+ : sum)
  for (arma::uword i = 0; i < count; ++i) {
    const eT t = x[i] - shift;
    const eT tc = std::max(t, C::kSmallest);     // so that 2^k stays a normal number; NaN stays NaN
    const eT k_rounded = tc * kInvLn2 + kRound;  // k + 1.5 · 2^52 (float: 1.5 · 2^23), exactly
    const eT k = k_rounded - kRound;
    const eT r = (tc - k * C::kLn2Hi) - k * C::kLn2Lo;
    eT p = C::kTaylor[0];
#pragma GCC unroll 16
    for (std::size_t j = 1; j < C::kTaylor.size(); ++j)
      p = p * r + C::kTaylor[j];
    const Bits two_to_k = (std::bit_cast<Bits>(k_rounded) + C::kExponentBias) << C::kFractionBits;
    const eT e = p * std::bit_cast<eT>(two_to_k);  // e^r · 2^k
    const eT y = t < C::kSmallest ? eT{0} : e;     // a masked score (−∞) gives 0
    x[i] = y;
    sum += y;
  }
  return sum;
}
//! [exp]

// The largest of `count` values (−∞ if every one is, or if there are none), kept as sixteen
// running maxima. Each step is an elementwise maximum of sixteen lanes with sixteen values, which
// `omp simd` makes one to eight vector instructions by precision and CPU (one `vmaxps` in float
// with AVX-512; without the pragma GCC 12 left it as sixteen scalar ones). A single loop
// `m = std::max(m, x[i])` would not be vectorised: with a NaN or zeros of both signs its result
// depends on the order of the comparisons, so GCC does not regroup them unless told that
// neither occurs (-ffinite-math-only -fno-signed-zeros), which exp_and_sum cannot promise.
template <typename eT>
[[gnu::always_inline]] inline eT largest_of(const eT* x, arma::uword count) {
  constexpr arma::uword kLanes = 16;
  std::array<eT, kLanes> lane;
  lane.fill(-std::numeric_limits<eT>::infinity());
  arma::uword i = 0;
  for (; i + kLanes <= count; i += kLanes) {
#pragma omp simd
    for (arma::uword j = 0; j < kLanes; ++j)
      lane[j] = std::max(lane[j], x[i + j]);
  }
  for (; i < count; ++i)
    lane[0] = std::max(lane[0], x[i]);
  return *std::max_element(lane.begin(), lane.end());
}

ATTN_X86_CLONES
double largest(const double* x, arma::uword count) {
  return largest_of(x, count);
}

ATTN_X86_CLONES
float largest(const float* x, arma::uword count) {
  return largest_of(x, count);
}

}  // namespace

// exp_shifted is defined before online_update calls it: clang 19 refuses to make a function
// multiversioned (target_clones) after its first use.
ATTN_X86_CLONES
double exp_shifted(double* x, arma::uword count, double shift) {
  return exp_and_sum(x, count, shift);
}

ATTN_X86_CLONES
float exp_shifted(float* x, arma::uword count, float shift) {
  return exp_and_sum(x, count, shift);
}

namespace {

// The two GEMMs of a block, C ← α op(A) op(B) + β C, column-major, in each precision.
void gemm(CBLAS_TRANSPOSE op_a, CBLAS_TRANSPOSE op_b, arma::uword m, arma::uword n, arma::uword k,
          const double* A, arma::uword lda, const double* B, arma::uword ldb, double beta,
          double* C, arma::uword ldc) {
  cblas_dgemm(CblasColMajor, op_a, op_b, m, n, k, 1.0, A, lda, B, ldb, beta, C, ldc);
}

void gemm(CBLAS_TRANSPOSE op_a, CBLAS_TRANSPOSE op_b, arma::uword m, arma::uword n, arma::uword k,
          const float* A, arma::uword lda, const float* B, arma::uword ldb, float beta, float* C,
          arma::uword ldc) {
  cblas_sgemm(CblasColMajor, op_a, op_b, m, n, k, 1.0f, A, lda, B, ldb, beta, C, ldc);
}

// One online-softmax step for one query and one block of its scores `s`:
// m ← max(m, max_j s_j), s_j ← e^{s_j − m}, ℓ ← e^{m_old − m} ℓ + Σ_j s_j. Returns e^{m_old − m},
// the factor that rescales what was accumulated against the old maximum. The running maximum
// and sum are doubles in both precisions: they cost one operation per block.
//! [online-update]
template <typename eT>
double online_update(eT* s, arma::uword count, double& m, double& l) {
  const double m_new = std::max(m, static_cast<double>(largest(s, count)));
  const double block_sum = exp_shifted(s, count, static_cast<eT>(m_new));  // s_j ← e^{s_j − m'}
  const double alpha = std::exp(m - m_new);  // 0 on the first block, where m = −∞
  l = alpha * l + block_sum;
  m = m_new;
  return alpha;
}
//! [online-update]

// The width of the narrow steps along a causal mask's diagonal (step_keys). Chosen by
// measurement: 32 and 128 keys were within 3% of it.
constexpr arma::uword kDiagonalKeys = 64;

// How many keys, from key k0, the next step of a block of queries takes. `whole` is a block's
// worth (or what is left of it) and every query of the block sees the first `seen_by_all` keys.
// Where all the queries see all `whole` keys, the step is `whole`. In the key block where they
// do not (a causal mask's diagonal), the keys every query sees go in one step (a whole number of
// kDiagonalKeys), and the rest kDiagonalKeys at a time.
arma::uword step_keys(arma::uword k0, arma::uword whole, arma::uword seen_by_all) {
  if (k0 + whole <= seen_by_all)
    return whole;
  const arma::uword all_see = seen_by_all > k0 ? seen_by_all - k0 : 0;
  const arma::uword all_see_in_steps = all_see / kDiagonalKeys * kDiagonalKeys;
  return all_see_in_steps > 0 ? all_see_in_steps : std::min(kDiagonalKeys, whole);
}

template <typename eT>
math::BasicStreamingAttention<eT> streaming(const arma::Mat<eT>& Q, const arma::Mat<eT>& K,
                                            const arma::Mat<eT>& V, double scale,
                                            const math::StreamingMask& mask,
                                            const math::StreamingBlocks& blocks) {
  math::require_streaming_inputs(Q, K, V, scale, blocks);
  //! [streaming]
  // A block of rows of a column-major matrix is itself a matrix whose columns lie `n_rows`
  // apart (its leading dimension): BLAS reads the blocks of K and V in place, uncopied. Each
  // query's scores and its unnormalised output are columns (St, Ot), so that the softmax and
  // the rescaling run down contiguous memory.
  const arma::uword n = Q.n_rows, keys = K.n_rows, d_k = Q.n_cols, d_v = V.n_cols;
  arma::Mat<eT> Z(n, d_v);
  arma::Col<eT> log_sum_exp(n);
  const arma::uword query_blocks = (n + blocks.queries - 1) / blocks.queries;
  const OneThread one_blas_thread(
      Held::blas);  // one GEMM per thread, not two threads' GEMMs per core
  // Under a causal mask the last query blocks see the most keys: starting with them leaves the
  // short blocks to even out the threads' shares at the end.
#pragma omp parallel for schedule(dynamic)
  for (arma::uword i = 0; i < query_blocks; ++i) {
    const arma::uword b = query_blocks - 1 - i;
    const arma::uword q0 = b * blocks.queries, bq = std::min(blocks.queries, n - q0);
    const arma::Mat<eT> Qb = static_cast<eT>(scale) * Q.rows(q0, q0 + bq - 1);  // scaled once
    arma::vec m(bq, arma::fill::value(-std::numeric_limits<double>::infinity()));
    arma::vec l(bq, arma::fill::zeros);
    arma::Mat<eT> St(blocks.keys, bq);             // scores: key × query
    arma::Mat<eT> Ot(d_v, bq, arma::fill::zeros);  // outputs: value × query
    const arma::uword last =
        math::allowed_keys(mask, q0 + bq - 1, keys);  // no query here sees past it
    const arma::uword seen_by_all =
        math::allowed_keys(mask, q0, keys);  // every query here sees these
    for (arma::uword k0 = 0; k0 < last;) {   // wholly masked blocks: skipped
      // Narrower steps along a causal diagonal; a query that sees none of a step's keys sits
      // it out.
      const arma::uword bk = step_keys(k0, std::min(blocks.keys, last - k0), seen_by_all);
      arma::uword c0 = 0;  // the first query that sees key k0; the mask lets later ones see more
      while (math::allowed_keys(mask, q0 + c0, keys) <= k0)
        ++c0;
      const arma::uword width = bq - c0;
      // St = K_block Qbᵀ, (bk × width): one GEMM
      gemm(CblasNoTrans, CblasTrans, bk, width, d_k, K.colptr(0) + k0, keys, Qb.colptr(0) + c0, bq,
           0, St.colptr(c0), blocks.keys);
      for (arma::uword c = c0; c < bq; ++c) {
        eT* s = St.colptr(c);
        const arma::uword end = math::allowed_keys(mask, q0 + c, keys);
        for (arma::uword j = end > k0 ? end - k0 : 0; j < bk; ++j)
          s[j] = -std::numeric_limits<eT>::infinity();
        // Every query may see key 0 (a mask allows a prefix of the keys), so the first block
        // gives each query a finite maximum.
        const double alpha = online_update(s, bk, m(c), l(c));  // s_j ← e^{s_j − m}
        if (alpha != 1.0)
          Ot.col(c) *= static_cast<eT>(alpha);
      }
      // Ot += V_blockᵀ St, (d_v × width): one GEMM
      gemm(CblasTrans, CblasNoTrans, d_v, width, bk, V.colptr(0) + k0, keys, St.colptr(c0),
           blocks.keys, 1, Ot.colptr(c0), d_v);
      k0 += bk;
    }
    const arma::Row<eT> inverse_sum = arma::conv_to<arma::Row<eT>>::from(1.0 / l.t());
    Z.rows(q0, q0 + bq - 1) = (Ot.each_row() % inverse_sum).t();  // divide once, at the end
    log_sum_exp.subvec(q0, q0 + bq - 1) = arma::conv_to<arma::Col<eT>>::from(m + arma::log(l));
  }
  //! [streaming]
  math::BasicStreamingAttention<eT> result{std::move(Z), std::move(log_sum_exp)};
  math::require_no_overflow(result);
  return result;
}

}  // namespace

math::StreamingAttention streaming_attention(const arma::mat& Q, const arma::mat& K,
                                             const arma::mat& V, double scale,
                                             const math::StreamingMask& mask,
                                             const math::StreamingBlocks& blocks) {
  return streaming(Q, K, V, scale, mask, blocks);
}

math::StreamingAttentionF streaming_attention(const arma::fmat& Q, const arma::fmat& K,
                                              const arma::fmat& V, double scale,
                                              const math::StreamingMask& mask,
                                              const math::StreamingBlocks& blocks) {
  return streaming(Q, K, V, scale, mask, blocks);
}

}  // namespace attn::fast
