#include "attn/gpt/model.hpp"

#include <attn/math/validate.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <utility>

namespace attn::gpt {

namespace {

// The one list of parameters, for a model to change (Weights = TransformerWeights) or to read
// (Weights = const TransformerWeights): the order, the names and the roles are written once.
template <typename Weights>
auto parameter_list(Weights& w) {
  using Matrix = std::conditional_t<std::is_const_v<Weights>, const arma::mat, arma::mat>;
  std::vector<ParameterOf<Matrix>> list;
  // Parameters of one role, in the order given.
  const auto add = [&list](Role role,
                           std::initializer_list<std::pair<std::string, Matrix*>> named) {
    for (const auto& [name, value] : named)
      list.push_back({name, role, value});
  };
  // A layer norm is a gain and a shift; RMSNorm a gain alone.
  const bool shifts = w.config.norm == Norm::layer_norm;
  const auto norm = [&add, shifts](const std::string& name, Matrix& gamma, Matrix& beta) {
    add(Role::norm_gain, {{name + ".gamma", &gamma}});
    if (shifts)
      add(Role::norm_shift, {{name + ".beta", &beta}});
  };
  add(Role::token_embedding, {{"embedding", &w.embedding}});
  if (w.config.positions == Positions::learned)
    add(Role::position_embedding, {{"position_embedding", &w.position_embedding}});
  for (std::size_t l = 0; l < w.blocks.size(); ++l) {
    auto& b = w.blocks[l];
    const std::string block = fmt::format("blocks.{}.", l);
    norm(block + "ln1", b.ln1_gamma, b.ln1_beta);
    add(Role::block_matrix, {{block + "attention.W_Q", &b.attention.W_Q},
                             {block + "attention.W_K", &b.attention.W_K},
                             {block + "attention.W_V", &b.attention.W_V},
                             {block + "attention.W_O", &b.attention.W_O}});
    add(Role::block_bias, {{block + "attention.b_Q", &b.attention.b_Q},
                           {block + "attention.b_K", &b.attention.b_K},
                           {block + "attention.b_V", &b.attention.b_V},
                           {block + "attention.b_O", &b.attention.b_O}});
    norm(block + "ln2", b.ln2_gamma, b.ln2_beta);
    if (w.config.mlp == Mlp::gelu) {
      add(Role::block_matrix, {{block + "mlp.W1", &b.mlp.W1}});
      add(Role::block_bias, {{block + "mlp.b1", &b.mlp.b1}});
      add(Role::block_matrix, {{block + "mlp.W2", &b.mlp.W2}});
      add(Role::block_bias, {{block + "mlp.b2", &b.mlp.b2}});
    } else {
      add(Role::block_matrix, {{block + "swiglu.W_gate", &b.swiglu.W_gate},
                               {block + "swiglu.W_up", &b.swiglu.W_up},
                               {block + "swiglu.W_down", &b.swiglu.W_down}});
    }
  }
  norm("lnf", w.lnf_gamma, w.lnf_beta);
  if (!w.config.tied_embeddings) {
    add(Role::unembedding, {{"unembedding", &w.unembedding}});
    add(Role::unembedding_bias, {{"unembedding_bias", &w.unembedding_bias}});
  }
  return list;
}

}  // namespace

void check_config(const TransformerConfig& c) {
  if (c.vocabulary == 0 || c.d_model == 0 || c.layers == 0 || c.d_ff == 0 || c.max_length == 0)
    throw math::InputError(
        fmt::format("transformer: every size must be positive (V = {}, d = {}, "
                    "L = {}, d_ff = {}, max_length = {})",
                    c.vocabulary, c.d_model, c.layers, c.d_ff, c.max_length));
  if (c.positions == Positions::sinusoidal && c.d_model % 2 != 0)
    throw math::InputError(
        fmt::format("transformer: d_model = {} must be even for the sinusoidal "
                    "positions",
                    c.d_model));
  if (!(c.dropout >= 0.0 && c.dropout < 1.0))
    throw math::InputError(
        fmt::format("transformer: the dropout rate {} is outside [0, 1)", c.dropout));
  if (c.heads == 0 || c.d_model % c.heads != 0)
    throw math::InputError(
        fmt::format("transformer: {} heads cannot share d_model = {} equally", c.heads, c.d_model));
  if (c.positions == Positions::rotary && (c.d_model / c.heads) % 2 != 0)
    throw math::InputError(
        fmt::format("transformer: rotary positions turn pairs of columns, so d_k = {} must be "
                    "even",
                    c.d_model / c.heads));
  if (c.kv_heads > c.heads || (c.kv_heads != 0 && c.heads % c.kv_heads != 0))
    throw math::InputError(
        fmt::format("transformer: {} key/value heads cannot be shared by {} query heads equally",
                    c.kv_heads, c.heads));
}

std::string_view to_string(Positions positions) {
  switch (positions) {
    case Positions::none:
      return "none";
    case Positions::sinusoidal:
      return "sinusoidal";
    case Positions::learned:
      return "learned";
    case Positions::rotary:
      return "rotary";
  }
  return "?";
}

std::string_view to_string(Norm norm) {
  return norm == Norm::layer_norm ? "layer_norm" : "rms_norm";
}

std::string_view to_string(Mlp mlp) {
  return mlp == Mlp::gelu ? "gelu" : "swiglu";
}

arma::uword key_value_heads(const TransformerConfig& c) {
  return c.kv_heads == 0 ? c.heads : c.kv_heads;
}

void check_weights(const TransformerWeights& w) {
  const TransformerConfig& c = w.config;
  check_config(c);
  if (w.blocks.size() != c.layers)
    throw math::ShapeError(fmt::format("transformer: {} blocks, but the config has {} layers",
                                       w.blocks.size(), c.layers));
  const auto require_shape = [](const char* name, const arma::mat& m, arma::uword rows,
                                arma::uword cols) {
    if (m.n_rows != rows || m.n_cols != cols)
      throw math::ShapeError(
          fmt::format("transformer: {} is {}, not ({} × {})", name, math::shape_of(m), rows, cols));
  };
  require_shape("embedding", w.embedding, c.vocabulary, c.d_model);
  if (c.positions == Positions::learned)
    require_shape("position_embedding", w.position_embedding, c.max_length, c.d_model);
  if (!c.tied_embeddings) {
    require_shape("unembedding", w.unembedding, c.d_model, c.vocabulary);
    require_shape("unembedding_bias", w.unembedding_bias, 1, c.vocabulary);
  }
  for (const BlockWeights& b : w.blocks)
    if (b.attention.heads != c.heads || b.attention.kv_heads != c.kv_heads)
      throw math::ShapeError(
          fmt::format("transformer: a block's attention has {} heads and {} key/value heads "
                      "(0: as many), the config {} and {}",
                      b.attention.heads, b.attention.kv_heads, c.heads, c.kv_heads));
  for (const ConstParameter& p : parameters(w))
    math::require_finite(p.name, *p.value);
}

std::vector<Parameter> parameters(TransformerWeights& w) {
  return parameter_list(w);
}

std::vector<ConstParameter> parameters(const TransformerWeights& w) {
  return parameter_list(w);
}

std::vector<bool> decay_flags(const TransformerWeights& w) {
  std::vector<bool> flags;
  for (const ConstParameter& p : parameters(w))
    flags.push_back(p.decays());
  return flags;
}

arma::uword parameter_count(const TransformerConfig& c) {
  check_config(c);
  const arma::uword d = c.d_model, V = c.vocabulary, f = c.d_ff;
  const arma::uword attention =
      math::multi_head_parameters(d, c.heads, /*biases=*/true, c.kv_heads);
  const arma::uword mlp = c.mlp == Mlp::gelu ? 2 * d * f + f + d : 3 * d * f;
  const arma::uword norm = c.norm == Norm::layer_norm ? 2 * d : d;
  const arma::uword output = c.tied_embeddings ? 0 : d * V + V;
  const arma::uword positions = c.positions == Positions::learned ? c.max_length * d : 0;
  return V * d + positions + c.layers * (attention + mlp + 2 * norm) + norm + output;
}

TransformerWeights init_transformer(
    const TransformerConfig& c,
    const std::function<arma::mat(arma::uword, arma::uword)>& standard_normal) {
  check_config(c);
  const arma::uword d = c.d_model;
  const arma::uword d_kv = key_value_heads(c) * (d / c.heads);  // W_K's and W_V's columns
  const bool layer_norm = c.norm == Norm::layer_norm;
  TransformerWeights w;
  w.config = c;
  w.blocks.resize(c.layers);
  const auto ones = [d] {
    return arma::rowvec(d, arma::fill::ones);
  };
  const auto zeros = [](arma::uword n) {
    return arma::rowvec(n, arma::fill::zeros);
  };
  const auto shift = [&] {  // a layer norm's beta; RMSNorm has none
    return layer_norm ? zeros(d) : arma::rowvec();
  };
  for (BlockWeights& b : w.blocks) {
    b.ln1_gamma = ones();
    b.ln1_beta = shift();
    b.attention.heads = c.heads;
    b.attention.kv_heads = c.kv_heads;
    b.attention.b_Q = b.attention.b_O = zeros(d);
    b.attention.b_K = b.attention.b_V = zeros(d_kv);
    b.ln2_gamma = ones();
    b.ln2_beta = shift();
    if (c.mlp == Mlp::gelu) {
      b.mlp.b1 = zeros(c.d_ff);
      b.mlp.b2 = zeros(d);
    }
  }
  w.lnf_gamma = ones();
  w.lnf_beta = shift();
  if (!c.tied_embeddings)
    w.unembedding_bias = zeros(c.vocabulary);
  // The matrices, drawn in the order of parameters().
  const auto draw = [&](arma::uword rows, arma::uword cols) {
    arma::mat m = standard_normal(rows, cols);
    if (m.n_rows != rows || m.n_cols != cols)
      throw math::ShapeError(fmt::format("init_transformer: standard_normal({}, {}) returned {}",
                                         rows, cols, math::shape_of(m)));
    math::require_finite("init_transformer: a draw of standard_normal", m);
    return m;
  };
  // Small enough, when E is also the output layer, that the first logits are near 0.
  w.embedding =
      c.tied_embeddings ? arma::mat(kSmallInitStd * draw(c.vocabulary, d)) : draw(c.vocabulary, d);
  if (c.positions == Positions::learned)
    w.position_embedding = kSmallInitStd * draw(c.max_length, d);
  const auto fan_in = [&](arma::uword rows, arma::uword cols) {
    return arma::mat(draw(rows, cols) / std::sqrt(static_cast<double>(rows)));
  };
  for (BlockWeights& b : w.blocks) {
    b.attention.W_Q = fan_in(d, d);
    b.attention.W_K = fan_in(d, d_kv);
    b.attention.W_V = fan_in(d, d_kv);
    b.attention.W_O = fan_in(d, d);
    if (c.mlp == Mlp::gelu) {
      b.mlp.W1 = fan_in(d, c.d_ff);
      b.mlp.W2 = fan_in(c.d_ff, d);
    } else {
      b.swiglu.W_gate = fan_in(d, c.d_ff);
      b.swiglu.W_up = fan_in(d, c.d_ff);
      b.swiglu.W_down = fan_in(c.d_ff, d);
    }
  }
  if (!c.tied_embeddings)
    w.unembedding = kSmallInitStd * draw(d, c.vocabulary);
  return w;
}

arma::uword kept_context(const TransformerConfig& config) {
  return std::max<arma::uword>(config.max_length / 2, 1);
}

}  // namespace attn::gpt
