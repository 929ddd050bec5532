#include "attn/math/compare.hpp"

#include "attn/math/validate.hpp"

#include <algorithm>

namespace attn::math {

double relative_gap(const arma::mat& ours, const arma::mat& reference) {
  require_same_rows("relative_gap", "ours", ours, "reference", reference);
  require_same_cols("relative_gap", "ours", ours, "reference", reference);
  require_nonempty("ours", ours);
  require_finite("ours", ours);  // arma's max() would pass over a NaN
  require_finite("reference", reference);
  return arma::abs(ours - reference).max() / std::max(1.0, arma::abs(reference).max());
}

}  // namespace attn::math
