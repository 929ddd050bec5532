#include "attn/math/attention.hpp"

#include "attn/math/softmax.hpp"
#include "attn/math/validate.hpp"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

namespace attn::math {

arma::mat attention_scores(const arma::mat& Q, const arma::mat& K, double scale) {
  for (const auto& [name, m] : {std::pair{"Q", &Q}, std::pair{"K", &K}}) {
    require_nonempty(name, *m);
    require_finite(name, *m);
  }
  require_same_cols("scores = Q K^T", "Q", Q, "K", K);
  require_finite("attention scores: the scale", scale);
  arma::mat S = scale * Q * K.t();          // (n × d_k)(d_k × m) -> (n × m)
  require_finite("scores S = c Q K^T", S);  // finite inputs can still overflow
  return S;
}

Attention attend(const arma::mat& Q, const arma::mat& K, const arma::mat& V, double scale) {
  require_nonempty("V", V);
  require_finite("V", V);
  require_same_rows("output = W V", "K", K, "V", V);  // attention_scores checks Q against K

  //! [attend]
  Attention a;
  a.scores = attention_scores(Q, K, scale);  // (n × m)
  a.weights = softmax_rows(a.scores);        // (n × m), rows sum to 1
  a.output = a.weights * V;                  // (n × m)(m × d_v) -> (n × d_v)
  return a;
  //! [attend]
}

//! [attend-masked]
Attention attend(const arma::mat& Q, const arma::mat& K, const arma::mat& V, double scale,
                 const Mask& mask) {
  require_nonempty("V", V);
  require_finite("V", V);
  require_same_rows("output = W V", "K", K, "V", V);

  Attention a;
  a.scores = attention_scores(Q, K, scale);         // (n × m), as computed
  a.weights = masked_softmax_rows(a.scores, mask);  // (n × m), 0 where the mask blocks
  a.output = a.weights * V;                         // (n × d_v)
  return a;
}
//! [attend-masked]

//! [raw-attention]
Attention raw_self_attention(const arma::mat& E) {
  return attend(E, E, E, 1.0);
}
//! [raw-attention]

Attention raw_attention_for(const arma::mat& E, arma::uword query) {
  if (query >= E.n_rows)
    throw std::out_of_range(fmt::format("query index {} is not a row of E {}", query, shape_of(E)));
  return attend(E.row(query), E, E, 1.0);
}

double score_scale(arma::uword d_k) {
  if (d_k == 0)
    throw InputError("score_scale: the key width d_k must be at least 1");
  //! [score-scale]
  return 1.0 / std::sqrt(static_cast<double>(d_k));
  //! [score-scale]
}

Attention scaled_dot_product_attention(const arma::mat& Q, const arma::mat& K, const arma::mat& V) {
  return attend(Q, K, V, score_scale(K.n_cols));
}

QKV project(const arma::mat& X, const Projections& W) {
  require_nonempty("X", X);
  require_finite("X", X);
  require_multipliable("Q = X W_Q", "X", X, "W_Q", W.W_Q);
  require_multipliable("K = X W_K", "X", X, "W_K", W.W_K);
  require_multipliable("V = X W_V", "X", X, "W_V", W.W_V);
  require_finite("W_Q", W.W_Q);
  require_finite("W_K", W.W_K);
  require_finite("W_V", W.W_V);
  //! [project]
  return {X * W.W_Q, X * W.W_K, X * W.W_V};
  //! [project]
}

Attention self_attention(const arma::mat& X, const Projections& W) {
  const QKV qkv = project(X, W);
  return scaled_dot_product_attention(qkv.Q, qkv.K, qkv.V);
}

arma::uword strongest_other(const arma::mat& grid, arma::uword query) {
  if (grid.n_rows != grid.n_cols || grid.n_rows < 2)
    throw ShapeError(
        fmt::format("strongest_other needs a square grid of two or more tokens, "
                    "got {}",
                    shape_of(grid)));
  if (query >= grid.n_rows)
    throw std::out_of_range(
        fmt::format("query index {} is not a row of the grid {}", query, shape_of(grid)));
  require_finite("grid", grid);  // a NaN would let index_max pick the query itself
  arma::rowvec others = grid.row(query);
  others(query) = -arma::datum::inf;  // leave the query itself out
  return others.index_max();
}

}  // namespace attn::math
