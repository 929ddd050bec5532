#include "float32_weights.hpp"

#include <attn/math/validate.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>

namespace attn::gpt::float32 {
namespace {

using arma::fmat;
using arma::fvec;
using arma::uword;

// A block's weights of the shapes its config gives them (check_weights() checks the rest of the
// model, the attention's biases among them; the reference's layers check these as they use
// them), before they are copied. The
// weight is named as parameters() names it, `blocks.1.attention.W_K`, in the message alone: a
// step that passes allocates nothing here.
void require_shape(uword layer, std::string_view name, const arma::mat& m, uword rows, uword cols) {
  if (m.n_rows != rows || m.n_cols != cols)
    throw math::ShapeError(fmt::format("Float32Step: blocks.{}.{} is {}, not ({} × {})", layer,
                                       name, math::shape_of(m), rows, cols));
}
void require_length(uword layer, std::string_view name, const arma::rowvec& v, uword count) {
  if (v.n_elem != count)
    throw math::ShapeError(fmt::format("Float32Step: blocks.{}.{} has {} entries, not {}", layer,
                                       name, v.n_elem, count));
}

void check_block(const BlockWeights& b, uword l, const TransformerConfig& c) {
  const uword d = c.d_model, d_kv = key_value_heads(c) * (d / c.heads), f = c.d_ff;
  const uword betas = has_shift(c.norm) ? d : 0;
  const math::MultiHeadWeights& W = b.attention;
  require_shape(l, "attention.W_Q", W.W_Q, d, d);
  require_shape(l, "attention.W_K", W.W_K, d, d_kv);
  require_shape(l, "attention.W_V", W.W_V, d, d_kv);
  require_shape(l, "attention.W_O", W.W_O, d, d);
  require_length(l, "ln1.gamma", b.ln1_gamma, d);
  require_length(l, "ln1.beta", b.ln1_beta, betas);
  require_length(l, "ln2.gamma", b.ln2_gamma, d);
  require_length(l, "ln2.beta", b.ln2_beta, betas);
  switch (c.mlp) {
    case Mlp::gelu:
      require_shape(l, "mlp.W1", b.mlp.W1, d, f);
      require_length(l, "mlp.b1", b.mlp.b1, f);
      require_shape(l, "mlp.W2", b.mlp.W2, f, d);
      require_length(l, "mlp.b2", b.mlp.b2, d);
      break;
    case Mlp::swiglu:
      require_shape(l, "swiglu.W_gate", b.swiglu.W_gate, d, f);
      require_shape(l, "swiglu.W_up", b.swiglu.W_up, d, f);
      require_shape(l, "swiglu.W_down", b.swiglu.W_down, f, d);
      break;
  }
}

// And the final norm's.
void check_final_norm(const TransformerWeights& w) {
  const uword d = w.config.d_model;
  const uword betas = has_shift(w.config.norm) ? d : 0;
  if (w.lnf_gamma.n_elem != d || w.lnf_beta.n_elem != betas)
    throw math::ShapeError(
        fmt::format("Float32Step: lnf.gamma has {} entries and lnf.beta {}, not {} and {}",
                    w.lnf_gamma.n_elem, w.lnf_beta.n_elem, d, betas));
}

// One weight, rounded into where it lies in a wider matrix or vector.
void round_into(float* to, const arma::mat& from) {
  std::transform(from.begin(), from.end(), to, [](double x) { return static_cast<float>(x); });
}

// One gradient, widened from where it lies in a wider float matrix or vector.
void widen_into(arma::mat& to, const float* from, uword rows, uword cols) {
  to.set_size(rows, cols);
  std::copy(from, from + rows * cols, to.begin());
}
void widen_into(arma::rowvec& to, const float* from, uword count) {
  to.set_size(count);
  std::copy(from, from + count, to.begin());
}

}  // namespace

void check_blocks(const TransformerWeights& w) {
  for (uword l = 0; l < w.blocks.size(); ++l)
    check_block(w.blocks[l], l, w.config);
  check_final_norm(w);
}

void round_into(fmat& to, const arma::mat& from) {
  to.set_size(from.n_rows, from.n_cols);
  round_into(to.memptr(), from);
}
void round_into(fvec& to, const arma::rowvec& from) {
  to.set_size(from.n_elem);
  round_into(to.memptr(), from);
}

// A block's weights, of the shapes check_block() checked, rounded: the attention's biases if it
// has them (b_QKV and b_O are left empty if not), the MLP's as its kind has.
void round_into(Block& to, const BlockWeights& b, const TransformerConfig& c) {
  const math::MultiHeadWeights& W = b.attention;
  const uword d = W.W_Q.n_rows;
  const uword d_kv = W.W_K.n_cols;
  to.W_QKV.set_size(d, d + 2 * d_kv);
  to.b_QKV.set_size(c.attention_biases ? d + 2 * d_kv : 0);
  const std::array<const arma::mat*, 3> matrices = {&W.W_Q, &W.W_K, &W.W_V};
  const std::array<const arma::rowvec*, 3> biases = {&W.b_Q, &W.b_K, &W.b_V};
  const std::array<uword, 3> columns = {0, d, d + d_kv};
  for (uword k = 0; k < 3; ++k) {  // side by side: [W_Q W_K W_V], [b_Q b_K b_V]
    round_into(to.W_QKV.colptr(columns[k]), *matrices[k]);
    if (c.attention_biases)
      round_into(to.b_QKV.memptr() + columns[k], *biases[k]);
  }
  round_into(to.W_O, W.W_O);
  round_into(to.ln1_gamma, b.ln1_gamma);
  round_into(to.ln1_beta, b.ln1_beta);
  round_into(to.b_O, W.b_O);  // empty without biases
  round_into(to.ln2_gamma, b.ln2_gamma);
  round_into(to.ln2_beta, b.ln2_beta);
  switch (c.mlp) {
    case Mlp::gelu:
      round_into(to.W1, b.mlp.W1);
      round_into(to.W2, b.mlp.W2);
      round_into(to.b1, b.mlp.b1);
      round_into(to.b2, b.mlp.b2);
      break;
    case Mlp::swiglu: {  // side by side: [W_gate W_up]
      const uword d_ff = b.swiglu.W_gate.n_cols;
      to.W1.set_size(d, 2 * d_ff);
      round_into(to.W1.colptr(0), b.swiglu.W_gate);
      round_into(to.W1.colptr(d_ff), b.swiglu.W_up);
      round_into(to.W2, b.swiglu.W_down);
      break;
    }
  }
}

void widen_into(arma::mat& to, const fmat& from) {
  widen_into(to, from.memptr(), from.n_rows, from.n_cols);
}
void widen_into(arma::rowvec& to, const fvec& from) {
  widen_into(to, from.memptr(), from.n_elem);
}

void widen_into(BlockWeights& to, const Block& g, const TransformerConfig& c) {
  const uword d = g.W_O.n_rows;
  const uword d_kv = (g.W_QKV.n_cols - d) / 2;
  math::MultiHeadWeights& W = to.attention;
  W.heads = c.heads;
  W.kv_heads = c.kv_heads;
  const std::array<arma::mat*, 3> matrices = {&W.W_Q, &W.W_K, &W.W_V};
  const std::array<arma::rowvec*, 3> biases = {&W.b_Q, &W.b_K, &W.b_V};
  const std::array<uword, 3> columns = {0, d, d + d_kv};
  const std::array<uword, 3> widths = {d, d_kv, d_kv};
  for (uword k = 0; k < 3; ++k) {
    widen_into(*matrices[k], g.W_QKV.colptr(columns[k]), d, widths[k]);
    if (c.attention_biases)
      widen_into(*biases[k], g.b_QKV.memptr() + columns[k], widths[k]);
    else
      biases[k]->reset();
  }
  widen_into(W.W_O, g.W_O);
  widen_into(W.b_O, g.b_O);  // empty without biases
  widen_into(to.ln1_gamma, g.ln1_gamma);
  widen_into(to.ln1_beta, g.ln1_beta);  // empty with RMSNorm
  widen_into(to.ln2_gamma, g.ln2_gamma);
  widen_into(to.ln2_beta, g.ln2_beta);
  switch (c.mlp) {
    case Mlp::gelu:
      widen_into(to.mlp.W1, g.W1);
      widen_into(to.mlp.b1, g.b1);
      widen_into(to.mlp.W2, g.W2);
      widen_into(to.mlp.b2, g.b2);
      break;
    case Mlp::swiglu: {
      const uword d_ff = g.W2.n_rows;
      widen_into(to.swiglu.W_gate, g.W1.colptr(0), d, d_ff);
      widen_into(to.swiglu.W_up, g.W1.colptr(d_ff), d, d_ff);
      widen_into(to.swiglu.W_down, g.W2);
      break;
    }
  }
}

}  // namespace attn::gpt::float32
