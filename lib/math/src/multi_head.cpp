#include "attn/math/multi_head.hpp"

#include "attn/math/backward.hpp"
#include "attn/math/validate.hpp"

#include <fmt/format.h>

#include <optional>
#include <tuple>

namespace attn::math {

namespace {

arma::uword head_width(arma::uword d_model, arma::uword heads) {
  if (heads == 0 || d_model == 0 || d_model % heads != 0)
    throw InputError(fmt::format("{} heads cannot share d_model = {} equally", heads, d_model));
  return d_model / heads;
}

// g, the key/value heads: kv_heads, or heads where it is 0; g must divide heads.
arma::uword group_count(arma::uword heads, arma::uword kv_heads) {
  const arma::uword g = kv_heads == 0 ? heads : kv_heads;
  if (heads == 0 || heads % g != 0)
    throw InputError(fmt::format("{} key/value heads cannot be shared by {} query heads equally",
                                 kv_heads, heads));
  return g;
}

bool has_biases(const MultiHeadWeights& W) {
  const bool any = !W.b_Q.is_empty() || !W.b_K.is_empty() || !W.b_V.is_empty() || !W.b_O.is_empty();
  const bool all = !W.b_Q.is_empty() && !W.b_K.is_empty() && !W.b_V.is_empty() && !W.b_O.is_empty();
  if (any && !all)
    throw InputError("multi-head attention: give all four biases or none");
  return all;
}

void require_shape(const char* name, const arma::mat& m, arma::uword rows, arma::uword cols) {
  if (m.n_rows != rows || m.n_cols != cols)
    throw ShapeError(fmt::format("multi-head attention: {} is {}, not ({} × {})", name, shape_of(m),
                                 rows, cols));
  require_finite(name, m);
}

void require_bias(const char* name, const arma::rowvec& b, arma::uword d) {
  if (b.n_elem != d)
    throw ShapeError(
        fmt::format("multi-head attention: {} has {} entries, not {}", name, b.n_elem, d));
  require_finite(name, b);
}

// The weights' shapes against d_model (the columns of the query); returns whether biases are on.
bool check_weights(const MultiHeadWeights& W, arma::uword d) {
  const arma::uword d_kv = key_value_heads(W) * head_width(d, W.heads);  // g·d_k
  require_shape("W_Q", W.W_Q, d, d);
  require_shape("W_K", W.W_K, d, d_kv);
  require_shape("W_V", W.W_V, d, d_kv);
  require_shape("W_O", W.W_O, d, d);
  const bool biases = has_biases(W);
  if (biases) {
    require_bias("b_Q", W.b_Q, d);
    require_bias("b_K", W.b_K, d_kv);
    require_bias("b_V", W.b_V, d_kv);
    require_bias("b_O", W.b_O, d);
  }
  return biases;
}

void check_rotary(const RotaryPositions& rotary, const arma::mat& query, const arma::mat& key) {
  if (rotary.queries.n_elem != query.n_rows || rotary.keys.n_elem != key.n_rows)
    throw ShapeError(
        fmt::format("multi-head attention: {} query positions and {} key positions for {} "
                    "queries and {} keys",
                    rotary.queries.n_elem, rotary.keys.n_elem, query.n_rows, key.n_rows));
}

// Each head's columns turned by rotary() at the rows' positions (forward), or turned back by
// rotary_backward() (a gradient).
enum class Turn { forward, back };
arma::mat turn_heads(const arma::mat& X, arma::uword heads, const arma::vec& positions,
                     const RotaryPositions& how, Turn turn) {
  std::vector<arma::mat> turned;
  for (const arma::mat& head : split_heads(X, heads))
    turned.push_back(turn == Turn::forward
                         ? rotary(head, positions, how.layout, how.base)
                         : rotary_backward(head, positions, how.layout, how.base));
  return concat_heads(turned);
}

MultiHead run(const arma::mat& query, const arma::mat& key, const arma::mat& value,
              const MultiHeadWeights& W, const std::optional<Mask>& mask,
              const std::optional<RotaryPositions>& rotary) {
  require_nonempty("query", query);
  require_nonempty("key", key);
  require_finite("query", query);
  require_finite("key", key);
  require_finite("value", value);
  const arma::uword d = query.n_cols;
  check_weights(W, d);
  require_same_cols("multi-head attention", "query", query, "key", key);
  require_same_cols("multi-head attention", "query", query, "value", value);
  require_same_rows("multi-head attention", "key", key, "value", value);
  if (rotary)
    check_rotary(*rotary, query, key);

  //! [split-attend-concat]
  const arma::uword d_k = head_width(d, W.heads);  // d = d_model, the width of the query
  const arma::uword g = key_value_heads(W);        // key/value heads; g = h unless grouped
  const arma::uword group = W.heads / g;           // query heads per key/value head
  MultiHead result;
  result.Q = affine(query, W.W_Q, W.b_Q);  // (n × d_model)
  result.K = affine(key, W.W_K, W.b_K);    // (m × g·d_k)
  result.V = affine(value, W.W_V, W.b_V);  // (m × g·d_k)
  if (rotary) {                            // RoPE: turn every head's queries and keys
    result.Q = turn_heads(result.Q, W.heads, rotary->queries, *rotary, Turn::forward);
    result.K = turn_heads(result.K, g, rotary->keys, *rotary, Turn::forward);
    result.rotary = rotary;
  }
  const std::vector<arma::mat> Q = split_heads(result.Q, W.heads);  // h × (n × d_k)
  const std::vector<arma::mat> K = split_heads(result.K, g);        // g × (m × d_k)
  const std::vector<arma::mat> V = split_heads(result.V, g);        // g × (m × d_k)
  std::vector<arma::mat> outputs;
  result.heads.reserve(W.heads);  // growing would copy every head's values so far
  outputs.reserve(W.heads);
  for (arma::uword k = 0; k < W.heads; ++k) {
    const arma::uword kv = k / group;  // the key/value head of query head k's group
    result.heads.push_back(mask ? attend(Q[k], K[kv], V[kv], score_scale(d_k), *mask)
                                : attend(Q[k], K[kv], V[kv], score_scale(d_k)));
    outputs.push_back(result.heads.back().output);  // (n × d_k)
  }
  result.concat = concat_heads(outputs);                // (n × d_model)
  result.output = affine(result.concat, W.W_O, W.b_O);  // (n × d_model)
  //! [split-attend-concat]
  return result;
}

}  // namespace

std::vector<arma::mat> split_heads(const arma::mat& X, arma::uword heads) {
  const arma::uword d_k = head_width(X.n_cols, heads);
  std::vector<arma::mat> blocks;
  for (arma::uword k = 0; k < heads; ++k)
    blocks.push_back(X.cols(k * d_k, (k + 1) * d_k - 1));
  return blocks;
}

arma::mat affine(const arma::mat& X, const arma::mat& W, const arma::rowvec& b) {
  arma::mat Y = X * W;
  if (!b.is_empty())
    Y.each_row() += b;
  return Y;
}

arma::mat concat_heads(const std::vector<arma::mat>& blocks) {
  if (blocks.empty())
    throw InputError("concat_heads: there are no heads");
  arma::mat joined = blocks.front();
  for (std::size_t k = 1; k < blocks.size(); ++k) {
    if (blocks[k].n_rows != joined.n_rows)
      throw ShapeError(fmt::format("concat_heads: head {} is {}, head 0 is {}", k,
                                   shape_of(blocks[k]), shape_of(blocks.front())));
    joined = arma::join_rows(joined, blocks[k]);
  }
  return joined;
}

MultiHead multi_head_attention(const arma::mat& query, const arma::mat& key, const arma::mat& value,
                               const MultiHeadWeights& W) {
  return run(query, key, value, W, std::nullopt, std::nullopt);
}

MultiHead multi_head_attention(const arma::mat& query, const arma::mat& key, const arma::mat& value,
                               const MultiHeadWeights& W, const Mask& mask) {
  return run(query, key, value, W, mask, std::nullopt);
}

MultiHead multi_head_attention(const arma::mat& query, const arma::mat& key, const arma::mat& value,
                               const MultiHeadWeights& W, const Mask& mask,
                               const RotaryPositions& rotary) {
  return run(query, key, value, W, mask, rotary);
}

arma::uword key_value_heads(const MultiHeadWeights& W) {
  return group_count(W.heads, W.kv_heads);
}

arma::mat average_weights(const MultiHead& result) {
  if (result.heads.empty())
    throw InputError("average_weights: the pass has no heads");
  arma::mat sum = result.heads.front().weights;
  for (std::size_t k = 1; k < result.heads.size(); ++k) {
    if (arma::size(result.heads[k].weights) != arma::size(sum))
      throw ShapeError(fmt::format("average_weights: head {} has weights {}, head 0 {}", k,
                                   shape_of(result.heads[k].weights), shape_of(sum)));
    sum += result.heads[k].weights;
  }
  return sum / static_cast<double>(result.heads.size());
}

arma::uword multi_head_parameters(arma::uword d_model, arma::uword heads, bool biases,
                                  arma::uword kv_heads) {
  const arma::uword d_k = head_width(d_model, heads);
  const arma::uword d_kv = group_count(heads, kv_heads) * d_k;
  return 2 * d_model * d_model + 2 * d_model * d_kv + (biases ? 2 * d_model + 2 * d_kv : 0);
}

MultiHeadGradients multi_head_backward(const arma::mat& query, const arma::mat& key,
                                       const arma::mat& value, const MultiHeadWeights& W,
                                       const MultiHead& forward, const arma::mat& d_output) {
  const arma::uword d = query.n_cols;
  const bool biases = check_weights(W, d);
  if (d_output.n_rows != forward.output.n_rows || d_output.n_cols != forward.output.n_cols)
    throw ShapeError(fmt::format("multi_head_backward: the output gradient is {}, the output {}",
                                 shape_of(d_output), shape_of(forward.output)));
  require_finite("d_output", d_output);
  if (forward.heads.size() != W.heads)
    throw ShapeError(fmt::format("multi_head_backward: the forward pass has {} heads, W has {}",
                                 forward.heads.size(), W.heads));
  for (const auto& [name, input, projected] :
       {std::tuple{"query", &query, &forward.Q}, std::tuple{"key", &key, &forward.K},
        std::tuple{"value", &value, &forward.V}})
    require_same_rows("multi_head_backward", name, *input, "its projection", *projected);
  require_same_cols("multi_head_backward", "query", query, "its projection", forward.Q);
  const arma::uword d_k = head_width(d, W.heads);
  const arma::uword kv_heads = key_value_heads(W);
  const arma::uword group = W.heads / kv_heads;  // query heads per key/value head
  if (forward.K.n_cols != kv_heads * d_k || forward.V.n_cols != kv_heads * d_k)
    throw ShapeError(
        fmt::format("multi_head_backward: the forward pass's keys are {} and values {}, W has {} "
                    "key/value heads of {}",
                    shape_of(forward.K), shape_of(forward.V), kv_heads, d_k));
  if (forward.rotary)
    check_rotary(*forward.rotary, query, key);
  const std::vector<arma::mat> Q = split_heads(forward.Q, W.heads);
  const std::vector<arma::mat> K = split_heads(forward.K, kv_heads);
  const std::vector<arma::mat> V = split_heads(forward.V, kv_heads);

  MultiHeadGradients g;
  g.dW.heads = W.heads;
  g.dW.kv_heads = W.kv_heads;
  // output = concat W_O + b_O
  g.dW.W_O = forward.concat.t() * d_output;
  const std::vector<arma::mat> d_heads = split_heads(d_output * W.W_O.t(), W.heads);
  std::vector<arma::mat> dQ;
  std::vector<arma::mat> dK(kv_heads, arma::mat(K.front().n_rows, d_k, arma::fill::zeros));
  std::vector<arma::mat> dV(kv_heads, arma::mat(V.front().n_rows, d_k, arma::fill::zeros));
  for (arma::uword k = 0; k < W.heads; ++k) {
    const arma::uword kv = k / group;  // a shared key/value head sums its group's gradients
    const AttentionGradients h =
        attend_backward(Q[k], K[kv], V[kv], forward.heads[k], d_heads[k], score_scale(d_k));
    dQ.push_back(h.dQ);
    dK[kv] += h.dK;
    dV[kv] += h.dV;
  }
  arma::mat dQ_all = concat_heads(dQ), dK_all = concat_heads(dK);
  const arma::mat dV_all = concat_heads(dV);
  if (forward.rotary) {  // the gradients of the turned Q and K, turned back
    const RotaryPositions& rotary = *forward.rotary;
    dQ_all = turn_heads(dQ_all, W.heads, rotary.queries, rotary, Turn::back);
    dK_all = turn_heads(dK_all, kv_heads, rotary.keys, rotary, Turn::back);
  }
  // Q = query W_Q + b_Q, and likewise for K and V.
  g.dW.W_Q = query.t() * dQ_all;
  g.dW.W_K = key.t() * dK_all;
  g.dW.W_V = value.t() * dV_all;
  g.d_query = dQ_all * W.W_Q.t();
  g.d_key = dK_all * W.W_K.t();
  g.d_value = dV_all * W.W_V.t();
  if (biases) {
    g.dW.b_Q = arma::sum(dQ_all, 0);
    g.dW.b_K = arma::sum(dK_all, 0);
    g.dW.b_V = arma::sum(dV_all, 0);
    g.dW.b_O = arma::sum(d_output, 0);
  }
  return g;
}

}  // namespace attn::math
