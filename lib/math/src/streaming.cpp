#include "attn/streaming.hpp"

#include "attn/threads.hpp"
#include "attn/validate.hpp"

#include <fmt/format.h>

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <utility>

namespace attn {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr double kMinusInfinity = -kInfinity;

// The last key query `row` may attend to, plus one (0 if none).
arma::uword allowed_end(const StreamingMask& mask, arma::uword row, arma::uword keys) {
  arma::uword end = mask.key_length > 0 ? std::min(mask.key_length, keys) : keys;
  if (mask.causal) end = std::min(end, row + 1);
  return end;
}

// Multiversioning by target_clones is an x86 feature: there the loader picks an AVX-512 copy or
// a plain one for the CPU it runs on. Elsewhere (arm64, for one) only the plain copy is built.
#if defined(__x86_64__)
#define ATTN_X86_CLONES __attribute__((target_clones("arch=x86-64-v4", "default")))
#else
#define ATTN_X86_CLONES
#endif

// An integer's bits read as a double (std::bit_cast in C++20).
double bits_as_double(std::uint64_t b) { return __builtin_bit_cast(double, b); }

// The largest of `count` values (−∞ if every one is), kept as eight running maxima so that the
// comparisons overlap instead of each waiting for the one before.
ATTN_X86_CLONES
double largest(const double* x, arma::uword count) {
  constexpr arma::uword kLanes = 8;
  double lane[kLanes];
  std::fill(lane, lane + kLanes, kMinusInfinity);
  arma::uword i = 0;
  for (; i + kLanes <= count; i += kLanes)
    for (arma::uword j = 0; j < kLanes; ++j) lane[j] = std::max(lane[j], x[i + j]);
  for (; i < count; ++i) lane[0] = std::max(lane[0], x[i]);
  return *std::max_element(lane, lane + kLanes);
}

// The sum of `count` values, as eight running sums, for the same reason.
ATTN_X86_CLONES
double total(const double* x, arma::uword count) {
  constexpr arma::uword kLanes = 8;
  double lane[kLanes] = {};
  arma::uword i = 0;
  for (; i + kLanes <= count; i += kLanes)
    for (arma::uword j = 0; j < kLanes; ++j) lane[j] += x[i + j];
  for (; i < count; ++i) lane[0] += x[i];
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
    x[i] = t >= kSmallest ? (t <= kLargest ? e : kInfinity) : (t < kSmallest ? 0.0 : t);  // NaN: NaN
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
  require_nonempty("Q", Q);
  require_nonempty("K", K);
  require_nonempty("V", V);
  require_finite("Q", Q);
  require_finite("K", K);
  require_finite("V", V);
  require_same_cols("Q K^T", "Q", Q, "K", K);
  require_same_rows("output = W V", "K", K, "V", V);
  if (blocks.queries == 0 || blocks.keys == 0)
    throw InputError("streaming_attention: blocks must hold at least one query and one key");
  require_finite("streaming_attention: the scale", scale);

  //! [streaming]
  // A block of rows of a column-major matrix is itself a matrix whose columns lie `n_rows`
  // apart (its leading dimension): BLAS reads the blocks of K and V in place, uncopied.
  const arma::uword n = Q.n_rows, keys = K.n_rows, d_k = Q.n_cols, d_v = V.n_cols;
  arma::mat Z(n, d_v);
  arma::vec log_sum_exp(n);
  const arma::uword query_blocks = (n + blocks.queries - 1) / blocks.queries;
  const OneBlasThread one_blas_thread;  // one GEMM per thread, not two threads' GEMMs per core
#pragma omp parallel for schedule(dynamic)
  for (arma::uword b = 0; b < query_blocks; ++b) {
    const arma::uword q0 = b * blocks.queries, bq = std::min(blocks.queries, n - q0);
    const arma::mat Qb = scale * Q.rows(q0, q0 + bq - 1);   // (bq × d_k), scaled once
    arma::vec m(bq, arma::fill::value(kMinusInfinity)), l(bq, arma::fill::zeros);
    arma::mat O(bq, d_v, arma::fill::zeros), St(blocks.keys, bq);  // St: scores, key × query
    const arma::uword last = allowed_end(mask, q0 + bq - 1, keys);  // no query here sees past it
    for (arma::uword k0 = 0; k0 < last; k0 += blocks.keys) {  // wholly masked blocks: skipped
      const arma::uword bk = std::min(blocks.keys, last - k0);
      // St = K_block Qbᵀ, (bk × bq): one GEMM
      cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, bk, bq, d_k, 1.0, K.colptr(0) + k0,
                  keys, Qb.memptr(), bq, 0.0, St.memptr(), blocks.keys);
      for (arma::uword c = 0; c < bq; ++c) {
        double* s = St.colptr(c);
        const arma::uword end = allowed_end(mask, q0 + c, keys);
        for (arma::uword j = end > k0 ? end - k0 : 0; j < bk; ++j) s[j] = kMinusInfinity;
        // Every query may see key 0 (a mask allows a prefix of the keys), so the first block
        // gives each query a finite maximum.
        const double alpha = online_update(s, bk, m(c), l(c));  // s_j ← e^{s_j − m}
        if (alpha != 1.0) O.row(c) *= alpha;
      }
      // O += Stᵀ V_block, (bq × d_v): one GEMM
      cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, bq, d_v, bk, 1.0, St.memptr(),
                  blocks.keys, V.colptr(0) + k0, keys, 1.0, O.memptr(), bq);
    }
    Z.rows(q0, q0 + bq - 1) = O.each_col() / l;            // divide once, at the end
    log_sum_exp.subvec(q0, q0 + bq - 1) = m + arma::log(l);
  }
  // Finite inputs can still give an infinite score c q·k; then Z would hold NaN.
  if (!log_sum_exp.is_finite() || !Z.is_finite())
    throw InputError("streaming_attention: a score c q·k overflowed to infinity; Q, K or the "
                     "scale is too large");
  return {std::move(Z), std::move(log_sum_exp)};
  //! [streaming]
}

