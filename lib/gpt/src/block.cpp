#include "attn/gpt/block.hpp"

#include <attn/math/attention.hpp>
#include <attn/math/mask.hpp>
#include <attn/math/validate.hpp>

#include <fmt/format.h>

#include <utility>

namespace attn::gpt {

namespace {

// The MLP half of the block, u -> u + MLP(LN2(u)), with what its backward pass needs: one
// function for the forward pass over many rows and for the cached step's one row.
struct MlpHalf {
  math::LayerNorm ln2;
  math::FeedForward mlp;
  arma::mat keep;  // its dropout mask, or empty
  arma::mat output;
};

MlpHalf mlp_half(const BlockWeights& b, const arma::mat& middle, const Dropping& dropping) {
  MlpHalf half;
  half.ln2 = math::layer_norm(middle, b.ln2_gamma, b.ln2_beta);
  half.mlp = math::feed_forward(half.ln2.y, b.mlp);
  half.output = middle + dropping.apply(half.mlp.y, half.keep);  // residual
  return half;
}

// Through a dropout mask, or straight through where there was none.
arma::mat undrop(const arma::mat& gradient, const arma::mat& keep) {
  return keep.is_empty() ? gradient : arma::mat(gradient % keep);
}

math::MultiHeadWeights zeros_like(const math::MultiHeadWeights& W) {
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

}  // namespace

arma::mat Dropping::apply(arma::mat values, arma::mat& keep) const {
  if (rate == 0.0 || !draws)
    return values;
  math::Dropout dropped = math::dropout(values, rate, draws);
  keep = std::move(dropped.keep);
  return std::move(dropped.y);
}

BlockForward block_forward(const BlockWeights& b, const arma::mat& x,
                           const std::vector<SequenceRows>& sequences, const Dropping& dropping) {
  //! [block-forward]
  BlockForward s;
  s.input = x;
  s.ln1 = math::layer_norm(s.input, b.ln1_gamma, b.ln1_beta);
  arma::mat attended(arma::size(x));
  for (const SequenceRows& r : sequences) {  // each sequence attends to itself, causally
    const arma::mat a = s.ln1.y.rows(r.first, r.last);
    s.attention.push_back(
        math::multi_head_attention(a, a, a, b.attention, math::Mask::causal(r.count())));
    attended.rows(r.first, r.last) = s.attention.back().output;
  }
  s.middle = s.input + dropping.apply(attended, s.attention_keep);  // residual
  MlpHalf mlp = mlp_half(b, s.middle, dropping);
  s.ln2 = std::move(mlp.ln2);
  s.mlp = std::move(mlp.mlp);
  s.mlp_keep = std::move(mlp.keep);
  s.output = std::move(mlp.output);
  //! [block-forward]
  return s;
}

BlockGradients block_backward(const BlockWeights& b, const BlockForward& s,
                              const std::vector<SequenceRows>& sequences,
                              const arma::mat& d_output) {
  if (s.attention.size() != sequences.size())
    throw math::ShapeError(
        fmt::format("block_backward: {} sentences, but the forward pass attended "
                    "over {}",
                    sequences.size(), s.attention.size()));
  //! [block-backward]
  // x' = u + MLP(LN2(u)): the residual passes the gradient straight through; the branch adds.
  const math::FeedForwardGradients mlp =
      math::feed_forward_backward(s.ln2.y, b.mlp, s.mlp, undrop(d_output, s.mlp_keep));
  const math::LayerNormGradients ln2 = math::layer_norm_backward(s.ln2, b.ln2_gamma, mlp.dx);
  const arma::mat du = d_output + ln2.dx;
  // u = x + MultiHead(LN1(x)) per sequence: query, key and value are all LN1(x), so their
  // gradients add; the weights' gradients add over the sequences.
  const arma::mat d_attended = undrop(du, s.attention_keep);
  arma::mat d_ln1(arma::size(du));
  math::MultiHeadWeights d_attention = zeros_like(b.attention);
  for (std::size_t k = 0; k < sequences.size(); ++k) {
    const SequenceRows& r = sequences[k];
    const arma::mat a = s.ln1.y.rows(r.first, r.last);
    const math::MultiHeadGradients att = math::multi_head_backward(
        a, a, a, b.attention, s.attention[k], d_attended.rows(r.first, r.last));
    d_ln1.rows(r.first, r.last) = att.d_query + att.d_key + att.d_value;
    add_into(d_attention, att.dW);
  }
  const math::LayerNormGradients ln1 = math::layer_norm_backward(s.ln1, b.ln1_gamma, d_ln1);
  //! [block-backward]
  return {.weights = {ln1.dgamma, ln1.dbeta, d_attention, ln2.dgamma, ln2.dbeta, mlp.dW},
          .dx = du + ln1.dx};
}

arma::mat block_step(const BlockWeights& b, const arma::mat& x,
                     std::vector<math::KVCache>& caches) {
  const math::MultiHeadWeights& W = b.attention;
  if (caches.size() != W.heads)
    throw math::ShapeError(fmt::format(
        "block_step: {} caches for {} heads; each head keeps its own", caches.size(), W.heads));
  const arma::uword d_k = x.n_cols / W.heads;
  //! [cached-step]
  const arma::mat a = math::layer_norm(x, b.ln1_gamma, b.ln1_beta).y;  // (1 × d)
  const arma::rowvec q =
      math::affine(a, W.W_Q, W.b_Q);  // the projections multi_head_attention() makes
  const arma::rowvec k = math::affine(a, W.W_K, W.b_K);
  const arma::rowvec v = math::affine(a, W.W_V, W.b_V);
  arma::rowvec concat(x.n_cols);
  for (arma::uword h = 0; h < W.heads; ++h) {  // head h owns columns h·d_k ... (h+1)·d_k − 1
    const arma::span head(h * d_k, (h + 1) * d_k - 1);
    caches[h].append(k.cols(head), v.cols(head));
    concat.cols(head) = caches[h].attend(q.cols(head), math::score_scale(d_k));
  }
  const arma::mat middle = x + math::affine(concat, W.W_O, W.b_O);  // residual
  return mlp_half(b, middle, Dropping{}).output;
  //! [cached-step]
}

}  // namespace attn::gpt
