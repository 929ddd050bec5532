// Chapter 09's exercises, answered. Reference solutions: look only after trying.
#include "09_at_scale.hpp"

#include <algorithm>
#include <cmath>

namespace attn::exercises {

OnlineState online_update(const OnlineState& state, double score, const arma::rowvec& value) {
  if (score == -std::numeric_limits<double>::infinity()) {
    return state;  // a masked key adds nothing (and on the empty state, −∞ − (−∞) would be NaN)
  }
  const double m = std::max(state.m, score);
  const double rescale = std::exp(state.m - m);  // 0 on the first key, where state.m = −∞
  const double weight = std::exp(score - m);
  return {m, rescale * state.l + weight, rescale * state.o + weight * value};
}

OnlineState merge_states(const OnlineState& a, const OnlineState& b) {
  if (a.m == -std::numeric_limits<double>::infinity()) {
    return b;  // a has seen no key (or only masked ones)
  }
  if (b.m == -std::numeric_limits<double>::infinity()) {
    return a;
  }
  const double m = std::max(a.m, b.m);
  const double scale_a = std::exp(a.m - m), scale_b = std::exp(b.m - m);
  return {m, scale_a * a.l + scale_b * b.l, scale_a * a.o + scale_b * b.o};
}

}  // namespace attn::exercises
