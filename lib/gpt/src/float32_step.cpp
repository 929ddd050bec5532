#include "attn/gpt/float32_step.hpp"

#include "float32_weights.hpp"

#include <attn/fast/activations.hpp>
#include <attn/fast/causal_attention.hpp>
#include <attn/fast/cross_entropy.hpp>
#include <attn/fast/embedding.hpp>
#include <attn/fast/linear.hpp>
#include <attn/fast/norms.hpp>
#include <attn/fast/threads.hpp>
#include <attn/math/positions.hpp>
#include <attn/math/validate.hpp>

#include <fmt/format.h>

#include <string>
#include <vector>

namespace attn::gpt {
namespace {

using arma::fmat;
using arma::fvec;
using arma::uword;
using fast::Output;

// The model's norm, layer norm or RMSNorm (which ignores β, empty), through attn::fast's kernels.
void normalise(Norm kind, const fmat& x, const fvec& gamma, const fvec& beta,
               fast::Normalised& out) {
  switch (kind) {
    case Norm::layer_norm:
      fast::layer_norm_forward(x, gamma, beta, out);
      break;
    case Norm::rms_norm:
      fast::rms_norm_forward(x, gamma, out);
      break;
  }
}

// Its backward pass: dx += ∂L/∂x, and dγ, dβ (left empty with RMSNorm).
void normalise_backward(Norm kind, const fast::Normalised& f, const fvec& gamma, const fmat& dy,
                        fmat& dx, fvec& dgamma, fvec& dbeta) {
  switch (kind) {
    case Norm::layer_norm:
      fast::layer_norm_backward(f, gamma, dy, dx, dgamma, dbeta);
      break;
    case Norm::rms_norm:
      fast::rms_norm_backward(f, gamma, dy, dx, dgamma);
      dbeta.reset();
      break;
  }
}

// What one block keeps from its forward pass for its backward pass.
struct BlockActivations {
  fast::Normalised ln1;
  fmat qkv;                  // (d + 2 d_kv × N): Q, K and V, one column per token (RoPE'd)
  std::vector<float> probs;  // per sentence and head, its (n × n) weights, one column per query
  fmat attended;             // (d × N): the heads' outputs side by side
  fast::Normalised ln2;
  fmat pre;  // GELU: (d_ff × N), W1ᵀ LN2(u) + b1; SwiGLU: (2 d_ff × N), gate above up
  fast::GeluCache gelu;      // GELU's values, or
  fast::SwiGluCache swiglu;  // SwiGLU's
  fmat hidden;               // (d_ff × N): gelu(pre), or silu(gate) ⊙ up: what W2 (W_down) reads
};

}  // namespace

struct Float32Step::Work {
  TransformerConfig config;
  uword d = 0, heads = 0, vocabulary = 0, max_length = 0;
  fast::Heads layout;  // h query heads, g key/value heads of d_k, the window

  // The model, rounded to float.
  fmat embedding;          // (V × d): E, the output layer
  fmat embedding_columns;  // (d × V): Eᵀ, for the embedding's look-ups
  fmat position_rows;      // (max_length × d): P, when learned
  fmat position_columns;   // (d × max_length): Pᵀ, learned or sinusoidal; empty without
  fast::RopeTables rope;  // (d_k/2 × max_length): cos p θᵢ and sin p θᵢ, with RoPE; empty without
  std::vector<float32::Block> blocks;
  fvec lnf_gamma, lnf_beta;

  // Their gradients.
  fmat d_embedding, d_embedding_columns, d_position_columns;
  std::vector<float32::Block> d_blocks;
  fvec d_lnf_gamma, d_lnf_beta;

  // The batch and what its forward pass keeps.
  uword rows = 0;
  arma::uvec positions;
  std::vector<fast::Sentence> sentences;  // each one's columns, and where its weights are kept
  fmat stream;                            // (d × N): the residual stream, updated in place
  std::vector<BlockActivations> activations;
  fast::Normalised lnf;
  fmat logits;    // (V × N); after the loss e^(z − max z), after the backward pass ∂L/∂z
  fvec exp_sums;  // (N): Σ e^(z − max z) per row
  arma::vec row_losses;  // (N): −ln p(target) per row

