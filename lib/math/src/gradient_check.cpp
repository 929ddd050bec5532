#include "attn/math/gradient_check.hpp"

#include "attn/math/validate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace attn::math {

GradientCheck check_gradient(const std::function<double(const arma::mat&)>& loss,
                             const arma::mat& x, const arma::mat& analytic, double h) {
  require_same_rows("gradient check", "x", x, "analytic gradient", analytic);
  require_same_cols("gradient check", "x", x, "analytic gradient", analytic);
  require_nonempty("x", x);
  require_finite("x", x);
  require_finite("analytic gradient", analytic);
  if (!std::isfinite(h) || !(h > 0))
    throw InputError(fmt::format("gradient check: the step h = {} must be finite and positive", h));
  constexpr double kFloor = 1e-8;
  GradientCheck worst;
  arma::mat probe = x;
  for (arma::uword i = 0; i < x.n_elem; ++i) {
    probe(i) = x(i) + h;
    const double up = loss(probe);
    probe(i) = x(i) - h;
    const double down = loss(probe);
    probe(i) = x(i);
    if (!std::isfinite(up) || !std::isfinite(down))  // NaN would compare as "no error"
      throw InputError(
          fmt::format("gradient check: the loss is {} at x + h e_{} and {} at "
                      "x - h e_{}; it must be finite",
                      up, i, down, i));
    const double numeric = (up - down) / (2.0 * h);
    const double error = std::fabs(numeric - analytic(i)) /
                         std::max(std::fabs(numeric) + std::fabs(analytic(i)), kFloor);
    if (error >= worst.max_relative_error)
      worst = {error, i, analytic(i), numeric};
  }
  return worst;
}

}  // namespace attn::math
