#include "float32_weights.hpp"

#include <attn/math/validate.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

namespace attn::gpt::float32 {
namespace {

using arma::fmat;
using arma::fvec;
using arma::uword;

// Where each weight of a block lies in its float32 form, written once for the three ways the
// step crosses between the two: the readable weights are checked, rounded in, and their
// gradients widened back. For each weight of the block's norms and attention, and of the MLP
// its config chooses, in parameters()' order,
//
//   visit(name, readable, fast, first, rows, cols)
//
// says that the readable weight `name` (parameters()' name after `blocks.l.`), of shape
// (rows × cols), is entries first .. first + rows·cols − 1 of the float array `fast`. A vector
// is (1 × n); a weight the config leaves out (a bias, RMSNorm's shift) is (1 × 0). Matrices are
// stored column by column, so weights side by side in one matrix follow one another.
// Readable and Fast are BlockWeights and Block, each const or not, as the visit reads or writes.
template <typename Readable, typename Fast, typename Visit>
void lay_out(Readable& b, Fast& f, const TransformerConfig& c, Visit visit) {
  const uword d = c.d_model, d_kv = key_value_heads(c) * (d / c.heads), d_ff = c.d_ff;
  const uword shift = has_shift(c.norm) ? d : 0;
  const uword ln2 = has_mlp(c.mlp) ? d : 0, ln2_shift = has_mlp(c.mlp) ? shift : 0;
  const uword bias = c.attention_biases ? d : 0, kv_bias = c.attention_biases ? d_kv : 0;
  auto& W = b.attention;
  visit("ln1.gamma", b.ln1_gamma, f.ln1_gamma, 0, 1, d);
  visit("ln1.beta", b.ln1_beta, f.ln1_beta, 0, 1, shift);
  // [W_Q W_K W_V] and [b_Q b_K b_V], side by side.
  visit("attention.W_Q", W.W_Q, f.W_QKV, 0, d, d);
  visit("attention.W_K", W.W_K, f.W_QKV, d * d, d, d_kv);
  visit("attention.W_V", W.W_V, f.W_QKV, d * (d + d_kv), d, d_kv);
  visit("attention.W_O", W.W_O, f.W_O, 0, d, d);
  visit("attention.b_Q", W.b_Q, f.b_QKV, 0, 1, bias);
  visit("attention.b_K", W.b_K, f.b_QKV, bias, 1, kv_bias);
  visit("attention.b_V", W.b_V, f.b_QKV, bias + kv_bias, 1, kv_bias);
  visit("attention.b_O", W.b_O, f.b_O, 0, 1, bias);
  visit("ln2.gamma", b.ln2_gamma, f.ln2_gamma, 0, 1, ln2);  // none without an MLP
  visit("ln2.beta", b.ln2_beta, f.ln2_beta, 0, 1, ln2_shift);
  switch (c.mlp) {
    case Mlp::gelu:
      visit("mlp.W1", b.mlp.W1, f.W1, 0, d, d_ff);
      visit("mlp.b1", b.mlp.b1, f.b1, 0, 1, d_ff);
      visit("mlp.W2", b.mlp.W2, f.W2, 0, d_ff, d);
      visit("mlp.b2", b.mlp.b2, f.b2, 0, 1, d);
      break;
    case Mlp::swiglu:  // [W_gate W_up], side by side
      visit("swiglu.W_gate", b.swiglu.W_gate, f.W1, 0, d, d_ff);
      visit("swiglu.W_up", b.swiglu.W_up, f.W1, d * d_ff, d, d_ff);
      visit("swiglu.W_down", b.swiglu.W_down, f.W2, 0, d_ff, d);
      break;
    case Mlp::none:
      break;
  }
}

// Block l's weight is of the shape the layout gives it. The weight is named as parameters()
// names it, `blocks.1.attention.W_K`, in the message alone: a step that passes allocates nothing.
void require_shape(uword l, std::string_view name, const arma::mat& weight, uword rows,
                   uword cols) {
  if (weight.n_rows == rows && weight.n_cols == cols)
    return;
  if (rows == 1)
    throw math::ShapeError(fmt::format("Float32Step: blocks.{}.{} has {} entries, not {}", l, name,
                                       weight.n_elem, cols));
  throw math::ShapeError(fmt::format("Float32Step: blocks.{}.{} is {}, not ({} × {})", l, name,
                                     math::shape_of(weight), rows, cols));
}

// A float array large enough for the weight that ends at entry `end`, with `rows` rows if a
// matrix; one already so is left as it is, so that no step after the first allocates. Arrays
// only grow: a Block serves one configuration (Float32Step refuses another's weights), so the
// sizes its first step reaches are its sizes.
void hold(fmat& fast, uword end, uword rows) {
  if (fast.n_rows != rows || fast.n_elem < end)
    fast.set_size(rows, end / rows);
}
void hold(fvec& fast, uword end, uword /*rows: 1*/) {
  if (fast.n_elem < end)
    fast.set_size(end);
}

// One weight rounded, or one gradient widened.
void round_into(float* to, const arma::mat& from) {
  std::transform(from.begin(), from.end(), to, [](double x) { return static_cast<float>(x); });
}
void widen_into(arma::mat& to, const float* from, uword rows, uword cols) {
  to.set_size(rows, cols);
  std::copy(from, from + rows * cols, to.begin());
}

}  // namespace

void check_blocks(const TransformerWeights& w) {
  const uword d = w.config.d_model;
  for (uword l = 0; l < w.blocks.size(); ++l) {
    const Block unused;  // the float side of the layout, not read here
    lay_out(
        w.blocks[l], unused, w.config,
        [l](std::string_view name, const arma::mat& weight, const auto& /*fast*/, uword /*first*/,
            uword rows, uword cols) { require_shape(l, name, weight, rows, cols); });
  }
  const uword shift = has_shift(w.config.norm) ? d : 0;
  if (w.lnf_gamma.n_elem != d || w.lnf_beta.n_elem != shift)
    throw math::ShapeError(
        fmt::format("Float32Step: lnf.gamma has {} entries and lnf.beta {}, not {} and {}",
                    w.lnf_gamma.n_elem, w.lnf_beta.n_elem, d, shift));
}

void round_into(fmat& to, const arma::mat& from) {
  to.set_size(from.n_rows, from.n_cols);
  round_into(to.memptr(), from);
}
void round_into(fvec& to, const arma::rowvec& from) {
  to.set_size(from.n_elem);
  round_into(to.memptr(), from);
}

void round_into(Block& to, const BlockWeights& from, const TransformerConfig& config) {
  // First every float array sized to hold its weights, then the weights rounded in.
  lay_out(from, to, config,
          [](std::string_view, const arma::mat&, auto& fast, uword first, uword rows, uword cols) {
            hold(fast, first + rows * cols, rows);
          });
  lay_out(from, to, config,
          [](std::string_view, const arma::mat& weight, auto& fast, uword first, uword, uword) {
            round_into(fast.memptr() + first, weight);
          });
}

void widen_into(arma::mat& to, const fmat& from) {
  widen_into(to, from.memptr(), from.n_rows, from.n_cols);
}
void widen_into(arma::rowvec& to, const fvec& from) {
  widen_into(to, from.memptr(), 1, from.n_elem);
}

void widen_into(BlockWeights& to, const Block& from, const TransformerConfig& config) {
  to.attention.heads = config.heads;
  to.attention.kv_heads = config.kv_heads;
  lay_out(to, from, config,
          [](std::string_view, arma::mat& gradient, const auto& fast, uword first, uword rows,
             uword cols) { widen_into(gradient, fast.memptr() + first, rows, cols); });
}

}  // namespace attn::gpt::float32
