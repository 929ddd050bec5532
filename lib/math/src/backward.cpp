#include "attn/math/backward.hpp"

#include "attn/math/validate.hpp"

namespace attn::math {

arma::mat softmax_jacobian(const arma::rowvec& weights) {
  require_nonempty("weights", weights);
  require_finite("weights", weights);
  //! [softmax-jacobian]
  return arma::diagmat(weights) - weights.t() * weights;  // (m × m)
  //! [softmax-jacobian]
}

namespace {

// The checks of the three functions below, each said once. weights_backward() needs every
// check of softmax_rows_backward(), and attend_backward() every check of weights_backward().
void check_softmax_rows_backward(const arma::mat& weights, const arma::mat& upstream) {
  require_same_rows("softmax backward", "W", weights, "dW", upstream);
  require_same_cols("softmax backward", "W", weights, "dW", upstream);
  require_finite("W", weights);
  require_finite("dW", upstream);
}

void check_weights_backward(const arma::mat& Q, const arma::mat& K, const arma::mat& weights,
                            const arma::mat& dWeights, double scale) {
  require_same_rows("weights backward: dQ = c dS K", "Q", Q, "weights", weights);
  require_multipliable("weights backward: dQ = c dS K", "weights", weights, "K", K);
  require_same_cols("weights backward", "Q", Q, "K", K);
  require_finite("Q", Q);
  require_finite("K", K);
  require_finite("weights backward: the scale", scale);
  check_softmax_rows_backward(weights, dWeights);
}

// The math of the three, on inputs already checked: a public function checks once, then runs
// these, and one calls another's math here, so a nested call never checks again.
namespace unchecked {

//! [softmax-rows-backward]
arma::mat softmax_rows_backward(const arma::mat& weights, const arma::mat& upstream) {
  const arma::vec agreement = arma::sum(upstream % weights, 1);  // (n × 1): Σ_k W̄_ik W_ik
  return weights % (upstream.each_col() - agreement);            // (n × m)
}
//! [softmax-rows-backward]

//! [weights-backward]
AttentionGradients weights_backward(const arma::mat& Q, const arma::mat& K,
                                    const arma::mat& weights, const arma::mat& dWeights,
                                    double scale) {
  const arma::mat dS = softmax_rows_backward(weights, dWeights);  // (n × m)
  AttentionGradients g;
  g.dQ = scale * dS * K;      // (n × d_k)
  g.dK = scale * dS.t() * Q;  // (m × d_k)
  return g;
}
//! [weights-backward]

//! [attend-backward]
// dWeights is W̄ = Z̄ Vᵀ, (n × m): the caller forms it once, to check it (a product of finite
// numbers can overflow) and to pass it here.
AttentionGradients attend_backward(const arma::mat& Q, const arma::mat& K, const Attention& forward,
                                   const arma::mat& dZ, const arma::mat& dWeights, double scale) {
  AttentionGradients g = weights_backward(Q, K, forward.weights, dWeights, scale);
  g.dV = forward.weights.t() * dZ;  // V̄ = Wᵀ Z̄, (m × d_v)
  return g;
}
//! [attend-backward]

}  // namespace unchecked

}  // namespace

arma::mat softmax_rows_backward(const arma::mat& weights, const arma::mat& upstream) {
  check_softmax_rows_backward(weights, upstream);
  return unchecked::softmax_rows_backward(weights, upstream);
}

AttentionGradients weights_backward(const arma::mat& Q, const arma::mat& K,
                                    const arma::mat& weights, const arma::mat& dWeights,
                                    double scale) {
  check_weights_backward(Q, K, weights, dWeights, scale);
  return unchecked::weights_backward(Q, K, weights, dWeights, scale);
}

AttentionGradients attend_backward(const arma::mat& Q, const arma::mat& K, const arma::mat& V,
                                   const Attention& forward, const arma::mat& dZ, double scale) {
  require_same_rows("attention backward", "Z", forward.output, "dZ", dZ);
  require_same_cols("attention backward", "Z", forward.output, "dZ", dZ);
  require_same_cols("attention backward: dW = dZ V^T", "dZ", dZ, "V", V);
  require_finite("dZ", dZ);
  require_finite("V", V);
  const arma::mat dWeights = dZ * V.t();  // W̄ = Z̄ Vᵀ, (n × m)
  check_weights_backward(Q, K, forward.weights, dWeights, scale);
  return unchecked::attend_backward(Q, K, forward, dZ, dWeights, scale);
}

Projections projections_backward(const arma::mat& X, const AttentionGradients& g) {
  require_finite("X", X);
  require_same_rows("projections backward: dW_Q = X^T dQ", "X", X, "dQ", g.dQ);
  require_same_rows("projections backward: dW_K = X^T dK", "X", X, "dK", g.dK);
  if (!g.dV.is_empty())
    require_same_rows("projections backward: dW_V = X^T dV", "X", X, "dV", g.dV);
  require_finite("dQ", g.dQ);
  require_finite("dK", g.dK);
  require_finite("dV", g.dV);
  Projections d;
  d.W_Q = X.t() * g.dQ;  // (d_model × d_k)
  d.W_K = X.t() * g.dK;  // (d_model × d_k)
  if (!g.dV.is_empty())
    d.W_V = X.t() * g.dV;  // (d_model × d_v)
  return d;
}

SelfAttentionGradients self_attention_backward(const arma::mat& X, const Projections& W,
                                               const arma::mat& dZ) {
  const QKV qkv = project(X, W);
  const double scale = score_scale(qkv.K.n_cols);
  const Attention forward = attend(qkv.Q, qkv.K, qkv.V, scale);
  const AttentionGradients g = attend_backward(qkv.Q, qkv.K, qkv.V, forward, dZ, scale);
  SelfAttentionGradients s;
  s.dW = projections_backward(X, g);
  s.dX = g.dQ * W.W_Q.t() + g.dK * W.W_K.t() + g.dV * W.W_V.t();  // (n × d_model)
  return s;
}

}  // namespace attn::math
