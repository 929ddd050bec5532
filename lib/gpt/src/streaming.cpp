#include "attn/gpt/streaming.hpp"

#include <attn/gpt/block.hpp>
#include <attn/gpt/forward.hpp>
#include <attn/math/layers.hpp>
#include <attn/math/positions.hpp>
#include <attn/math/softmax.hpp>
#include <attn/math/validate.hpp>

#include <fmt/format.h>

#include <cmath>

namespace attn::gpt {

namespace {

// One block's cache: a row per token held, in the text's order, sinks first; the keys as they
// were before RoPE, the values, both `(held × g·d_k)`.
struct BlockCache {
  arma::mat keys;
  arma::mat values;
};

// One token through one block: block_step()'s computation, with keys turned at their places in
// the cache instead of their positions in the text.
arma::mat streaming_step(const BlockWeights& b, const TransformerConfig& c, const arma::mat& x,
                         BlockCache& cache, const StreamingCache& shape) {
  const math::MultiHeadWeights& W = b.attention;
  const arma::uword d_k = x.n_cols / W.heads;
  const arma::uword group = W.heads / math::key_value_heads(W);  // query heads per k/v head
  //! [streaming-step]
  const arma::mat a = normalise(c.norm, x, b.ln1_gamma, b.ln1_beta).y();  // (1 × d)
  const arma::rowvec q = math::affine(a, W.W_Q, W.b_Q);
  cache.keys.insert_rows(cache.keys.n_rows, math::affine(a, W.W_K, W.b_K));
  cache.values.insert_rows(cache.values.n_rows, math::affine(a, W.W_V, W.b_V));
  if (cache.keys.n_rows > shape.size) {  // full: the oldest token after the sinks goes
    cache.keys.shed_row(shape.sinks);
    cache.values.shed_row(shape.sinks);
  }
  const arma::uword held = cache.keys.n_rows;
  const arma::vec places = arma::regspace<arma::vec>(0, static_cast<double>(held) - 1);
  const arma::vec last{static_cast<double>(held - 1)};  // the new token's place
  arma::rowvec concat(x.n_cols);
  for (arma::uword h = 0; h < W.heads; ++h) {
    const arma::span query_head(h * d_k, (h + 1) * d_k - 1);
    const arma::span kv_head((h / group) * d_k, (h / group + 1) * d_k - 1);
    arma::mat K = cache.keys.cols(kv_head);
    arma::rowvec q_h = q.cols(query_head);
    if (rotates(c.positions)) {
      K = math::rotary(K, places);
      q_h = math::rotary(q_h, last);
    }
    const arma::rowvec weights = math::softmax(math::score_scale(d_k) * q_h * K.t());
    concat.cols(query_head) = weights * cache.values.cols(kv_head);
  }
  const arma::mat middle = x + math::affine(concat, W.W_O, W.b_O);  // residual
  return mlp_step(b, c, middle);
  //! [streaming-step]
}

}  // namespace

arma::vec streaming_costs(const TransformerWeights& weights, const arma::uvec& tokens,
                          const StreamingCache& cache) {
  check_weights(weights);
  const TransformerConfig& c = weights.config;
  if (learns_positions(c.positions) || c.positions == Positions::sinusoidal)
    throw math::InputError(
        fmt::format("streaming_costs: positions {} have no place for a token past max_length {}; a "
                    "streaming cache needs rotary positions or none",
                    to_string(c.positions), c.max_length));
  if (cache.size == 0 || cache.size > c.max_length)
    throw math::InputError(
        fmt::format("streaming_costs: a cache of {} tokens; the model reads 1 to {}", cache.size,
                    c.max_length));
  if (cache.sinks >= cache.size)
    throw math::InputError(
        fmt::format("streaming_costs: {} sinks in a cache of {} leave no place for the new token",
                    cache.sinks, cache.size));
  if (tokens.n_elem < 2)
    throw math::InputError(
        fmt::format("streaming_costs: {} token(s); a cost needs at least 2", tokens.n_elem));
  for (arma::uword i = 0; i < tokens.n_elem; ++i)
    if (tokens(i) >= c.vocabulary)
      throw math::InputError(
          fmt::format("streaming_costs: token {} (position {}) is outside a "
                      "vocabulary of {}",
                      tokens(i), i, c.vocabulary));
  std::vector<BlockCache> caches(weights.blocks.size());
  arma::vec nats(tokens.n_elem - 1);
  for (arma::uword i = 0; i + 1 < tokens.n_elem; ++i) {
    arma::mat x = embed(weights, arma::uvec{tokens(i)}, arma::uvec{0});  // no table: any place
    for (std::size_t l = 0; l < weights.blocks.size(); ++l)
      x = streaming_step(weights.blocks[l], c, x, caches[l], cache);
    const arma::rowvec logits =
        unembed(weights, normalise(c.norm, x, weights.lnf_gamma, weights.lnf_beta).y());
    nats(i) = math::cross_entropy(logits, arma::uvec{tokens(i + 1)}).loss;
  }
  return nats;
}

}  // namespace attn::gpt
