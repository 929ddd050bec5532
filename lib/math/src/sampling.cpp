#include "attn/math/sampling.hpp"

#include "attn/math/validate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>

namespace attn::math {

namespace {

// Throws InputError naming the first token whose value is not finite.
void require_finite_tokens(std::string_view op, std::string_view what, const arma::rowvec& v) {
  const arma::uvec bad = arma::find_nonfinite(v);
  if (!bad.is_empty())
    throw InputError(fmt::format("{}: the {} of token {} is {}; it must be a finite number", op,
                                 what, bad(0), v(bad(0))));
}

void check_options(const SamplingOptions& options) {
  const double T = options.temperature;
  if (!(T >= 0.0) || !std::isfinite(T))
    throw InputError(fmt::format(
        "next_token_distribution: the temperature is {}; it must be finite and positive, "
        "or 0 for greedy decoding",
        T));
  const double p = options.top_p;
  if (!(p > 0.0 && p <= 1.0))
    throw InputError(fmt::format(
        "next_token_distribution: top_p is {}; it must be in (0, 1], and 1 turns it off", p));
}

// Zeros every token from position `kept` of `order` on, and renormalises what is left.
void keep_first(arma::rowvec& q, const arma::uvec& order, arma::uword kept) {
  if (kept >= order.n_elem)
    return;
  q.elem(order.tail(order.n_elem - kept)).zeros();
  q /= arma::accu(q);
}

}  // namespace

arma::rowvec next_token_distribution(const arma::rowvec& logits, const SamplingOptions& options) {
  require_nonempty("next_token_distribution: the logits", logits);
  require_finite_tokens("next_token_distribution", "logit", logits);
  check_options(options);
  const arma::uword V = logits.n_elem;
  //! [next-token-distribution]
  // The filters' order: by logit, descending; equal logits by index (stable).
  const arma::uvec order = arma::stable_sort_index(logits, "descend");
  if (options.temperature == 0.0) {  // greedy: the first largest logit takes it all
    arma::rowvec q(V, arma::fill::zeros);
    q(order(0)) = 1.0;
    return q;
  }
  // Temperature: softmax(z / T), with the largest scaled logit exactly 0.
  arma::rowvec q = arma::exp((logits - logits.max()) / options.temperature);
  q /= arma::accu(q);
  // Top-k: the first k of the order.
  if (options.top_k > 0)
    keep_first(q, order, options.top_k);
  // Top-p: token j of the order stays while the mass before it is still below p.
  if (options.top_p < 1.0) {
    arma::uword kept = 0;
    double before = 0.0;
    while (kept < V && before < options.top_p)
      before += q(order(kept++));
    keep_first(q, order, kept);
  }
  return q;
  //! [next-token-distribution]
}

arma::uword sample_token(const arma::rowvec& probabilities, double u) {
  require_nonempty("sample_token: the probabilities", probabilities);
  require_finite_tokens("sample_token", "probability", probabilities);
  const arma::uvec negative = arma::find(probabilities < 0.0, 1);
  if (!negative.is_empty())
    throw InputError(fmt::format("sample_token: the probability of token {} is {}; it must be >= 0",
                                 negative(0), probabilities(negative(0))));
  const double total = arma::accu(probabilities);
  const double tolerance = std::sqrt(std::numeric_limits<double>::epsilon());  // numpy's
  if (!(std::abs(total - 1.0) <= tolerance))
    throw InputError(
        fmt::format("sample_token: the probabilities sum to {}; they must sum to 1 (within {:.1e})",
                    total, tolerance));
  if (!(u >= 0.0 && u < 1.0))
    throw InputError(
        fmt::format("sample_token: u is {}; it must be a uniform number in [0, 1)", u));
  //! [sample-token]
  arma::rowvec cdf = arma::cumsum(probabilities);  // left to right, as numpy's cumsum
  cdf /= cdf(cdf.n_elem - 1);                      // the last is now exactly 1 > u
  // The first token whose cumulative probability exceeds u: searchsorted(u, side="right").
  return static_cast<arma::uword>(std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
  //! [sample-token]
}

}  // namespace attn::math
