#include "attn/gpt/forward.hpp"

#include <attn/math/positions.hpp>
#include <attn/math/validate.hpp>

#include <fmt/format.h>

#include <utility>

namespace attn::gpt {

arma::mat embed(const TransformerWeights& w, const arma::uvec& tokens,
                const arma::uvec& positions) {
  const TransformerConfig& c = w.config;
  arma::mat x = w.embedding.rows(tokens);  // (N × d)
  switch (c.positions) {
    case Positions::learned:
      x += w.position_embedding.rows(positions);
      break;
    case Positions::sinusoidal:
      x += math::sinusoidal_positions(c.max_length, c.d_model).rows(positions);
      break;
    case Positions::rotary:  // they act inside attention
    case Positions::none:    // they act nowhere
      break;
  }
  return x;
}

arma::mat unembed(const TransformerWeights& w, const arma::mat& final_state) {
  if (w.config.tied_embeddings)
    return final_state * w.embedding.t();  // (N × d)(d × V)
  arma::mat logits = final_state * w.unembedding;
  logits.each_row() += w.unembedding_bias;
  return logits;
}

namespace {

// The forward pass, dropped out by the draws if there are any, the heads in the mask switched
// off if there are any.
TransformerForward forward_pass(const TransformerWeights& w, const arma::uvec& tokens,
                                const arma::uvec& starts, const math::UniformDraws& dropout_draws,
                                const HeadMask& mask) {
  const TransformerConfig& c = w.config;
  check_config(c);
  mask.check(c);  // the whole mask, once: heads_of() below reads each block's part
  if (tokens.n_elem == 0)
    throw math::InputError("transformer_forward: there are no tokens");
  const arma::uvec positions = positions_in_sentences(tokens.n_elem, starts);
  for (arma::uword i = 0; i < tokens.n_elem; ++i) {
    if (tokens(i) >= c.vocabulary)
      throw math::InputError(
          fmt::format("transformer_forward: token {} at row {} is outside a "
                      "vocabulary of {}",
                      tokens(i), i, c.vocabulary));
    if (positions(i) >= c.max_length)
      throw math::InputError(
          fmt::format("transformer_forward: the sentence starting at row {} is "
                      "longer than max_length {}",
                      i - positions(i), c.max_length));
  }
  const std::vector<SequenceRows> sequences = sequence_rows(tokens.n_elem, starts);
  check_weights(w);
  const Dropping dropping{.rate = c.dropout, .draws = dropout_draws};
  TransformerForward f;
  // Room for every block first: Armadillo's matrices do not promise a move that cannot throw,
  // so a vector that grows copies what it holds.
  f.blocks.reserve(w.blocks.size());
  //! [forward]
  f.x0 = dropping.apply(embed(w, tokens, positions), f.x0_keep);  // (N × d)
  const arma::mat* x = &f.x0;                                     // the residual stream
  for (arma::uword l = 0; l < w.blocks.size(); ++l) {
    const auto masked_heads = mask.heads_of(l, c);  // none but in an ablation
    f.blocks.push_back(block_forward(w.blocks[l], c, *x, sequences, dropping, masked_heads));
    x = &f.blocks.back().output;
  }
  f.ln_f = normalise(c.norm, *x, w.lnf_gamma, w.lnf_beta);
  f.logits = unembed(w, f.ln_f.y());  // (N × V)
  //! [forward]
  return f;
}

}  // namespace

TransformerForward transformer_forward(const TransformerWeights& w, const arma::uvec& tokens,
                                       const arma::uvec& starts,
                                       const math::UniformDraws& dropout_draws) {
  return forward_pass(w, tokens, starts, dropout_draws, HeadMask{});
}

TransformerForward transformer_forward(const TransformerWeights& w, const arma::uvec& tokens,
                                       const arma::uvec& starts, const HeadMask& mask) {
  return forward_pass(w, tokens, starts, {}, mask);
}

TransformerWeights transformer_backward(const TransformerWeights& w, const arma::uvec& tokens,
                                        const arma::uvec& starts, const TransformerForward& f,
                                        const arma::mat& dlogits) {
  if (dlogits.n_rows != f.logits.n_rows || dlogits.n_cols != f.logits.n_cols)
    throw math::ShapeError(
        fmt::format("transformer_backward: the logits' gradient is {}, the logits {}",
                    math::shape_of(dlogits), math::shape_of(f.logits)));
  for (const BlockForward& block : f.blocks)
    if (block.heads_masked)
      throw math::InputError(
          "transformer_backward: the forward pass masked heads; an ablation has no backward pass");
  math::require_finite("dlogits", dlogits);
  if (tokens.n_elem != f.x0.n_rows || f.blocks.size() != w.blocks.size())
    throw math::ShapeError(
        fmt::format("transformer_backward: {} tokens and {} blocks, but the forward "
                    "pass has {} rows and {} blocks",
                    tokens.n_elem, w.blocks.size(), f.x0.n_rows, f.blocks.size()));
  for (arma::uword i = 0; i < tokens.n_elem; ++i)
    if (tokens(i) >= w.embedding.n_rows)
      throw math::InputError(
          fmt::format("transformer_backward: token {} at row {} is outside a "
                      "vocabulary of {}",
                      tokens(i), i, w.embedding.n_rows));
  const std::vector<SequenceRows> sequences = sequence_rows(tokens.n_elem, starts);
  TransformerWeights g;
  g.config = w.config;
  g.blocks.resize(w.blocks.size());
  //! [backward]
  arma::mat d_final;  // ∂L/∂LN_f(x), (N × d)
  if (w.config.tied_embeddings) {
    g.embedding = dlogits.t() * f.ln_f.y();  // z = LN_f(x) Eᵀ: E's first share of its gradient
    d_final = dlogits * w.embedding;
  } else {
    g.unembedding = f.ln_f.y().t() * dlogits;
    g.unembedding_bias = arma::sum(dlogits, 0);
    d_final = dlogits * w.unembedding.t();
  }
  const NormGradients lnf = normalise_backward(f.ln_f, w.lnf_gamma, d_final);
  g.lnf_gamma = lnf.dgamma;
  g.lnf_beta = lnf.dbeta;
  arma::mat dx = lnf.dx;  // ∂L/∂x, flowing down the residual stream
  for (std::size_t l = w.blocks.size(); l-- > 0;) {
    BlockGradients block = block_backward(w.blocks[l], w.config, f.blocks[l], sequences, dx);
    g.blocks[l] = std::move(block.weights);
    dx = std::move(block.dx);
  }
  // x0 = E[tokens] + P[positions]: each row's gradient goes to its token's row of E and, if
  // the positions are learned, to its position's row of P.
  if (!f.x0_keep.is_empty())
    dx %= f.x0_keep;  // through the embeddings' dropout
  if (g.embedding.is_empty())
    g.embedding.zeros(w.embedding.n_rows, w.embedding.n_cols);
  for (arma::uword i = 0; i < tokens.n_elem; ++i)
    g.embedding.row(tokens(i)) += dx.row(i);
  if (learns_positions(w.config.positions)) {
    const arma::uvec positions = positions_in_sentences(tokens.n_elem, starts);
    g.position_embedding.zeros(w.position_embedding.n_rows, w.position_embedding.n_cols);
    for (arma::uword i = 0; i < tokens.n_elem; ++i)
      g.position_embedding.row(positions(i)) += dx.row(i);
  }
  //! [backward]
  return g;
}

TransformerStep transformer_step(const TransformerWeights& w, const PackedBatch& batch,
                                 const math::UniformDraws& dropout_draws) {
  TransformerForward f = transformer_forward(w, batch.tokens, batch.starts, dropout_draws);
  const math::CrossEntropy ce = math::cross_entropy(f.logits, batch.targets);
  TransformerWeights g = transformer_backward(w, batch.tokens, batch.starts, f, ce.dlogits);
  return {ce.loss, std::move(f.logits), std::move(g)};
}

arma::mat sentence_logits(const TransformerWeights& w, const arma::uvec& tokens) {
  return sentence_logits(w, tokens, HeadMask{});
}

arma::mat sentence_logits(const TransformerWeights& w, const arma::uvec& tokens,
                          const HeadMask& mask) {
  if (tokens.n_elem == 0 || tokens.n_elem > w.config.max_length)
    throw math::InputError(fmt::format("sentence_logits: {} tokens; the model reads 1 to {}",
                                       tokens.n_elem, w.config.max_length));
  return transformer_forward(w, tokens, arma::uvec{0}, mask).logits;
}

}  // namespace attn::gpt
