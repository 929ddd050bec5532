#include "attn/gpt/model.hpp"

#include "not_a_choice.hpp"

#include <attn/math/validate.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <sstream>
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
  const bool shifts = has_shift(w.config.norm);
  const auto norm = [&add, shifts](const std::string& name, Matrix& gamma, Matrix& beta) {
    add(Role::norm_gain, {{name + ".gamma", &gamma}});
    if (shifts)
      add(Role::norm_shift, {{name + ".beta", &beta}});
  };
  add(Role::token_embedding, {{"embedding", &w.embedding}});
  if (learns_positions(w.config.positions))
    add(Role::position_embedding, {{"position_embedding", &w.position_embedding}});
  for (std::size_t l = 0; l < w.blocks.size(); ++l) {
    auto& b = w.blocks[l];
    const std::string block = fmt::format("blocks.{}.", l);
    norm(block + "ln1", b.ln1_gamma, b.ln1_beta);
    add(Role::block_matrix, {{block + "attention.W_Q", &b.attention.W_Q},
                             {block + "attention.W_K", &b.attention.W_K},
                             {block + "attention.W_V", &b.attention.W_V},
                             {block + "attention.W_O", &b.attention.W_O}});
    if (w.config.attention_biases)
      add(Role::block_bias, {{block + "attention.b_Q", &b.attention.b_Q},
                             {block + "attention.b_K", &b.attention.b_K},
                             {block + "attention.b_V", &b.attention.b_V},
                             {block + "attention.b_O", &b.attention.b_O}});
    if (has_mlp(w.config.mlp))
      norm(block + "ln2", b.ln2_gamma, b.ln2_beta);
    switch (w.config.mlp) {
      case Mlp::gelu:
        add(Role::block_matrix, {{block + "mlp.W1", &b.mlp.W1}});
        add(Role::block_bias, {{block + "mlp.b1", &b.mlp.b1}});
        add(Role::block_matrix, {{block + "mlp.W2", &b.mlp.W2}});
        add(Role::block_bias, {{block + "mlp.b2", &b.mlp.b2}});
        break;
      case Mlp::swiglu:
        add(Role::block_matrix, {{block + "swiglu.W_gate", &b.swiglu.W_gate},
                                 {block + "swiglu.W_up", &b.swiglu.W_up},
                                 {block + "swiglu.W_down", &b.swiglu.W_down}});
        break;
      case Mlp::none:
        break;
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
  // A choice outside its enum (a cast integer) is refused here, before a switch meets it.
  to_string(c.positions);
  to_string(c.norm);
  to_string(c.mlp);
  if (c.vocabulary == 0 || c.d_model == 0 || c.layers == 0 || c.max_length == 0)
    throw math::InputError(
        fmt::format("transformer: every size must be positive (V = {}, d = {}, "
                    "L = {}, max_length = {})",
                    c.vocabulary, c.d_model, c.layers, c.max_length));
  if ((c.d_ff == 0) == has_mlp(c.mlp))
    throw math::InputError(
        fmt::format("transformer: d_ff = {} with mlp {}: an MLP needs a hidden width, and "
                    "mlp none takes d_ff = 0",
                    c.d_ff, to_string(c.mlp)));
  if (!(c.dropout >= 0.0 && c.dropout < 1.0))
    throw math::InputError(
        fmt::format("transformer: the dropout rate {} is outside [0, 1)", c.dropout));
  if (c.heads == 0 || c.d_model % c.heads != 0)
    throw math::InputError(
        fmt::format("transformer: {} heads cannot share d_model = {} equally", c.heads, c.d_model));
  switch (c.positions) {
    case Positions::sinusoidal:
      if (c.d_model % 2 != 0)
        throw math::InputError(fmt::format(
            "transformer: d_model = {} must be even for the sinusoidal positions", c.d_model));
      break;
    case Positions::rotary:
      if ((c.d_model / c.heads) % 2 != 0)
        throw math::InputError(
            fmt::format("transformer: rotary positions turn pairs of columns, so d_k = {} must be "
                        "even",
                        c.d_model / c.heads));
      break;
    case Positions::none:
    case Positions::learned:
      break;
  }
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
  not_a_choice("transformer", "positions", positions);
}

std::string_view to_string(Norm norm) {
  switch (norm) {
    case Norm::layer_norm:
      return "layer_norm";
    case Norm::rms_norm:
      return "rms_norm";
  }
  not_a_choice("transformer", "norm", norm);
}

std::string_view to_string(Mlp mlp) {
  switch (mlp) {
    case Mlp::gelu:
      return "gelu";
    case Mlp::swiglu:
      return "swiglu";
    case Mlp::none:
      return "none";
  }
  not_a_choice("transformer", "mlp", mlp);
}

bool learns_positions(Positions positions) {
  switch (positions) {
    case Positions::learned:
      return true;
    case Positions::none:
    case Positions::sinusoidal:  // a fixed table
    case Positions::rotary:
      return false;
  }
  not_a_choice("transformer", "positions", positions);
}

bool rotates(Positions positions) {
  switch (positions) {
    case Positions::rotary:
      return true;
    case Positions::none:
    case Positions::sinusoidal:
    case Positions::learned:
      return false;
  }
  not_a_choice("transformer", "positions", positions);
}

bool has_shift(Norm norm) {
  switch (norm) {
    case Norm::layer_norm:
      return true;
    case Norm::rms_norm:
      return false;
  }
  not_a_choice("transformer", "norm", norm);
}

bool has_biases(Mlp mlp) {
  switch (mlp) {
    case Mlp::gelu:
      return true;
    case Mlp::swiglu:
    case Mlp::none:
      return false;
  }
  not_a_choice("transformer", "mlp", mlp);
}

bool has_mlp(Mlp mlp) {
  switch (mlp) {
    case Mlp::gelu:
    case Mlp::swiglu:
      return true;
    case Mlp::none:
      return false;
  }
  not_a_choice("transformer", "mlp", mlp);
}

std::string describe(const TransformerConfig& config) {
  // Every field, named: a field added to TransformerConfig and not here stops the build.
  const auto& [vocabulary, d_model, heads, layers, d_ff, max_length, positions, tied_embeddings,
               dropout, kv_heads, sliding_window, norm, mlp, attention_biases] = config;
  return fmt::format(
      "vocabulary {}\nd_model {}\nheads {}\nlayers {}\nd_ff {}\nmax_length {}\npositions {}\n"
      "tied_embeddings {}\ndropout {}\nkv_heads {}\nsliding_window {}\nnorm {}\nmlp {}\n"
      "attention_biases {}\n",
      vocabulary, d_model, heads, layers, d_ff, max_length, to_string(positions), tied_embeddings,
      dropout, kv_heads, sliding_window, to_string(norm), to_string(mlp), attention_biases);
}

std::string difference(const TransformerConfig& have, const TransformerConfig& want) {
  std::istringstream a(describe(have)), b(describe(want));
  std::string x, y;
  while (std::getline(a, x) && std::getline(b, y))
    if (x != y)
      return fmt::format("{}, not {}", x, y);
  return "";
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
  if (learns_positions(c.positions))
    require_shape("position_embedding", w.position_embedding, c.max_length, c.d_model);
  if (!c.tied_embeddings) {
    require_shape("unembedding", w.unembedding, c.d_model, c.vocabulary);
    require_shape("unembedding_bias", w.unembedding_bias, 1, c.vocabulary);
  }
  const arma::uword d_kv = key_value_heads(c) * (c.d_model / c.heads);
  for (std::size_t l = 0; l < w.blocks.size(); ++l) {
    const math::MultiHeadWeights& W = w.blocks[l].attention;
    if (W.heads != c.heads || W.kv_heads != c.kv_heads)
      throw math::ShapeError(
          fmt::format("transformer: a block's attention has {} heads and {} key/value heads "
                      "(0: as many), the config {} and {}",
                      W.heads, W.kv_heads, c.heads, c.kv_heads));
    const arma::uword widths[] = {c.d_model, d_kv, d_kv, c.d_model};
    const std::pair<const char*, const arma::rowvec*> biases[] = {
        {"b_Q", &W.b_Q}, {"b_K", &W.b_K}, {"b_V", &W.b_V}, {"b_O", &W.b_O}};
    for (std::size_t k = 0; k < 4; ++k) {
      const arma::uword wanted = c.attention_biases ? widths[k] : 0;
      if (biases[k].second->n_elem != wanted)
        throw math::ShapeError(fmt::format(
            "transformer: blocks.{}.attention.{} has {} entries, not {} (attention_biases {})", l,
            biases[k].first, biases[k].second->n_elem, wanted, c.attention_biases));
    }
  }
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
      math::multi_head_parameters(d, c.heads, c.attention_biases, c.kv_heads);
  const arma::uword norm = has_shift(c.norm) ? 2 * d : d;
  arma::uword mlp = 0;  // with its norm
  switch (c.mlp) {
    case Mlp::gelu:
      mlp = 2 * d * f + f + d + norm;
      break;
    case Mlp::swiglu:
      mlp = 3 * d * f + norm;
      break;
    case Mlp::none:
      break;
  }
  const arma::uword output = c.tied_embeddings ? 0 : d * V + V;
  const arma::uword positions = learns_positions(c.positions) ? c.max_length * d : 0;
  return V * d + positions + c.layers * (attention + norm + mlp) + norm + output;
}

TransformerWeights init_transformer(
    const TransformerConfig& c,
    const std::function<arma::mat(arma::uword, arma::uword)>& standard_normal) {
  check_config(c);
  const arma::uword d = c.d_model;
  const arma::uword d_kv = key_value_heads(c) * (d / c.heads);  // W_K's and W_V's columns
  const bool layer_norm = has_shift(c.norm);
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
    if (c.attention_biases) {
      b.attention.b_Q = b.attention.b_O = zeros(d);
      b.attention.b_K = b.attention.b_V = zeros(d_kv);
    }
    if (has_mlp(c.mlp)) {
      b.ln2_gamma = ones();
      b.ln2_beta = shift();
    }
    if (has_biases(c.mlp)) {
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
  if (learns_positions(c.positions))
    w.position_embedding = kSmallInitStd * draw(c.max_length, d);
  const auto fan_in = [&](arma::uword rows, arma::uword cols) {
    return arma::mat(draw(rows, cols) / std::sqrt(static_cast<double>(rows)));
  };
  for (BlockWeights& b : w.blocks) {
    b.attention.W_Q = fan_in(d, d);
    b.attention.W_K = fan_in(d, d_kv);
    b.attention.W_V = fan_in(d, d_kv);
    b.attention.W_O = fan_in(d, d);
    switch (c.mlp) {
      case Mlp::gelu:
        b.mlp.W1 = fan_in(d, c.d_ff);
        b.mlp.W2 = fan_in(c.d_ff, d);
        break;
      case Mlp::swiglu:
        b.swiglu.W_gate = fan_in(d, c.d_ff);
        b.swiglu.W_up = fan_in(d, c.d_ff);
        b.swiglu.W_down = fan_in(c.d_ff, d);
        break;
      case Mlp::none:
        break;
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