AttentionMemory attention_memory(arma::uword n, arma::uword m, arma::uword d_k, arma::uword d_v,
                                 const StreamingBlocks& blocks) {
  const double bytes = sizeof(double);
  return {3.0 * n * m * bytes, ((n + m) * d_k + (m + n) * d_v) * bytes,
          static_cast<double>(blocks.queries * blocks.keys) * bytes};
}

//! [merge]
StreamingAttention merge(const StreamingAttention& a, const StreamingAttention& b) {
  if (a.output.n_rows != b.output.n_rows || a.output.n_cols != b.output.n_cols ||
      a.log_sum_exp.n_elem != a.output.n_rows || b.log_sum_exp.n_elem != b.output.n_rows)
    throw ShapeError(fmt::format("merge: outputs {} and {}, log-sum-exps of {} and {}",
                                 shape_of(a.output), shape_of(b.output), a.log_sum_exp.n_elem,
                                 b.log_sum_exp.n_elem));
  require_nonempty("merge: a.output", a.output);
  require_finite("merge: a.output", a.output);
  require_finite("merge: b.output", b.output);
  require_finite("merge: a.log_sum_exp", a.log_sum_exp);
  require_finite("merge: b.log_sum_exp", b.log_sum_exp);
  const arma::vec top = arma::max(a.log_sum_exp, b.log_sum_exp);
  const arma::vec wa = arma::exp(a.log_sum_exp - top), wb = arma::exp(b.log_sum_exp - top);
  const arma::vec both = wa + wb;  // e^{L − top}
  arma::mat Z = a.output.each_col() % (wa / both) + b.output.each_col() % (wb / both);
  return {std::move(Z), top + arma::log(both)};
}
//! [merge]