  // The backward pass's working matrices.
  fmat d_stream, d_branch, d_attended, d_qkv, d_hidden, d_pre, d_final;
  std::vector<std::vector<float>> d_scores;  // per thread, one (n × n) block

  TransformerStep step;  // what run() returns: its loss and its gradients in double

  explicit Work(const TransformerConfig& c)
      : config(c),
        d(c.d_model),
        heads(c.heads),
        vocabulary(c.vocabulary),
        max_length(c.max_length),
        layout{.heads = c.heads,
               .kv_heads = key_value_heads(c),
               .d_head = c.d_model / c.heads,
               .window = c.sliding_window},
        activations(c.layers) {}

  void load(const TransformerWeights& w);
  void prepare(const PackedBatch& batch);
  void forward(const PackedBatch& batch);
  double cross_entropy(const PackedBatch& batch);
  void backward(const PackedBatch& batch);
  void widen_gradients(TransformerWeights& g) const;
};

void Float32Step::Work::load(const TransformerWeights& w) {
  check_weights(w);
  if (w.config != config)
    throw math::ShapeError(
        fmt::format("Float32Step: the weights are of another model than this step was made for: {}",
                    difference(w.config, config)));
  float32::check_blocks(w);
  float32::round_into(embedding, w.embedding);
  embedding_columns = embedding.t();
  if (learns_positions(config.positions)) {
    float32::round_into(position_rows, w.position_embedding);
    position_columns = position_rows.t();
  }
  blocks.resize(w.blocks.size());
  for (uword l = 0; l < blocks.size(); ++l)
    float32::round_into(blocks[l], w.blocks[l], config);
  float32::round_into(lnf_gamma, w.lnf_gamma);
  float32::round_into(lnf_beta, w.lnf_beta);
}

void Float32Step::Work::prepare(const PackedBatch& batch) {
  rows = batch.tokens.n_elem;
  if (rows == 0)
    throw math::InputError("Float32Step: the batch has no tokens");
  if (batch.targets.n_elem != rows)
    throw math::ShapeError(
        fmt::format("Float32Step: {} tokens but {} targets", rows, batch.targets.n_elem));
  positions = positions_in_sentences(rows, batch.starts);
  sentences.clear();
  for (const SequenceRows& s : sequence_rows(rows, batch.starts))
    sentences.push_back({.first = s.first, .length = s.count()});
  for (uword i = 0; i < rows; ++i) {
    if (batch.tokens(i) >= vocabulary || batch.targets(i) >= vocabulary)
      throw math::InputError(
          fmt::format("Float32Step: row {} holds token {} and target {}; the vocabulary has {}", i,
                      batch.tokens(i), batch.targets(i), vocabulary));
    if (positions(i) >= max_length)
      throw math::InputError(
          fmt::format("Float32Step: the sentence starting at row {} is longer than max_length {}",
                      i - positions(i), max_length));
  }
  const uword weights = fast::place_weights(sentences, heads);
  for (BlockActivations& a : activations)
    a.probs.resize(weights);
}

void Float32Step::Work::forward(const PackedBatch& batch) {
  fast::embedding_forward(embedding_columns, position_columns, batch.tokens, positions, stream);
  const Norm norm = config.norm;
  const bool rotary = rotates(config.positions);
  const uword turned = layout.heads + layout.kv_heads;  // RoPE turns Q's and K's heads
  //! [float32-block]
  for (uword l = 0; l < blocks.size(); ++l) {
    const float32::Block& b = blocks[l];
    BlockActivations& a = activations[l];
    normalise(norm, stream, b.ln1_gamma, b.ln1_beta, a.ln1);
    fast::linear_forward(b.W_QKV, b.b_QKV, a.ln1.y, a.qkv);  // [Q K V] = W_QKVᵀ Norm1(x) + b_QKV
    if (rotary)
      fast::rope_forward(a.qkv, turned, rope, positions);
    fast::attention_forward(a.qkv, sentences, layout, a.probs, a.attended);
    fast::linear_forward(b.W_O, b.b_O, a.attended, stream, Output::add);  // u = x + W_Oᵀ O + b_O
    if (!has_mlp(config.mlp))
      continue;  // attention alone: x' = u
    normalise(norm, stream, b.ln2_gamma, b.ln2_beta, a.ln2);
    fast::linear_forward(b.W1, b.b1, a.ln2.y, a.pre);  // SwiGLU: gate and up, no biases
    switch (config.mlp) {
      case Mlp::gelu:
        fast::gelu_forward(a.pre, a.gelu, a.hidden);
        break;
      case Mlp::swiglu:
        fast::swiglu_forward(a.pre, a.swiglu, a.hidden);
        break;
      case Mlp::none:  // left the loop above
        break;
    }
    fast::linear_forward(b.W2, b.b2, a.hidden, stream, Output::add);  // x' = u + W2ᵀ hidden + b2
  }
  normalise(norm, stream, lnf_gamma, lnf_beta, lnf);
  logits.set_size(vocabulary, rows);
  fast::multiply_shared({}, embedding, lnf.y, logits);  // z = E Norm_f(x): (V × d)(d × N)
  //! [float32-block]
}

// Each row's cross-entropy, −ln softmax(z)_target, into row_losses, and their mean.
double Float32Step::Work::cross_entropy(const PackedBatch& batch) {
  fast::cross_entropy_forward(logits, batch.targets, exp_sums, row_losses);
  return arma::mean(row_losses);  // summed in one order, whatever the threads
}

void Float32Step::Work::backward(const PackedBatch& batch) {
  fast::cross_entropy_backward(logits, exp_sums, batch.targets);  // ∂L/∂z, in place
  const fmat& dlogits = logits;
  const Norm norm = config.norm;
  const bool rotary = rotates(config.positions);
  const bool mlp_biases = has_biases(config.mlp);
  const bool attention_biases = config.attention_biases;
  const uword turned = layout.heads + layout.kv_heads;
  d_blocks.resize(blocks.size());
  // z = E y is the tied output layer: E (V × d) as it is, not a linear layer's Wᵀ.
  d_embedding.set_size(vocabulary, d);
  fast::multiply_shared({.transpose_b = true}, dlogits, lnf.y, d_embedding);  // dE = dz yᵀ
  d_final.set_size(d, rows);
  fast::multiply_shared({.transpose_a = true}, embedding, dlogits, d_final);  // dy = Eᵀ dz
  d_stream.zeros(d, rows);
  normalise_backward(norm, lnf, lnf_gamma, d_final, d_stream, d_lnf_gamma, d_lnf_beta);
  for (uword l = blocks.size(); l-- > 0;) {
    const float32::Block& b = blocks[l];
    float32::Block& g = d_blocks[l];
    const BlockActivations& a = activations[l];
    // x' = u + W2ᵀ hidden(W1ᵀ Norm2(u) + b1) + b2 (no biases with SwiGLU; x' = u with no MLP):
    // d_stream holds ∂L/∂x'.
    if (has_mlp(config.mlp)) {
      fast::linear_backward(b.W2, a.hidden, d_stream, g.W2, mlp_biases ? &g.b2 : nullptr, d_hidden);
      const fmat* d_in = nullptr;  // ∂L/∂(what W1 made)
      switch (config.mlp) {
        case Mlp::gelu:
          fast::gelu_backward(a.pre, a.gelu, d_hidden);  // in place: ∂L/∂h
          d_in = &d_hidden;
          break;
        case Mlp::swiglu:
          fast::swiglu_backward(a.pre, a.swiglu, d_hidden, d_pre);  // ∂L/∂(gate, up)
          d_in = &d_pre;
          break;
        case Mlp::none:  // not in this branch
          break;
      }
      fast::linear_backward(b.W1, a.ln2.y, *d_in, g.W1, mlp_biases ? &g.b1 : nullptr, d_branch);
      normalise_backward(norm, a.ln2, b.ln2_gamma, d_branch, d_stream, g.ln2_gamma, g.ln2_beta);
    }
    // u = x + W_Oᵀ attention(W_QKVᵀ Norm1(x) + b_QKV) + b_O: d_stream now holds ∂L/∂u.
    fast::linear_backward(b.W_O, a.attended, d_stream, g.W_O, attention_biases ? &g.b_O : nullptr,
                          d_attended);
    fast::attention_backward(a.qkv, sentences, layout, a.probs, d_attended, d_qkv, d_scores);
    if (rotary)
      fast::rope_backward(d_qkv, turned, rope, positions);  // the turned Q and K, turned back
    fast::linear_backward(b.W_QKV, a.ln1.y, d_qkv, g.W_QKV, attention_biases ? &g.b_QKV : nullptr,
                          d_branch);
    normalise_backward(norm, a.ln1, b.ln1_gamma, d_branch, d_stream, g.ln1_gamma, g.ln1_beta);
  }
  // x⁽⁰⁾ᵢ = E_tᵢ + P_pᵢ; E is also the output layer, whose gradient dE already holds.
  fast::embedding_backward(embedding_columns, position_columns, batch.tokens, positions, d_stream,
                           d_embedding_columns, d_position_columns);
  d_embedding += d_embedding_columns.t();
}

void Float32Step::Work::widen_gradients(TransformerWeights& g) const {
  g.config = config;
  float32::widen_into(g.embedding, d_embedding);
  if (learns_positions(config.positions))
    float32::widen_into(g.position_embedding, fmat(d_position_columns.t()));
  g.blocks.resize(d_blocks.size());
  for (uword l = 0; l < d_blocks.size(); ++l)
    float32::widen_into(g.blocks[l], d_blocks[l], config);
  float32::widen_into(g.lnf_gamma, d_lnf_gamma);
  float32::widen_into(g.lnf_beta, d_lnf_beta);  // empty with RMSNorm
}

std::string Float32Step::refusal(const TransformerConfig& config) {
  if (!config.tied_embeddings)
    return "tied_embeddings false: the model's output layer is not tied to its embedding; the "
           "float32 step computes tied models only (transformer_step() computes both)";
  if (config.dropout != 0.0)
    return fmt::format("dropout {}: the float32 step computes no dropout (transformer_step() does)",
                       config.dropout);
  return "";
}

bool Float32Step::supports(const TransformerConfig& config) {
  return refusal(config).empty();
}

Float32Step::Float32Step(const TransformerConfig& config) {
  check_config(config);
  if (const std::string why = refusal(config); !why.empty())
    throw math::InputError("Float32Step: " + why);
  work_ = std::make_unique<Work>(config);
  switch (config.positions) {
    case Positions::sinusoidal:
      work_->position_columns =
          arma::conv_to<fmat>::from(math::sinusoidal_positions(config.max_length, config.d_model))
              .t();
      break;
    case Positions::rotary:
      work_->rope = fast::rope_tables(work_->layout.d_head, config.max_length);
      break;
    case Positions::learned:  // rounded from the weights at each step
    case Positions::none:
      break;
  }
}

Float32Step::~Float32Step() = default;
Float32Step::Float32Step(Float32Step&&) noexcept = default;
Float32Step& Float32Step::operator=(Float32Step&&) noexcept = default;

const TransformerStep& Float32Step::run(const TransformerWeights& weights,
                                        const PackedBatch& batch) {
  const fast::OneThread blas_on_one_thread(fast::Held::blas);
  work_->load(weights);
  work_->prepare(batch);
  work_->forward(batch);
  work_->step.loss = work_->cross_entropy(batch);
  work_->backward(batch);
  work_->widen_gradients(work_->step.gradients);
  return work_->step;
}

double Float32Step::loss(const TransformerWeights& weights, const PackedBatch& batch) {
  const fast::OneThread blas_on_one_thread(fast::Held::blas);
  work_->load(weights);
  work_->prepare(batch);
  work_->forward(batch);
  return work_->cross_entropy(batch);
}

arma::vec Float32Step::row_losses(const TransformerWeights& weights, const PackedBatch& batch) {
  loss(weights, batch);
  return work_->row_losses;
}

}  // namespace attn::gpt
