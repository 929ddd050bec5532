#include "attn/math/transformer.hpp"

#include "attn/math/positions.hpp"
#include "attn/math/validate.hpp"

#include <fmt/format.h>

#include <cmath>

namespace attn {

namespace {

void check_config(const TransformerConfig& c) {
  if (c.vocabulary == 0 || c.d_model == 0 || c.layers == 0 || c.d_ff == 0 || c.max_length == 0)
    throw InputError(
        fmt::format("transformer: every size must be positive (V = {}, d = {}, "
                    "L = {}, d_ff = {}, max_length = {})",
                    c.vocabulary, c.d_model, c.layers, c.d_ff, c.max_length));
  if (c.positions && !c.learned_positions && c.d_model % 2 != 0)
    throw InputError(
        fmt::format("transformer: d_model = {} must be even for the sinusoidal "
                    "positions",
                    c.d_model));
  if (c.learned_positions && !c.positions)
    throw InputError("transformer: learned_positions is set but positions are off");
  if (!(c.dropout >= 0.0 && c.dropout < 1.0))
    throw InputError(fmt::format("transformer: the dropout rate {} is outside [0, 1)", c.dropout));
  if (c.heads == 0 || c.d_model % c.heads != 0)
    throw InputError(
        fmt::format("transformer: {} heads cannot share d_model = {} equally", c.heads, c.d_model));
}

// The position rows added to the embeddings: P's rows (learned or sinusoidal), or zeros
// without positions.
arma::mat position_rows(const TransformerWeights& w, const arma::uvec& positions) {
  const TransformerConfig& c = w.config;
  if (!c.positions)
    return arma::zeros(positions.n_elem, c.d_model);
  if (c.learned_positions)
    return w.position_embedding.rows(positions);
  return sinusoidal_positions(c.max_length, c.d_model).rows(positions);
}

// The logits from the final layer norm's output: through W_U and b_U, or through E's rows.
arma::mat output_logits(const TransformerWeights& w, const arma::mat& final_state) {
  if (w.config.tied_embeddings)
    return final_state * w.embedding.t();  // (N × d)(d × V)
  arma::mat logits = final_state * w.unembedding;
  logits.each_row() += w.unembedding_bias;
  return logits;
}

// The rows of one sentence in a packed batch.
struct Rows {
  arma::uword first, last;
  arma::uword count() const { return last - first + 1; }
};

// The rows of each sentence of a packed batch, from their first rows: the first sentence
// starts at row 0, and each one ends where the next starts, the last at `rows`.
std::vector<Rows> sentence_rows(arma::uword rows, const arma::uvec& starts) {
  if (starts.is_empty() || starts(0) != 0)
    throw InputError("packed sentences: the first sentence must start at row 0");
  std::vector<Rows> out;
  for (arma::uword k = 0; k < starts.n_elem; ++k) {
    const arma::uword end = k + 1 < starts.n_elem ? starts(k + 1) : rows;
    if (end <= starts(k) || end > rows)
      throw InputError(
          fmt::format("packed sentences: sentence {} would run from row {} to row "
                      "{} of {}",
                      k, starts(k), end, rows));
    out.push_back({starts(k), end - 1});
  }
  return out;
}

// The model's own matrices against its config (the blocks' inner shapes are checked by
// layer_norm, multi_head_attention and feed_forward), and every weight finite, named as
// model_parameters() names it.
void check_weights(const TransformerWeights& w) {
  const TransformerConfig& c = w.config;
  const auto require_shape = [](const char* name, const arma::mat& m, arma::uword rows,
                                arma::uword cols) {
    if (m.n_rows != rows || m.n_cols != cols)
      throw ShapeError(
          fmt::format("transformer: {} is {}, not ({} × {})", name, shape_of(m), rows, cols));
  };
  require_shape("embedding", w.embedding, c.vocabulary, c.d_model);
  if (c.learned_positions)
    require_shape("position_embedding", w.position_embedding, c.max_length, c.d_model);
  if (!c.tied_embeddings) {
    require_shape("unembedding", w.unembedding, c.d_model, c.vocabulary);
    require_shape("unembedding_bias", w.unembedding_bias, 1, c.vocabulary);
  }
  // model_parameters() only takes the matrices' addresses; nothing is written through them.
  for (const NamedParameter& p : model_parameters(const_cast<TransformerWeights&>(w)))
    require_finite(p.name, *p.value);
}

MultiHeadWeights zeros_like(const MultiHeadWeights& W) {
  MultiHeadWeights z = W;
  for (arma::mat* m : {&z.W_Q, &z.W_K, &z.W_V, &z.W_O})
    m->zeros();
  for (arma::rowvec* b : {&z.b_Q, &z.b_K, &z.b_V, &z.b_O})
    b->zeros();
  return z;
}

void add_into(MultiHeadWeights& sum, const MultiHeadWeights& part) {
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

std::vector<NamedParameter> model_parameters(TransformerWeights& w) {
  std::vector<NamedParameter> list{{"embedding", &w.embedding}};
  if (w.config.learned_positions)
    list.push_back({"position_embedding", &w.position_embedding});
  for (std::size_t l = 0; l < w.blocks.size(); ++l) {
    BlockWeights& b = w.blocks[l];
    const std::string p = fmt::format("blocks.{}.", l);
    for (auto [name, value] : std::initializer_list<std::pair<const char*, arma::mat*>>{
             {"ln1.gamma", &b.ln1_gamma},
             {"ln1.beta", &b.ln1_beta},
             {"attention.W_Q", &b.attention.W_Q},
             {"attention.W_K", &b.attention.W_K},
             {"attention.W_V", &b.attention.W_V},
             {"attention.W_O", &b.attention.W_O},
             {"attention.b_Q", &b.attention.b_Q},
             {"attention.b_K", &b.attention.b_K},
             {"attention.b_V", &b.attention.b_V},
             {"attention.b_O", &b.attention.b_O},
             {"ln2.gamma", &b.ln2_gamma},
             {"ln2.beta", &b.ln2_beta},
             {"mlp.W1", &b.mlp.W1},
             {"mlp.b1", &b.mlp.b1},
             {"mlp.W2", &b.mlp.W2},
             {"mlp.b2", &b.mlp.b2}})
      list.push_back({p + name, value});
  }
  list.push_back({"lnf.gamma", &w.lnf_gamma});
  list.push_back({"lnf.beta", &w.lnf_beta});
  if (!w.config.tied_embeddings) {
    list.push_back({"unembedding", &w.unembedding});
    list.push_back({"unembedding_bias", &w.unembedding_bias});
  }
  return list;
}

arma::uword parameter_count(const TransformerConfig& c) {
  check_config(c);
  const arma::uword d = c.d_model, V = c.vocabulary, f = c.d_ff;
  const arma::uword block = 4 * d * d + 4 * d + 2 * d * f + f + d + 4 * d;
  const arma::uword output = c.tied_embeddings ? 0 : d * V + V;
  const arma::uword positions = c.learned_positions ? c.max_length * d : 0;
  return V * d + positions + c.layers * block + 2 * d + output;
}

TransformerWeights init_transformer(
    const TransformerConfig& c,
    const std::function<arma::mat(arma::uword, arma::uword)>& standard_normal) {
  check_config(c);
  const arma::uword d = c.d_model;
  TransformerWeights w;
  w.config = c;
  w.blocks.resize(c.layers);
  const auto ones = [d] {
    return arma::rowvec(d, arma::fill::ones);
  };
  const auto zeros = [](arma::uword n) {
    return arma::rowvec(n, arma::fill::zeros);
  };
  for (BlockWeights& b : w.blocks) {
    b.ln1_gamma = ones();
    b.ln1_beta = zeros(d);
    b.attention.heads = c.heads;
    b.attention.b_Q = b.attention.b_K = b.attention.b_V = b.attention.b_O = zeros(d);
    b.ln2_gamma = ones();
    b.ln2_beta = zeros(d);
    b.mlp.b1 = zeros(c.d_ff);
    b.mlp.b2 = zeros(d);
  }
  w.lnf_gamma = ones();
  w.lnf_beta = zeros(d);
  if (!c.tied_embeddings)
    w.unembedding_bias = zeros(c.vocabulary);
  // The matrices, drawn in the order of model_parameters().
  const auto draw = [&](arma::uword rows, arma::uword cols) {
    arma::mat m = standard_normal(rows, cols);
    if (m.n_rows != rows || m.n_cols != cols)
      throw ShapeError(fmt::format("init_transformer: standard_normal({}, {}) returned {}", rows,
                                   cols, shape_of(m)));
    require_finite("init_transformer: a draw of standard_normal", m);
    return m;
  };
  // Small enough, when E is also the output layer, that the first logits are near 0.
  constexpr double kSmallInit = 0.02;
  w.embedding =
      c.tied_embeddings ? arma::mat(kSmallInit * draw(c.vocabulary, d)) : draw(c.vocabulary, d);
  if (c.learned_positions)
    w.position_embedding = kSmallInit * draw(c.max_length, d);
  const auto fan_in = [&](arma::uword rows, arma::uword cols) {
    return arma::mat(draw(rows, cols) / std::sqrt(static_cast<double>(rows)));
  };
  for (BlockWeights& b : w.blocks) {
    b.attention.W_Q = fan_in(d, d);
    b.attention.W_K = fan_in(d, d);
    b.attention.W_V = fan_in(d, d);
    b.attention.W_O = fan_in(d, d);
    b.mlp.W1 = fan_in(d, c.d_ff);
    b.mlp.W2 = fan_in(c.d_ff, d);
  }
  if (!c.tied_embeddings)
    w.unembedding = kSmallInit * draw(d, c.vocabulary);
  return w;
}

PackedBatch pack_sentences(const std::vector<arma::uvec>& sentences) {
  if (sentences.empty())
    throw InputError("pack_sentences: there are no sentences");
  PackedBatch batch;
  batch.starts.set_size(sentences.size());
  std::vector<arma::uword> tokens, targets;
  for (std::size_t s = 0; s < sentences.size(); ++s) {
    const arma::uvec& t = sentences[s];
    if (t.n_elem < 2)
      throw InputError(
          fmt::format("pack_sentences: sentence {} has {} token(s); a next-token "
                      "target needs at least 2",
                      s, t.n_elem));
    batch.starts(s) = tokens.size();
    tokens.insert(tokens.end(), t.begin(), t.end() - 1);
    targets.insert(targets.end(), t.begin() + 1, t.end());
  }
  batch.tokens = arma::uvec(tokens);
  batch.targets = arma::uvec(targets);
  return batch;
}

arma::uvec positions_in_sentences(arma::uword rows, const arma::uvec& starts) {
  arma::uvec positions(rows);
  for (const Rows& r : sentence_rows(rows, starts))
    positions.subvec(r.first, r.last) = arma::regspace<arma::uvec>(0, r.count() - 1);
  return positions;
}

TransformerForward transformer_forward(const TransformerWeights& w, const arma::uvec& tokens,
                                       const arma::uvec& starts,
                                       const UniformDraws* dropout_draws) {
  const TransformerConfig& c = w.config;
  check_config(c);
  if (tokens.n_elem == 0)
    throw InputError("transformer_forward: there are no tokens");
  const arma::uvec positions = positions_in_sentences(tokens.n_elem, starts);
  for (arma::uword i = 0; i < tokens.n_elem; ++i) {
    if (tokens(i) >= c.vocabulary)
      throw InputError(
          fmt::format("transformer_forward: token {} at row {} is outside a "
                      "vocabulary of {}",
                      tokens(i), i, c.vocabulary));
    if (positions(i) >= c.max_length)
      throw InputError(
          fmt::format("transformer_forward: the sentence starting at row {} is "
                      "longer than max_length {}",
                      i - positions(i), c.max_length));
  }
  const std::vector<Rows> sentences = sentence_rows(tokens.n_elem, starts);
  check_weights(w);
  TransformerForward f;
  const bool dropping = dropout_draws != nullptr && c.dropout > 0.0;
  // Dropout while training, the identity otherwise; `keep` receives the mask.
  const auto drop = [&](arma::mat values, arma::mat& keep) {
    if (!dropping)
      return values;
    Dropout dropped = dropout(values, c.dropout, *dropout_draws);
    keep = std::move(dropped.keep);
    return std::move(dropped.y);
  };
  //! [forward]
  f.x0 = drop(w.embedding.rows(tokens) + position_rows(w, positions), f.x0_keep);  // (N × d)
  arma::mat x = f.x0;  // the residual stream
  for (const BlockWeights& b : w.blocks) {
    BlockForward& s = f.blocks.emplace_back();
    s.input = x;
    s.ln1 = layer_norm(s.input, b.ln1_gamma, b.ln1_beta);
    arma::mat attended(arma::size(x));
    for (const Rows& r : sentences) {  // each sentence attends to itself, causally
      const arma::mat a = s.ln1.y.rows(r.first, r.last);
      s.attention.push_back(multi_head_attention(a, a, a, b.attention, Mask::causal(r.count())));
      attended.rows(r.first, r.last) = s.attention.back().output;
    }
    s.middle = s.input + drop(attended, s.attention_keep);  // residual
    s.ln2 = layer_norm(s.middle, b.ln2_gamma, b.ln2_beta);
    s.mlp = feed_forward(s.ln2.y, b.mlp);
    s.output = s.middle + drop(s.mlp.y, s.mlp_keep);  // residual
    x = s.output;
  }
  f.ln_f = layer_norm(x, w.lnf_gamma, w.lnf_beta);
  f.logits = output_logits(w, f.ln_f.y);  // (N × V)
  //! [forward]
  return f;
}

TransformerWeights transformer_backward(const TransformerWeights& w, const arma::uvec& tokens,
                                        const arma::uvec& starts, const TransformerForward& f,
                                        const arma::mat& dlogits) {
  if (dlogits.n_rows != f.logits.n_rows || dlogits.n_cols != f.logits.n_cols)
    throw ShapeError(fmt::format("transformer_backward: the logits' gradient is {}, the logits {}",
                                 shape_of(dlogits), shape_of(f.logits)));
  require_finite("dlogits", dlogits);
  if (tokens.n_elem != f.x0.n_rows || f.blocks.size() != w.blocks.size())
    throw ShapeError(
        fmt::format("transformer_backward: {} tokens and {} blocks, but the forward "
                    "pass has {} rows and {} blocks",
                    tokens.n_elem, w.blocks.size(), f.x0.n_rows, f.blocks.size()));
  for (arma::uword i = 0; i < tokens.n_elem; ++i)
    if (tokens(i) >= w.embedding.n_rows)
      throw InputError(
          fmt::format("transformer_backward: token {} at row {} is outside a "
                      "vocabulary of {}",
                      tokens(i), i, w.embedding.n_rows));
  const std::vector<Rows> sentences = sentence_rows(tokens.n_elem, starts);
  for (const BlockForward& s : f.blocks)
    if (s.attention.size() != sentences.size())
      throw ShapeError(
          fmt::format("transformer_backward: {} sentences, but the forward pass "
                      "attended over {}",
                      sentences.size(), s.attention.size()));
  TransformerWeights g;
  g.config = w.config;
  g.blocks.resize(w.blocks.size());
  // Through a dropout mask, or straight through where there was none.
  const auto undrop = [](const arma::mat& gradient, const arma::mat& keep) {
    return keep.is_empty() ? gradient : arma::mat(gradient % keep);
  };
  //! [backward]
  arma::mat d_final;  // ∂L/∂LN_f(x), (N × d)
  if (w.config.tied_embeddings) {
    g.embedding = dlogits.t() * f.ln_f.y;  // z = LN_f(x) Eᵀ: E's first share of its gradient
    d_final = dlogits * w.embedding;
  } else {
    g.unembedding = f.ln_f.y.t() * dlogits;
    g.unembedding_bias = arma::sum(dlogits, 0);
    d_final = dlogits * w.unembedding.t();
  }
  const LayerNormGradients lnf = layer_norm_backward(f.ln_f, w.lnf_gamma, d_final);
  g.lnf_gamma = lnf.dgamma;
  g.lnf_beta = lnf.dbeta;
  arma::mat dx = lnf.dx;  // ∂L/∂x, flowing down the residual stream
  for (std::size_t l = w.blocks.size(); l-- > 0;) {
    const BlockWeights& b = w.blocks[l];
    const BlockForward& s = f.blocks[l];
    BlockWeights& gb = g.blocks[l];
    // x_out = u + MLP(LN2(u)): the residual passes dx straight through and the branch adds.
    const FeedForwardGradients mlp =
        feed_forward_backward(s.ln2.y, b.mlp, s.mlp, undrop(dx, s.mlp_keep));
    const LayerNormGradients ln2 = layer_norm_backward(s.ln2, b.ln2_gamma, mlp.dx);
    const arma::mat du = dx + ln2.dx;
    // u = x + MultiHead(LN1(x)) per sentence: query, key and value are all LN1(x), so their
    // gradients add; the weights' gradients add over the sentences.
    const arma::mat d_attended = undrop(du, s.attention_keep);
    arma::mat d_ln1(arma::size(du));
    MultiHeadWeights d_attention = zeros_like(b.attention);
    for (std::size_t k = 0; k < sentences.size(); ++k) {
      const Rows& r = sentences[k];
      const arma::mat a = s.ln1.y.rows(r.first, r.last);
      const MultiHeadGradients att = multi_head_backward(a, a, a, b.attention, s.attention[k],
                                                         d_attended.rows(r.first, r.last));
      d_ln1.rows(r.first, r.last) = att.d_query + att.d_key + att.d_value;
      add_into(d_attention, att.dW);
    }
    const LayerNormGradients ln1 = layer_norm_backward(s.ln1, b.ln1_gamma, d_ln1);
    dx = du + ln1.dx;
    gb = {ln1.dgamma, ln1.dbeta, d_attention, ln2.dgamma, ln2.dbeta, mlp.dW};
  }
  // x0 = E[tokens] + P[positions]: each row's gradient goes to its token's row of E and, if
  // the positions are learned, to its position's row of P.
  dx = undrop(dx, f.x0_keep);
  if (g.embedding.is_empty())
    g.embedding.zeros(w.embedding.n_rows, w.embedding.n_cols);
  for (arma::uword i = 0; i < tokens.n_elem; ++i)
    g.embedding.row(tokens(i)) += dx.row(i);
  if (w.config.learned_positions) {
    const arma::uvec positions = positions_in_sentences(tokens.n_elem, starts);
    g.position_embedding.zeros(w.position_embedding.n_rows, w.position_embedding.n_cols);
    for (arma::uword i = 0; i < tokens.n_elem; ++i)
      g.position_embedding.row(positions(i)) += dx.row(i);
  }
  //! [backward]
  return g;
}

TransformerStep transformer_step(const TransformerWeights& w, const PackedBatch& batch,
                                 const UniformDraws* dropout_draws) {
  TransformerForward f = transformer_forward(w, batch.tokens, batch.starts, dropout_draws);
  const CrossEntropy ce = cross_entropy(f.logits, batch.targets);
  TransformerWeights g = transformer_backward(w, batch.tokens, batch.starts, f, ce.dlogits);
  return {ce.loss, std::move(f.logits), std::move(g)};
}

arma::mat sentence_logits(const TransformerWeights& w, const arma::uvec& tokens) {
  if (tokens.n_elem == 0 || tokens.n_elem > w.config.max_length)
    throw InputError(fmt::format("sentence_logits: {} tokens; the model reads 1 to {}",
                                 tokens.n_elem, w.config.max_length));
  return transformer_forward(w, tokens, arma::uvec{0}).logits;
}

arma::uvec greedy_continue(const TransformerWeights& w, const arma::uvec& prompt,
                           arma::uword stop) {
  if (prompt.n_elem == 0)
    throw InputError("greedy_continue: the prompt is empty");
  arma::uvec text = prompt;
  while (text.n_elem < w.config.max_length && text(text.n_elem - 1) != stop) {
    const arma::mat logits = sentence_logits(w, text);
    const arma::uword next = logits.row(logits.n_rows - 1).index_max();
    text.resize(text.n_elem + 1);
    text(text.n_elem - 1) = next;
  }
  return text;
}

CachedDecoder::CachedDecoder(const TransformerWeights& weights) : weights_(&weights) {
  check_config(weights.config);
  if (weights.blocks.size() != weights.config.layers)
    throw ShapeError(fmt::format("CachedDecoder: {} blocks, but the config has {} layers",
                                 weights.blocks.size(), weights.config.layers));
  check_weights(weights);
  const arma::uword d_k = weights.config.d_model / weights.config.heads;
  caches_.assign(weights.blocks.size(),
                 std::vector<KVCache>(weights.config.heads, KVCache(d_k, d_k)));
}

arma::rowvec CachedDecoder::append(arma::uword token) {
  const TransformerWeights& w = *weights_;
  const TransformerConfig& c = w.config;
  if (token >= c.vocabulary)
    throw InputError(
        fmt::format("CachedDecoder: token {} is outside a vocabulary of {}", token, c.vocabulary));
  if (length_ >= c.max_length)
    throw InputError(
        fmt::format("CachedDecoder: it holds {} tokens, the model's whole context (max_length); "
                    "start a new decoder on the text's last tokens",
                    length_));
  const arma::uword d_k = c.d_model / c.heads;
  const double scale = score_scale(d_k);
  // One row's projection, X W + b.
  const auto project = [](const arma::mat& X, const arma::mat& W, const arma::rowvec& b) {
    arma::mat out = X * W;
    out.each_row() += b;
    return out;
  };
  //! [cached-step]
  arma::mat x = w.embedding.row(token) + position_rows(w, arma::uvec{length_});  // (1 × d)
  for (std::size_t l = 0; l < w.blocks.size(); ++l) {
    const BlockWeights& b = w.blocks[l];
    const MultiHeadWeights& W = b.attention;
    const arma::mat a = layer_norm(x, b.ln1_gamma, b.ln1_beta).y;
    const arma::rowvec q = project(a, W.W_Q, W.b_Q);
    const arma::rowvec k = project(a, W.W_K, W.b_K);
    const arma::rowvec v = project(a, W.W_V, W.b_V);
    arma::rowvec concat(c.d_model);
    for (arma::uword h = 0; h < c.heads; ++h) {  // head h owns columns h·d_k ... (h+1)·d_k − 1
      const arma::span head(h * d_k, (h + 1) * d_k - 1);
      KVCache& cache = caches_[l][h];
      cache.append(k.cols(head), v.cols(head));
      concat.cols(head) = cache.attend(q.cols(head), scale);
    }
    const arma::mat middle = x + project(concat, W.W_O, W.b_O);
    x = middle + feed_forward(layer_norm(middle, b.ln2_gamma, b.ln2_beta).y, b.mlp).y;
  }
  ++length_;
  return output_logits(w, layer_norm(x, w.lnf_gamma, w.lnf_beta).y);
  //! [cached-step]
}

}  // namespace attn
