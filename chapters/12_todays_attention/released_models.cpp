#include "released_models.hpp"

namespace attn::ch12 {

std::size_t cache_bytes_per_token(arma::uword layers, arma::uword kv_heads, arma::uword d_head,
                                  std::size_t bytes_per_number) {
  return 2 * layers * kv_heads * d_head * bytes_per_number;
}

double parameter_count(const RealModel& m) {
  const double d = static_cast<double>(m.d_model);
  const double per_layer = 2.0 * d * static_cast<double>(m.heads * m.d_head) +
                           2.0 * d * static_cast<double>(m.kv_heads * m.d_head) +
                           3.0 * d * static_cast<double>(m.d_ff) + 2.0 * d;
  return 2.0 * static_cast<double>(m.vocabulary) * d + static_cast<double>(m.layers) * per_layer +
         d;
}

}  // namespace attn::ch12
