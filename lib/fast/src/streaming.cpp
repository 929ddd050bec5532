#include "attn/fast/streaming.hpp"

#include "attn/fast/threads.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <utility>

namespace attn::fast {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr double kMinusInfinity = -kInfinity;

// Multiversioning by target_clones is an x86 feature: there the loader picks an AVX-512 copy or
// a plain one for the CPU it runs on. Elsewhere (arm64, for one) only the plain copy is built.
#if defined(__x86_64__)
#define ATTN_X86_CLONES __attribute__((target_clones("arch=x86-64-v4", "default")))
#else
#define ATTN_X86_CLONES
#endif

// An integer's bits read as a double (std::bit_cast in C++20).
double bits_as_double(std::uint64_t b) {
  return __builtin_bit_cast(double, b);
}

// The largest of `count` values (−∞ if every one is), kept as eight running maxima so that the
// comparisons overlap instead of each waiting for the one before.
ATTN_X86_CLONES
double largest(const double* x, arma::uword count) {
  constexpr arma::uword kLanes = 8;
  double lane[kLanes];
  std::fill(lane, lane + kLanes, kMinusInfinity);
  arma::uword i = 0;
  for (; i + kLanes <= count; i += kLanes)
    for (arma::uword j = 0; j < kLanes; ++j)
      lane[j] = std::max(lane[j], x[i + j]);
  for (; i < count; ++i)
    lane[0] = std::max(lane[0], x[i]);
  return *std::max_element(lane, lane + kLanes);
}

// The sum of `count` values, as eight running sums, for the same reason.
ATTN_X86_CLONES
double total(const double* x, arma::uword count) {
  constexpr arma::uword kLanes = 8;
  double lane[kLanes] = {};
  arma::uword i = 0;
  for (; i + kLanes <= count; i += kLanes)
    for (arma::uword j = 0; j < kLanes; ++j)
      lane[j] += x[i + j];
  for (; i < count; ++i)
    lane[0] += x[i];
  return std::accumulate(lane, lane + kLanes, 0.0);
}

}  // namespace

// exp_shifted is defined before online_update calls it: clang 19 refuses to make a function
// multiversioned (target_clones) after its first use.
//! [exp]
// On x86 compiled twice, for AVX-512 and for any x86-64; the loader picks the copy the CPU can
// run. Elsewhere it is compiled once, plain.
ATTN_X86_CLONES
void exp_shifted(double* x, arma::uword count, double shift) {
  // e^t = 2^k · e^r with k = round(t / ln 2) and r = t − k ln 2, |r| ≤ ln(2)/2. ln 2 is split in
  // two so that k ln 2 is subtracted exactly; e^r is its Taylor series to r^13 (truncation
  // below 1e-17), and 2^k is built from its exponent bits. No branch, no call: it vectorises.
  constexpr double kInvLn2 = 1.4426950408889634;
  constexpr double kLn2Hi = 0x1.62e42fefa3800p-1, kLn2Lo = 0x1.ef35793c76730p-45;
  constexpr double kSmallest = -708.0;  // below this e^t < 3.3e-308: flushed to 0
  constexpr double kLargest = 709.0;    // above this 2^k would not fit: +∞
#pragma omp simd
  for (arma::uword i = 0; i < count; ++i) {
    const double t = x[i] - shift;
    // t clamped to [kSmallest, kLargest], so that k is always a small integer (NaN too).
    const double tc = t > kSmallest ? (t < kLargest ? t : kLargest) : kSmallest;
    const double k = std::nearbyint(tc * kInvLn2);
    const double r = (tc - k * kLn2Hi) - k * kLn2Lo;
    double p = 1.0 / 6227020800.0;  // 1/13!, then Horner down to 1
    p = p * r + 1.0 / 479001600.0;
    p = p * r + 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    const auto biased = static_cast<std::uint64_t>(static_cast<std::int64_t>(k) + 1023);
    const double e = p * bits_as_double(biased << 52);  // e^r · 2^k
    x[i] =
        t >= kSmallest ? (t <= kLargest ? e : kInfinity) : (t < kSmallest ? 0.0 : t);  // NaN: NaN
  }
}
//! [exp]

