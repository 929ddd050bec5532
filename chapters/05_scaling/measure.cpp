#include "measure.hpp"

#include <attn/math/attention.hpp>
#include <attn/math/backward.hpp>
#include <attn/math/softmax.hpp>
#include <attn/math/validate.hpp>

namespace attn::ch05 {

Spread measure_spread(const arma::mat& q, const arma::mat& k) {
  math::require_same_rows("q · k per pair", "q", q, "k", k);
  math::require_same_cols("q · k per pair", "q", q, "k", k);
  math::require_nonempty("q", q);
  math::require_finite("q", q);
  math::require_finite("k", k);
  //! [measure-spread]
  const arma::vec dots = arma::sum(q % k, 1);  // (P × 1): one q·k per pair
  return {arma::var(dots, 1), arma::mean(arma::abs(dots))};
  //! [measure-spread]
}

//! [sharpness]
Sharpness sharpness(const arma::rowvec& scores) {
  const arma::rowvec w = math::softmax(scores);             // (1 × m)
  const arma::rowvec used = w.elem(arma::find(w > 0)).t();  // 0 · ln 0 counts as 0
  return {w.max(), -arma::accu(used % arma::log(used)),
          arma::norm(math::softmax_jacobian(w), "fro")};
}
//! [sharpness]

namespace {

void add_share(Sharpness& sum, const Sharpness& one, double share) {
  sum.max_weight += share * one.max_weight;
  sum.entropy += share * one.entropy;
  sum.jacobian_norm += share * one.jacobian_norm;
}

}  // namespace

Saturation measure_saturation(const std::vector<Probe>& probes) {
  if (probes.empty())
    throw math::InputError("measure_saturation needs at least one probe");
  //! [measure-saturation]
  const double share = 1.0 / static_cast<double>(probes.size());
  Saturation mean;
  for (const Probe& p : probes) {
    const arma::rowvec scores = math::attention_scores(p.q, p.K, 1.0);  // (1 × m): q Kᵀ
    add_share(mean.unscaled, sharpness(scores), share);
    add_share(mean.scaled, sharpness(scores * math::score_scale(p.q.n_cols)), share);
  }
  return mean;
  //! [measure-saturation]
}

}  // namespace attn::ch05
