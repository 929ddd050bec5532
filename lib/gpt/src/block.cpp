#include "attn/gpt/block.hpp"

#include "not_a_choice.hpp"

#include <attn/math/attention.hpp>
#include <attn/math/mask.hpp>
#include <attn/math/positions.hpp>
#include <attn/math/validate.hpp>

#include <fmt/format.h>

#include <utility>

namespace attn::gpt {

namespace {

// The MLP half of the block, u -> u + MLP(Norm2(u)), with what its backward pass needs: one
// function for the forward pass over many rows and for the cached step's one row.
struct MlpHalf {
  NormForward ln2;
  math::FeedForward mlp;  // GELU's values, or
  math::SwiGlu swiglu;    // SwiGLU's
  arma::mat keep;         // its dropout mask, or empty
  arma::mat output;
};

MlpHalf mlp_half(const BlockWeights& b, const TransformerConfig& c, const arma::mat& middle,
                 const Dropping& dropping) {
  MlpHalf half;
  if (has_mlp(c.mlp))
    half.ln2 = normalise(c.norm, middle, b.ln2_gamma, b.ln2_beta);
  arma::mat branch;
  switch (c.mlp) {
    case Mlp::gelu:
      half.mlp = math::feed_forward(half.ln2.y(), b.mlp);
      branch = half.mlp.y;
      break;
    case Mlp::swiglu:
      half.swiglu = math::swiglu(half.ln2.y(), b.swiglu);
      branch = half.swiglu.y;
      break;
    case Mlp::none:  // attention alone: x' = u
      half.output = middle;
      return half;
  }
  half.output = middle + dropping.apply(std::move(branch), half.keep);  // residual
  return half;
}

// Where RoPE turns the rows of a sequence of n tokens: at positions 0 ... n − 1, queries and
// keys alike.
math::RotaryPositions sequence_positions(arma::uword n) {
  const arma::vec positions = arma::regspace(0.0, static_cast<double>(n) - 1.0);
  return {.queries = positions, .keys = positions};
}

// Through a dropout mask, or straight through where there was none.
arma::mat undrop(const arma::mat& gradient, const arma::mat& keep) {
  return keep.is_empty() ? gradient : arma::mat(gradient % keep);
}

math::MultiHeadWeights zeros_like(const math::MultiHeadWeights& W) {  // biases included
  math::MultiHeadWeights z = W;
  for (arma::mat* m : {&z.W_Q, &z.W_K, &z.W_V, &z.W_O})
    m->zeros();
  for (arma::rowvec* b : {&z.b_Q, &z.b_K, &z.b_V, &z.b_O})
    b->zeros();
  return z;
}

void add_into(math::MultiHeadWeights& sum, const math::MultiHeadWeights& part) {
  sum.W_Q += part.W_Q;
  sum.W_K += part.W_K;
  sum.W_V += part.W_V;
  sum.W_O += part.W_O;
  sum.b_Q += part.b_Q;
  sum.b_K += part.b_K;
  sum.b_V += part.b_V;
  sum.b_O += part.b_O;
}

// The masked heads' outputs replaced, each by its row at every token, and the layer's output
// projected again from the new concatenation: [head_1 … head_h] W_O + b_O.
bool mask_heads(math::MultiHead& result, const math::MultiHeadWeights& W,
                const std::vector<std::optional<arma::rowvec>>& masked_heads) {
  if (masked_heads.empty())
    return false;
  if (masked_heads.size() != result.heads.size())
    throw math::ShapeError(fmt::format("block_forward: a mask of {} heads for a layer of {}",
                                       masked_heads.size(), result.heads.size()));
  bool masked = false;
  const arma::uword d_k = result.concat.n_cols / result.heads.size();
  for (arma::uword k = 0; k < masked_heads.size(); ++k) {
    if (!masked_heads[k])
      continue;
    const arma::rowvec& row = *masked_heads[k];
    if (row.n_elem != d_k)
      throw math::ShapeError(
          fmt::format("block_forward: head {}'s replacement has {} entries; the heads are {} wide",
                      k, row.n_elem, d_k));
    arma::mat& output = result.heads[k].output;
    output.each_row() = row;
    result.concat.cols(k * d_k, (k + 1) * d_k - 1) = output;
    masked = true;
  }
  if (masked)
    result.output = math::affine(result.concat, W.W_O, W.b_O);
  return masked;
}

}  // namespace

arma::mat Dropping::apply(arma::mat values, arma::mat& keep) const {
  if (rate == 0.0 || !draws)
    return values;
  math::Dropout dropped = math::dropout(values, rate, draws);
  keep = std::move(dropped.keep);
  return std::move(dropped.y);
}

NormForward normalise(Norm kind, const arma::mat& x, const arma::rowvec& gamma,
                      const arma::rowvec& beta) {
  NormForward f;
  f.kind = kind;
  switch (kind) {
    case Norm::layer_norm:
      f.layer = math::layer_norm(x, gamma, beta);
      break;
    case Norm::rms_norm:
      f.rms = math::rms_norm(x, gamma);
      break;
  }
  return f;
}

const arma::mat& NormForward::y() const {
  switch (kind) {
    case Norm::layer_norm:
      return layer.y;
    case Norm::rms_norm:
      return rms.y;
  }
  not_a_choice("NormForward", "norm", kind);
}

NormGradients normalise_backward(const NormForward& f, const arma::rowvec& gamma,
                                 const arma::mat& dy) {
  switch (f.kind) {
    case Norm::layer_norm: {
      math::LayerNormGradients g = math::layer_norm_backward(f.layer, gamma, dy);
      return {.dx = std::move(g.dx), .dgamma = std::move(g.dgamma), .dbeta = std::move(g.dbeta)};
    }
    case Norm::rms_norm: {
      math::RmsNormGradients g = math::rms_norm_backward(f.rms, gamma, dy);
      return {.dx = std::move(g.dx), .dgamma = std::move(g.dgamma), .dbeta = {}};
    }
  }
  not_a_choice("normalise_backward", "norm", f.kind);
}

math::Mask attention_mask(const TransformerConfig& c, arma::uword n) {
  return c.sliding_window == 0 ? math::Mask::causal(n)
                               : math::Mask::causal_window(n, c.sliding_window);
}

BlockForward block_forward(const BlockWeights& b, const TransformerConfig& c, const arma::mat& x,
                           const std::vector<SequenceRows>& sequences, const Dropping& dropping,
                           const std::vector<std::optional<arma::rowvec>>& masked_heads) {
  //! [block-forward]
  BlockForward s;
  s.input = x;
  s.ln1 = normalise(c.norm, s.input, b.ln1_gamma, b.ln1_beta);
  arma::mat attended(arma::size(x));
  s.attention.reserve(sequences.size());     // so that no sequence's values are copied as it grows
  for (const SequenceRows& r : sequences) {  // each sequence attends to itself, causally
    const arma::mat a = s.ln1.y().rows(r.first, r.last);
    const math::Mask mask = attention_mask(c, r.count());
    s.attention.push_back(
        rotates(c.positions)
            ? math::multi_head_attention(a, a, a, b.attention, mask, sequence_positions(r.count()))
            : math::multi_head_attention(a, a, a, b.attention, mask));
    s.heads_masked |= mask_heads(s.attention.back(), b.attention, masked_heads);  // ablations
    attended.rows(r.first, r.last) = s.attention.back().output;
  }
  s.middle = s.input + dropping.apply(attended, s.attention_keep);  // residual
  MlpHalf mlp = mlp_half(b, c, s.middle, dropping);
  s.ln2 = std::move(mlp.ln2);
  s.mlp = std::move(mlp.mlp);
  s.swiglu = std::move(mlp.swiglu);
  s.mlp_keep = std::move(mlp.keep);
  s.output = std::move(mlp.output);
  //! [block-forward]
  return s;
}

BlockGradients block_backward(const BlockWeights& b, const TransformerConfig& c,
                              const BlockForward& s, const std::vector<SequenceRows>& sequences,
                              const arma::mat& d_output) {
  if (s.heads_masked)
    throw math::InputError(
        "block_backward: the forward pass masked heads; an ablation has no backward pass");
  if (s.attention.size() != sequences.size())
    throw math::ShapeError(
        fmt::format("block_backward: {} sentences, but the forward pass attended "
                    "over {}",
                    sequences.size(), s.attention.size()));
  //! [block-backward]
  // x' = u + MLP(Norm2(u)): the residual passes the gradient straight through; the branch adds.
  const arma::mat d_branch = undrop(d_output, s.mlp_keep);
  BlockWeights grads;
  arma::mat du = d_output;  // ∂L/∂u: the residual's share, and the branch's added below
  arma::mat d_ln2;
  switch (c.mlp) {
    case Mlp::gelu: {
      math::FeedForwardGradients mlp =
          math::feed_forward_backward(s.ln2.y(), b.mlp, s.mlp, d_branch);
      grads.mlp = std::move(mlp.dW);
      d_ln2 = std::move(mlp.dx);
      break;
    }
    case Mlp::swiglu: {
      math::SwiGluGradients mlp = math::swiglu_backward(s.ln2.y(), b.swiglu, s.swiglu, d_branch);
      grads.swiglu = std::move(mlp.dW);
      d_ln2 = std::move(mlp.dx);
      break;
    }
    case Mlp::none:  // attention alone: x' = u
      break;
  }
  if (has_mlp(c.mlp)) {
    NormGradients ln2 = normalise_backward(s.ln2, b.ln2_gamma, d_ln2);
    du += ln2.dx;
    grads.ln2_gamma = std::move(ln2.dgamma);
    grads.ln2_beta = std::move(ln2.dbeta);
  }
  // u = x + MultiHead(Norm1(x)) per sequence: query, key and value are all Norm1(x), so their
  // gradients add; the weights' gradients add over the sequences.
  const arma::mat d_attended = undrop(du, s.attention_keep);
  arma::mat d_ln1(arma::size(du));
  grads.attention = zeros_like(b.attention);
  for (std::size_t k = 0; k < sequences.size(); ++k) {
    const SequenceRows& r = sequences[k];
    const arma::mat a = s.ln1.y().rows(r.first, r.last);
    const math::MultiHeadGradients att = math::multi_head_backward(
        a, a, a, b.attention, s.attention[k], d_attended.rows(r.first, r.last));
    d_ln1.rows(r.first, r.last) = att.d_query + att.d_key + att.d_value;
    add_into(grads.attention, att.dW);
  }
  const NormGradients ln1 = normalise_backward(s.ln1, b.ln1_gamma, d_ln1);
  //! [block-backward]
  grads.ln1_gamma = ln1.dgamma;
  grads.ln1_beta = ln1.dbeta;
  return {.weights = std::move(grads), .dx = du + ln1.dx};
}

arma::mat block_step(const BlockWeights& b, const TransformerConfig& c, const arma::mat& x,
                     arma::uword position, std::vector<math::KVCache>& caches) {
  const math::MultiHeadWeights& W = b.attention;
  const arma::uword kv_heads = math::key_value_heads(W);
  if (caches.size() != kv_heads)
    throw math::ShapeError(
        fmt::format("block_step: {} caches for {} key/value heads; each keeps its own",
                    caches.size(), kv_heads));
  const arma::uword d_k = x.n_cols / W.heads;
  const arma::uword group = W.heads / kv_heads;  // query heads per key/value head
  const arma::vec at{static_cast<double>(position)};
  // RoPE turns a head's query and key at the token's position, as multi_head_attention() does.
  const auto turned = [&](const arma::rowvec& head) -> arma::rowvec {
    if (!rotates(c.positions))
      return head;
    return math::rotary(head, at);
  };
  //! [cached-step]
  const arma::mat a = normalise(c.norm, x, b.ln1_gamma, b.ln1_beta).y();  // (1 × d)
  const arma::rowvec q =
      math::affine(a, W.W_Q, W.b_Q);  // the projections multi_head_attention() makes
  const arma::rowvec k = math::affine(a, W.W_K, W.b_K);  // (1 × g·d_k)
  const arma::rowvec v = math::affine(a, W.W_V, W.b_V);
  for (arma::uword g = 0; g < kv_heads; ++g) {  // key/value head g owns columns g·d_k ...
    const arma::span head(g * d_k, (g + 1) * d_k - 1);
    caches[g].append(turned(k.cols(head)), v.cols(head));
  }
  arma::rowvec concat(x.n_cols);
  for (arma::uword h = 0; h < W.heads; ++h) {  // query head h owns columns h·d_k ...
    const arma::span head(h * d_k, (h + 1) * d_k - 1);
    concat.cols(head) = caches[h / group].attend(turned(q.cols(head)), math::score_scale(d_k));
  }
  const arma::mat middle = x + math::affine(concat, W.W_O, W.b_O);  // residual
  return mlp_step(b, c, middle);
  //! [cached-step]
}

arma::mat mlp_step(const BlockWeights& b, const TransformerConfig& c, const arma::mat& middle) {
  return mlp_half(b, c, middle, Dropping{}).output;
}

}  // namespace attn::gpt
