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

bool has_biases(const MultiHeadWeights& W) {
  const bool any = !W.b_Q.is_empty() || !W.b_K.is_empty() || !W.b_V.is_empty() || !W.b_O.is_empty();
  const bool all = !W.b_Q.is_empty() && !W.b_K.is_empty() && !W.b_V.is_empty() && !W.b_O.is_empty();
  if (any && !all)
    throw InputError("multi-head attention: give all four biases or none");
  return all;
}

void require_square(const char* name, const arma::mat& m, arma::uword d) {
  if (m.n_rows != d || m.n_cols != d)
    throw ShapeError(
        fmt::format("multi-head attention: {} is {}, not ({} × {})", name, shape_of(m), d, d));
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
  head_width(d, W.heads);
  require_square("W_Q", W.W_Q, d);
  require_square("W_K", W.W_K, d);
  require_square("W_V", W.W_V, d);
  require_square("W_O", W.W_O, d);
  const bool biases = has_biases(W);
  if (biases) {
    require_bias("b_Q", W.b_Q, d);
    require_bias("b_K", W.b_K, d);
    require_bias("b_V", W.b_V, d);
    require_bias("b_O", W.b_O, d);
  }
  return biases;
}

MultiHead run(const arma::mat& query, const arma::mat& key, const arma::mat& value,
              const MultiHeadWeights& W, const std::optional<Mask>& mask) {
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

  //! [split-attend-concat]
  const arma::uword d_k = head_width(d, W.heads);  // d = d_model, the width of the query
  MultiHead result;
  result.Q = affine(query, W.W_Q, W.b_Q);                           // (n × d_model)
  result.K = affine(key, W.W_K, W.b_K);                             // (m × d_model)
  result.V = affine(value, W.W_V, W.b_V);                           // (m × d_model)
  const std::vector<arma::mat> Q = split_heads(result.Q, W.heads);  // h × (n × d_k)
  const std::vector<arma::mat> K = split_heads(result.K, W.heads);  // h × (m × d_k)
  const std::vector<arma::mat> V = split_heads(result.V, W.heads);  // h × (m × d_k)
  std::vector<arma::mat> outputs;
  for (arma::uword k = 0; k < W.heads; ++k) {
    result.heads.push_back(mask ? attend(Q[k], K[k], V[k], score_scale(d_k), *mask)
                                : attend(Q[k], K[k], V[k], score_scale(d_k)));
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
  return run(query, key, value, W, std::nullopt);
}

MultiHead multi_head_attention(const arma::mat& query, const arma::mat& key, const arma::mat& value,
                               const MultiHeadWeights& W, const Mask& mask) {
  return run(query, key, value, W, mask);
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

arma::uword multi_head_parameters(arma::uword d_model, arma::uword heads, bool biases) {
  head_width(d_model, heads);
  return 4 * d_model * d_model + (biases ? 4 * d_model : 0);
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
        std::tuple{"value", &value, &forward.V}}) {
    require_same_rows("multi_head_backward", name, *input, "its projection", *projected);
    require_same_cols("multi_head_backward", name, *input, "its projection", *projected);
  }
  const arma::uword d_k = head_width(d, W.heads);
  const std::vector<arma::mat> Q = split_heads(forward.Q, W.heads);
  const std::vector<arma::mat> K = split_heads(forward.K, W.heads);
  const std::vector<arma::mat> V = split_heads(forward.V, W.heads);

  MultiHeadGradients g;
  g.dW.heads = W.heads;
  // output = concat W_O + b_O
  g.dW.W_O = forward.concat.t() * d_output;
  const std::vector<arma::mat> d_heads = split_heads(d_output * W.W_O.t(), W.heads);
  std::vector<arma::mat> dQ, dK, dV;
  for (arma::uword k = 0; k < W.heads; ++k) {
    const AttentionGradients h =
        attend_backward(Q[k], K[k], V[k], forward.heads[k], d_heads[k], score_scale(d_k));
    dQ.push_back(h.dQ);
    dK.push_back(h.dK);
    dV.push_back(h.dV);
  }
  const arma::mat dQ_all = concat_heads(dQ), dK_all = concat_heads(dK), dV_all = concat_heads(dV);
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