namespace {

// One online-softmax step for one query and one block of its scores `s`:
// m ← max(m, max_j s_j), s_j ← e^{s_j − m}, ℓ ← e^{m_old − m} ℓ + Σ_j s_j. Returns e^{m_old − m},
// the factor that rescales what was accumulated against the old maximum.
//! [online-update]
double online_update(double* s, arma::uword count, double& m, double& l) {
  const double m_new = std::max(m, largest(s, count));
  exp_shifted(s, count, m_new);
  const double alpha = std::exp(m - m_new);  // 0 on the first block, where m = −∞
  l = alpha * l + total(s, count);
  m = m_new;
  return alpha;
}
//! [online-update]

}  // namespace

StreamingAttention streaming_attention(const arma::mat& Q, const arma::mat& K, const arma::mat& V,
                                       double scale, const StreamingMask& mask,
                                       const StreamingBlocks& blocks) {
  require_streaming_inputs(Q, K, V, scale, blocks);
  //! [streaming]
  // A block of rows of a column-major matrix is itself a matrix whose columns lie `n_rows`
  // apart (its leading dimension): BLAS reads the blocks of K and V in place, uncopied.
  const arma::uword n = Q.n_rows, keys = K.n_rows, d_k = Q.n_cols, d_v = V.n_cols;
  arma::mat Z(n, d_v);
  arma::vec log_sum_exp(n);
  const arma::uword query_blocks = (n + blocks.queries - 1) / blocks.queries;
  const OneThread one_blas_thread(
      Held::blas);  // one GEMM per thread, not two threads' GEMMs per core
#pragma omp parallel for schedule(dynamic)
  for (arma::uword b = 0; b < query_blocks; ++b) {
    const arma::uword q0 = b * blocks.queries, bq = std::min(blocks.queries, n - q0);
    const arma::mat Qb = scale * Q.rows(q0, q0 + bq - 1);  // (bq × d_k), scaled once
    arma::vec m(bq, arma::fill::value(kMinusInfinity)), l(bq, arma::fill::zeros);
    arma::mat O(bq, d_v, arma::fill::zeros), St(blocks.keys, bq);    // St: scores, key × query
    const arma::uword last = allowed_keys(mask, q0 + bq - 1, keys);  // no query here sees past it
    for (arma::uword k0 = 0; k0 < last; k0 += blocks.keys) {  // wholly masked blocks: skipped
      const arma::uword bk = std::min(blocks.keys, last - k0);
      // St = K_block Qbᵀ, (bk × bq): one GEMM
      cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, bk, bq, d_k, 1.0, K.colptr(0) + k0, keys,
                  Qb.memptr(), bq, 0.0, St.memptr(), blocks.keys);
      for (arma::uword c = 0; c < bq; ++c) {
        double* s = St.colptr(c);
        const arma::uword end = allowed_keys(mask, q0 + c, keys);
        for (arma::uword j = end > k0 ? end - k0 : 0; j < bk; ++j)
          s[j] = kMinusInfinity;
        // Every query may see key 0 (a mask allows a prefix of the keys), so the first block
        // gives each query a finite maximum.
        const double alpha = online_update(s, bk, m(c), l(c));  // s_j ← e^{s_j − m}
        if (alpha != 1.0)
          O.row(c) *= alpha;
      }
      // O += Stᵀ V_block, (bq × d_v): one GEMM
      cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, bq, d_v, bk, 1.0, St.memptr(),
                  blocks.keys, V.colptr(0) + k0, keys, 1.0, O.memptr(), bq);
    }
    Z.rows(q0, q0 + bq - 1) = O.each_col() / l;  // divide once, at the end
    log_sum_exp.subvec(q0, q0 + bq - 1) = m + arma::log(l);
  }
  //! [streaming]
  StreamingAttention result{std::move(Z), std::move(log_sum_exp)};
  require_no_overflow(result);
  return result;
}

}  // namespace attn::fast
