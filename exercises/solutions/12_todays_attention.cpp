// Chapter 12's exercises, answered. Reference solutions: look only after trying.
#include "12_todays_attention.hpp"

#include <attn/math/validate.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace attn::exercises {

std::size_t kv_cache_bytes(const attn::gpt::TransformerConfig& config, std::size_t tokens,
                           std::size_t bytes_per_number) {
  const std::size_t h = config.heads;
  if (h == 0 || config.d_model % h != 0)
    throw std::invalid_argument("kv_cache_bytes: " + std::to_string(h) +
                                " heads cannot share d_model = " + std::to_string(config.d_model));
  const std::size_t g = attn::gpt::key_value_heads(config);
  if (h % g != 0)
    throw std::invalid_argument("kv_cache_bytes: " + std::to_string(g) +
                                " key/value heads cannot be shared by " + std::to_string(h) +
                                " query heads equally");
  if (bytes_per_number == 0)
    throw std::invalid_argument("kv_cache_bytes: a number takes at least one byte");
  const std::size_t d_k = config.d_model / h;
  const std::size_t per_token = 2 * config.layers * g * d_k * bytes_per_number;  // keys, values
  const std::size_t window = config.sliding_window;
  const std::size_t held = window == 0 ? tokens : std::min(tokens, window);
  return held * per_token;
}

arma::rowvec rms_norm_backward_row(const arma::rowvec& x, const arma::rowvec& gamma,
                                   const arma::rowvec& dy, double eps) {
  for (const arma::rowvec* other : {&gamma, &dy}) {
    if (other->n_elem != x.n_elem) {
      throw std::invalid_argument("RMSNorm of x " + math::shape_of(x) + " cannot take " +
                                  (other == &gamma ? "gamma " : "dy ") + math::shape_of(*other));
    }
  }
  const double d = static_cast<double>(x.n_elem);
  const double r = std::sqrt(arma::accu(x % x) / d + eps);
  const arma::rowvec g = gamma % dy;  // dL/d(x / r)
  const double xg_mean = arma::accu(x % g) / d;
  return g / r - x * (xg_mean / (r * r * r));
}

}  // namespace attn::exercises
