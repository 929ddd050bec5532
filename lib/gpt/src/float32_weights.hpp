// The float32 step's weights (float32_step.cpp): the model's double matrices, checked and rounded
// into float ones laid out for its kernels, and their gradients widened back. Private to
// attn::gpt.
#pragma once

#include <attn/gpt/model.hpp>

#include <armadillo>

namespace attn::gpt::float32 {

/// \brief A block's weights in float, with W_Q, W_K, W_V side by side, and SwiGLU's W_gate, W_up.
///        With g key/value heads of d_k, W_K and W_V are (d × g·d_k): g = h (d_kv = d) but for
///        grouped-query attention.
struct Block {
  arma::fmat W_QKV;      ///< (d × (d + 2 d_kv)): [W_Q W_K W_V].
  arma::fmat W_O;        ///< (d × d).
  arma::fmat W1;         ///< GELU: (d × d_ff); SwiGLU: (d × 2 d_ff), [W_gate W_up].
  arma::fmat W2;         ///< (d_ff × d): GELU's W2 or SwiGLU's W_down.
  arma::fvec ln1_gamma;  ///< (d): the first norm's scale.
  arma::fvec ln1_beta;   ///< (d): its shift (none with RMSNorm).
  arma::fvec b_QKV;      ///< (d + 2 d_kv): [b_Q b_K b_V]; empty without attention biases.
  arma::fvec b_O;        ///< (d); empty without attention biases.
  arma::fvec ln2_gamma;  ///< (d): the second norm's scale.
  arma::fvec ln2_beta;   ///< (d): its shift (none with RMSNorm).
  arma::fvec b1;         ///< (d_ff): GELU's only.
  arma::fvec b2;         ///< (d): GELU's only.
};

// Block l's weights are of the shapes config gives them, and the final norm's (check_weights()
// checks the rest of the model); a ShapeError names the first that is not, as parameters() names
// it (`blocks.1.attention.W_K`).
void check_blocks(const TransformerWeights& w);

// The weights rounded into the same float matrices at every step: no memory is allocated once
// the first step has sized them.
void round_into(arma::fmat& to, const arma::mat& from);
void round_into(arma::fvec& to, const arma::rowvec& from);
void round_into(Block& to, const BlockWeights& from, const TransformerConfig& config);

// And the gradients widened back into double, into the same matrices at every step.
void widen_into(arma::mat& to, const arma::fmat& from);
void widen_into(arma::rowvec& to, const arma::fvec& from);
void widen_into(BlockWeights& to, const Block& from, const TransformerConfig& config);

}  // namespace attn::gpt::float32