arma::umat streaming_schedule(arma::uword n, arma::uword keys, const StreamingMask& mask,
                              const StreamingBlocks& blocks) {
  if (n == 0 || keys == 0 || blocks.queries == 0 || blocks.keys == 0)
    throw InputError("streaming_schedule: sizes and block sizes must be at least 1");
  const arma::uword rows = (n + blocks.queries - 1) / blocks.queries;
  const arma::uword cols = (keys + blocks.keys - 1) / blocks.keys;
  arma::umat plan(rows, cols);
  for (arma::uword b = 0; b < rows; ++b) {
    const arma::uword q0 = b * blocks.queries, q1 = std::min(n, q0 + blocks.queries);
    const arma::uword first_end = allowed_end(mask, q0, keys), last = allowed_end(mask, q1 - 1, keys);
    for (arma::uword c = 0; c < cols; ++c) {
      const arma::uword k0 = c * blocks.keys, k1 = std::min(keys, k0 + blocks.keys);
      const BlockWork work = k0 >= last       ? BlockWork::skipped
                             : first_end < k1 ? BlockWork::partly_masked
                                              : BlockWork::whole;
      plan(b, c) = static_cast<arma::uword>(work);
    }
  }
  return plan;
}

std::vector<OnlineStep> online_softmax_steps(const arma::rowvec& scores, const arma::mat& V,
                                             arma::uword block) {
  require_nonempty("scores", scores);
  require_finite("scores", scores);
  require_finite("V", V);
  if (V.n_rows != scores.n_elem)
    throw ShapeError(fmt::format("online_softmax_steps: {} scores for V {}", scores.n_elem,
                                 shape_of(V)));
  if (block == 0) throw InputError("online_softmax_steps: a block holds at least one key");
  std::vector<OnlineStep> steps;
  double m = kMinusInfinity, l = 0.0;
  arma::rowvec O(V.n_cols, arma::fill::zeros);
  for (arma::uword k0 = 0; k0 < scores.n_elem; k0 += block) {
    const arma::uword k1 = std::min<arma::uword>(scores.n_elem, k0 + block);
    arma::rowvec e = scores.cols(k0, k1 - 1);
    const double alpha = online_update(e.memptr(), e.n_elem, m, l);  // e_j ← e^{s_j − m}
    O = alpha * O + e * V.rows(k0, k1 - 1);
    steps.push_back({m, l, O});
  }
  return steps;
}

KVCache::KVCache(arma::uword d_k, arma::uword d_v) : K_(16, d_k), V_(16, d_v) {
  if (d_k == 0 || d_v == 0) throw InputError("a KV cache needs keys and values at least 1 wide");
}

void KVCache::append(const arma::rowvec& k, const arma::rowvec& v) {
  if (k.n_elem != K_.n_cols || v.n_elem != V_.n_cols)
    throw ShapeError(fmt::format("KV cache of widths {} and {}: a key of {} and a value of {}",
                                 K_.n_cols, V_.n_cols, k.n_elem, v.n_elem));
  require_finite("the key", k);
  require_finite("the value", v);
  if (size_ == K_.n_rows) {  // full: double the storage
    K_.resize(2 * K_.n_rows, K_.n_cols);
    V_.resize(2 * V_.n_rows, V_.n_cols);
  }
  K_.row(size_) = k;
  V_.row(size_) = v;
  ++size_;
}

//! [kv-cache]
arma::rowvec KVCache::attend(const arma::rowvec& q, double scale) const {
  if (size_ == 0) throw InputError("the KV cache is empty: append a key and a value first");
  if (q.n_elem != K_.n_cols)
    throw ShapeError(fmt::format("a query of {} against keys of width {}", q.n_elem, K_.n_cols));
  require_finite("the query", q);
  require_finite("KVCache::attend: the scale", scale);
  const arma::rowvec s = scale * (q * K_.rows(0, size_ - 1).t());  // (1 × t): O(t·d)
  require_finite("the scores c q K^T", s);  // finite inputs can still overflow
  const arma::rowvec e = arma::exp(s - s.max());
  return (e * V_.rows(0, size_ - 1)) / arma::accu(e);               // (1 × d_v)
}
//! [kv-cache]

}  // namespace attn
