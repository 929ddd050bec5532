#include "online_softmax.hpp"

#include <attn/math/validate.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attn::ch09 {

namespace {

constexpr double kMinusInfinity = -std::numeric_limits<double>::infinity();

// One online-softmax step for one query and one block of its scores `s`:
// m ← max(m, max_j s_j), s_j ← e^{s_j − m}, ℓ ← e^{m_old − m} ℓ + Σ_j s_j. Returns e^{m_old − m},
// the factor that rescales what was accumulated against the old maximum.
//! [online-update]
double online_update(arma::rowvec& s, double& m, double& l) {
  const double m_new = std::max(m, s.max());
  s = arma::exp(s - m_new);
  const double alpha = std::exp(m - m_new);  // 0 on the first block, where m = −∞
  l = alpha * l + arma::accu(s);
  m = m_new;
  return alpha;
}
//! [online-update]

}  // namespace

AttentionMemory attention_memory(arma::uword n, arma::uword m, arma::uword d_k, arma::uword d_v,
                                 const math::StreamingBlocks& blocks) {
  const double bytes = sizeof(double);
  return {3.0 * n * m * bytes, ((n + m) * d_k + (m + n) * d_v) * bytes,
          static_cast<double>(blocks.queries * blocks.keys) * bytes};
}

arma::umat streaming_schedule(arma::uword n, arma::uword keys, const math::StreamingMask& mask,
                              const math::StreamingBlocks& blocks) {
  if (n == 0 || keys == 0 || blocks.queries == 0 || blocks.keys == 0)
    throw math::InputError("streaming_schedule: sizes and block sizes must be at least 1");
  const arma::uword rows = (n + blocks.queries - 1) / blocks.queries;
  const arma::uword cols = (keys + blocks.keys - 1) / blocks.keys;
  arma::umat plan(rows, cols);
  for (arma::uword b = 0; b < rows; ++b) {
    const arma::uword q0 = b * blocks.queries, q1 = std::min(n, q0 + blocks.queries);
    const arma::uword first_end = math::allowed_keys(mask, q0, keys),
                      last = math::allowed_keys(mask, q1 - 1, keys);
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
  math::require_nonempty("scores", scores);
  math::require_finite("scores", scores);
  math::require_finite("V", V);
  if (V.n_rows != scores.n_elem)
    throw math::ShapeError(
        fmt::format("online_softmax_steps: {} scores for V {}", scores.n_elem, math::shape_of(V)));
  if (block == 0)
    throw math::InputError("online_softmax_steps: a block holds at least one key");
  std::vector<OnlineStep> steps;
  double m = kMinusInfinity, l = 0.0;
  arma::rowvec O(V.n_cols, arma::fill::zeros);
  for (arma::uword k0 = 0; k0 < scores.n_elem; k0 += block) {
    const arma::uword k1 = std::min<arma::uword>(scores.n_elem, k0 + block);
    arma::rowvec e = scores.cols(k0, k1 - 1);
    const double alpha = online_update(e, m, l);  // e_j ← e^{s_j − m}
    O = alpha * O + e * V.rows(k0, k1 - 1);
    steps.push_back({m, l, O});
  }
  return steps;
}

}  // namespace attn::ch09
