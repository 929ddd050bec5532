#include "attn/math/measure.hpp"

#include "attn/math/attention.hpp"
#include "attn/math/backward.hpp"
#include "attn/math/softmax.hpp"
#include "attn/math/validate.hpp"

namespace attn {

Spread measure_spread(const arma::mat& q, const arma::mat& k) {
  require_same_rows("q · k per pair", "q", q, "k", k);
  require_same_cols("q · k per pair", "q", q, "k", k);
  require_nonempty("q", q);
  require_finite("q", q);
  require_finite("k", k);
  //! [measure-spread]
  const arma::vec dots = arma::sum(q % k, 1);  // (P × 1): one q·k per pair
  return {arma::var(dots, 1), arma::mean(arma::abs(dots))};
  //! [measure-spread]
}

//! [sharpness]
Sharpness sharpness(const arma::rowvec& scores) {
  const arma::rowvec w = softmax(scores);                   // (1 × m)
  const arma::rowvec used = w.elem(arma::find(w > 0)).t();  // 0 · ln 0 counts as 0
  return {w.max(), -arma::accu(used % arma::log(used)), arma::norm(softmax_jacobian(w), "fro")};
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
    throw InputError("measure_saturation needs at least one probe");
  //! [measure-saturation]
  const double share = 1.0 / static_cast<double>(probes.size());
  Saturation mean;
  for (const Probe& p : probes) {
    const arma::rowvec scores = attention_scores(p.q, p.K, 1.0);  // (1 × m): q Kᵀ
    add_share(mean.unscaled, sharpness(scores), share);
    add_share(mean.scaled, sharpness(scores * score_scale(p.q.n_cols)), share);
  }
  return mean;
  //! [measure-saturation]
}

double relative_gap(const arma::mat& ours, const arma::mat& reference) {
  require_same_rows("relative_gap", "ours", ours, "reference", reference);
  require_same_cols("relative_gap", "ours", ours, "reference", reference);
  require_nonempty("ours", ours);
  require_finite("ours", ours);  // arma's max() would pass over a NaN
  require_finite("reference", reference);
  return arma::abs(ours - reference).max() / std::max(1.0, arma::abs(reference).max());
}

}  // namespace attn
