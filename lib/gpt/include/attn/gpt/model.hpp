/// \file
/// \brief The GPT of chapters 10 to 13, a decoder-only transformer: its sizes and choices, its
///        weights and the typed list of its parameters. Its passes are in forward.hpp, one
///        block's in block.hpp.
///
/// For input tokens \f$t_0 \dots t_{n-1}\f$ at positions \f$p_0 \dots p_{n-1}\f$:
///
/// \f[ x^{(0)}_i = E_{t_i} + P_{p_i} \f]
/// \f[ u = x^{(l)} + \mathrm{MultiHead}\big(\mathrm{Norm}_1(x^{(l)})\big), \qquad
///     x^{(l+1)} = u + \mathrm{MLP}\big(\mathrm{Norm}_2(u)\big) \f]
/// \f[ z = \mathrm{Norm}_f(x^{(L)})\, W_U + b_U
///     \qquad\text{or, with tied embeddings,}\qquad z = \mathrm{Norm}_f(x^{(L)})\, E^\top \f]
///
/// \f$E\f$ is the learned embedding `(V × d)`; \f$P\f$ the positions: chapter 07's sinusoidal
/// table (fixed), a learned table `(max_length × d)`, or nothing (with no positions, or with
/// rotary ones, which act inside attention instead). MultiHead is the causal attention of
/// chapter 08 (with biases, or without), MLP the GELU network of layers.hpp, Norm layer norm:
/// GPT-2's block, the "pre-norm" arrangement, in which each branch reads a normalised copy of the
/// residual stream and adds its result back. Row \f$i\f$ of the logits \f$z\f$ scores every token
/// of the vocabulary as the token after \f$t_i\f$. With tied embeddings (GPT-2's choice, chapter
/// 11) the output layer is the embedding read backwards: a token's logit is the dot product of the
/// final state with that token's own embedding row, and the model has no \f$W_U, b_U\f$.
///
/// Today's models changed this block in a few ways, each a choice of TransformerConfig:
/// rotary positions (RoPE) inside attention, fewer key/value heads
/// than query heads (grouped-query and multi-query attention), a sliding window of \f$w\f$
/// keys, RMSNorm for layer norm, the SwiGLU MLP for GELU's and attention without biases.
///
/// Training may drop out (chapter 11): with a rate \f$p > 0\f$ and a source of uniform draws,
/// the forward pass applies dropout() to \f$x^{(0)}\f$ and to each branch's output before it is
/// added to the residual stream (GPT-2's embedding and residual dropout; GPT-2 also drops the
/// attention weights, which this model does not).
#pragma once

#include <attn/math/layers.hpp>
#include <attn/math/multi_head.hpp>

#include <armadillo>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

/// \brief The GPT layer: the model of chapters 10 to 13 (GPT-2's block and today's variants),
///        its training and its decoding, built on the readable math of attn::math (and
///        attn::text for real text, attn::numpy for the random stream).
namespace attn::gpt {

/// \brief Where a model learns word order from.
enum class Positions {
  none,        ///< nothing: only the causal mask tells positions apart ("NoPE").
  sinusoidal,  ///< chapter 07's fixed table \f$P\f$ added to the embeddings.
  learned,     ///< a learned table \f$P\f$ `(max_length × d)` added to the embeddings (GPT-2).
  rotary,      ///< RoPE: every head's queries and keys turned inside attention (Llama).
};

/// \brief The normalisation before each branch and at the end.
enum class Norm {
  layer_norm,  ///< \f$\gamma \odot (x - \mu)/\sigma + \beta\f$ (GPT-2).
  rms_norm,    ///< \f$\gamma \odot x / \mathrm{rms}(x)\f$: no centring, no \f$\beta\f$ (Llama).
};

/// \brief The MLP of each block.
enum class Mlp {
  gelu,    ///< \f$\mathrm{gelu}(x W_1 + b_1) W_2 + b_2\f$ (GPT-2).
  swiglu,  ///< \f$(\mathrm{silu}(x W_{\text{gate}}) \odot x W_{\text{up}}) W_{\text{down}}\f$
           ///< (Llama).
  none,    ///< no MLP and no second norm: the block is attention alone, \f$x' = u\f$ (the
           ///< attention-only models of Elhage et al., 2021); d_ff must be 0.
};

/// \brief The sizes of a model and its choices: everything that fixes the shapes of its weights
///        and what its passes compute. The defaults are chapter 10's. GPT-2's block and a block
///        in the style of Llama (rotary positions, grouped-query attention, RMSNorm, SwiGLU,
///        attention without biases) are two settings of `positions`, `kv_heads`, `norm`, `mlp`
///        and `attention_biases`; `sliding_window` adds Mistral 7B's sliding window of \f$w\f$
///        keys.
///
/// A configuration is one description: two are equal when every field is (the comparison is
/// C++'s defaulted one, so a new field takes part without being listed), and describe() prints
/// every field (a structured binding of the whole struct, so a field it forgets stops the
/// build). Checkpoints' fingerprints, the float32 step's refusals and the errors all print it.
///
/// Each choice is read in one of two ways, both exhaustive: a `switch` with a case for every
/// value where the computation differs (normalise(), the MLP, the embedding), and otherwise a
/// property of the choice, itself such a `switch`: learns_positions(), rotates(), has_shift(),
/// has_biases(). The build warns of a `switch` that misses a value and treats warnings as
/// errors, so a value added to an enum stops the build at every place that must decide it.
struct TransformerConfig {
  arma::uword vocabulary = 0;                   ///< \f$V\f$, the number of words.
  arma::uword d_model = 0;                      ///< \f$d\f$, the width of the residual stream.
  arma::uword heads = 1;                        ///< \f$h\f$, dividing \f$d\f$.
  arma::uword layers = 1;                       ///< \f$L\f$, the number of blocks.
  arma::uword d_ff = 0;                         ///< the MLP's hidden width; 0 with Mlp::none.
  arma::uword max_length = 0;                   ///< the longest input; positions 0 to this − 1.
  Positions positions = Positions::sinusoidal;  ///< where word order comes from.
  bool tied_embeddings = false;  ///< \f$z = \mathrm{Norm}_f(x) E^\top\f$: no \f$W_U, b_U\f$.
  double dropout = 0.0;          ///< \f$p \in [0, 1)\f$, applied only when training.
  arma::uword kv_heads = 0;      ///< \f$g\f$ key/value heads, dividing \f$h\f$; 0 means \f$h\f$,
                                 ///< 1 is multi-query attention (attn::math::MultiHeadWeights).
  /// \f$w\f$: each token attends to itself and the \f$w - 1\f$ tokens before it; 0: all.
  arma::uword sliding_window = 0;
  Norm norm = Norm::layer_norm;  ///< the normalisation.
  Mlp mlp = Mlp::gelu;           ///< the MLP.
  bool attention_biases = true;  ///< \f$b_Q, b_K, b_V, b_O\f$ (GPT-2); `false`: none, as
                                 ///< in Llama, Mistral and PyTorch's `nn.Linear(..., bias=False)`.
  /// \brief Equal when every field is. \return whether they are.
  bool operator==(const TransformerConfig&) const = default;
};

/// \brief The name of a choice of positions, as the enum spells it (`"rotary"`).
/// \param positions the choice. \return its name.
std::string_view to_string(Positions positions);
/// \brief The name of a choice of norm (`"layer_norm"`, `"rms_norm"`).
/// \param norm the choice. \return its name.
std::string_view to_string(Norm norm);
/// \brief The name of a choice of MLP (`"gelu"`, `"swiglu"`).
/// \param mlp the choice. \return its name.
std::string_view to_string(Mlp mlp);

/// \brief Whether the positions are a table the model learns, \f$P\f$ `(max_length × d)`.
/// \param positions the choice. \return true for Positions::learned.
bool learns_positions(Positions positions);
/// \brief Whether the positions act inside attention, by turning queries and keys.
/// \param positions the choice. \return true for Positions::rotary.
bool rotates(Positions positions);
/// \brief Whether the norm has a shift \f$\beta\f$ as well as a gain \f$\gamma\f$.
/// \param norm the choice. \return true for Norm::layer_norm.
bool has_shift(Norm norm);
/// \brief Whether the MLP's layers have biases. \param mlp the choice.
/// \return true for Mlp::gelu.
bool has_biases(Mlp mlp);
/// \brief Whether the block has an MLP half (and its norm) at all. \param mlp the choice.
/// \return false for Mlp::none.
bool has_mlp(Mlp mlp);

/// \brief A configuration's printed form: one line per field, its name and its value
///        (`"sliding_window 16"`), in the struct's order.
/// \param config the sizes and choices. \return the lines, each ended by a newline.
std::string describe(const TransformerConfig& config);

/// \brief Where two configurations differ: the first line of describe() that does, both ways.
/// \param have,want the two.
/// \return `"sliding_window 16, not sliding_window 0"`, or empty when they are equal.
std::string difference(const TransformerConfig& have, const TransformerConfig& want);

/// \brief The number of key/value heads of a model: TransformerConfig::kv_heads, or
///        \f$h\f$ where it is 0. \param config the model's sizes. \return \f$g\f$.
arma::uword key_value_heads(const TransformerConfig& config);

/// \brief One block's weights. Which of them a block has depends on its config's choices: a
///        weight the config does not use is left empty.
struct BlockWeights {
  arma::rowvec ln1_gamma;            ///< `(1 × d)`: the norm before attention.
  arma::rowvec ln1_beta;             ///< `(1 × d)`; empty with RMSNorm.
  math::MultiHeadWeights attention;  ///< `W_Q, W_O: (d × d)`, `W_K, W_V: (d × g·d_k)`, biases
                                     ///< (empty without TransformerConfig::attention_biases).
  arma::rowvec ln2_gamma;            ///< `(1 × d)`: the norm before the MLP.
  arma::rowvec ln2_beta;             ///< `(1 × d)`; empty with RMSNorm.
  math::FeedForwardWeights mlp;      ///< GELU: `W1: (d × d_ff)`, `W2: (d_ff × d)`, biases.
  math::SwiGluWeights swiglu;        ///< SwiGLU: `W_gate, W_up: (d × d_ff)`, `W_down`.
};

/// \brief All of a model's weights. The same type holds their gradients.
struct TransformerWeights {
  TransformerConfig config;          ///< the sizes.
  arma::mat embedding;               ///< `E: (V × d)`, one row per word.
  arma::mat position_embedding;      ///< `P: (max_length × d)` if learned, else empty.
  std::vector<BlockWeights> blocks;  ///< \f$L\f$ blocks, the first applied first.
  arma::rowvec lnf_gamma;            ///< `(1 × d)`: the final norm.
  arma::rowvec lnf_beta;             ///< `(1 × d)`; empty with RMSNorm.
  arma::mat unembedding;             ///< `W_U: (d × V)`, empty with tied embeddings.
  arma::rowvec unembedding_bias;     ///< `b_U: (1 × V)`, empty with tied embeddings.
};

/// \brief Checks a model's sizes.
/// \param config the sizes.
/// \throws InputError if a choice is outside its enum, a size is 0 (d_ff: 0 exactly when
///         there is no MLP), \f$d\f$ is odd with
///         sinusoidal positions, \f$d_k\f$ is odd with rotary ones, \f$h \nmid d\f$,
///         \f$g \nmid h\f$ or the dropout rate is outside [0, 1).
void check_config(const TransformerConfig& config);

/// \brief Checks a model's weights against its sizes: the number of blocks, the embedding's,
///        positions' and output layer's shapes, the attention's biases present or absent as
///        the config says (the blocks' other inner shapes are checked by the layers that use
///        them), and that every weight is finite.
/// \param weights the model.
/// \throws InputError as check_config() does, or naming a weight that holds a NaN or an
///         infinity as parameters() names it (`blocks.0.attention.W_Q`).
/// \throws ShapeError naming a weight whose shape is not the one its config gives it.
void check_weights(const TransformerWeights& weights);

/// \brief What a parameter is in the model, which decides how it is trained.
enum class Role {
  token_embedding,     ///< \f$E\f$ (also the output layer when tied).
  position_embedding,  ///< \f$P\f$, when learned.
  norm_gain,           ///< a norm's \f$\gamma\f$.
  norm_shift,          ///< a layer norm's \f$\beta\f$.
  block_matrix,        ///< a matrix inside a block: \f$W_Q, W_K, W_V, W_O\f$ and the MLP's.
  block_bias,          ///< a bias inside a block.
  unembedding,         ///< \f$W_U\f$, without tied embeddings.
  unembedding_bias,    ///< \f$b_U\f$, without tied embeddings.
};

/// \brief Whether AdamW's weight decay applies to a parameter of this role: to the matrices
///        inside the blocks only. Biases and norms are not decayed (GPT-1's, minGPT's and
///        nanoGPT's practice: decay pulls a gain towards 0, not towards its natural 1). Nor are
///        the embeddings, positions and an untied output layer: decay shrinks every row of the
///        embedding by the same fraction each step, and the rows of rare tokens, which few
///        gradients pull back, drift towards 0. Others choose otherwise: nanoGPT decays every
///        matrix (`p.dim() >= 2`: the token and position embeddings, its tied output layer
///        among them); minGPT spares the embeddings but decays its untied output layer.
/// \param role what the parameter is. \return whether it decays.
constexpr bool decays(Role role) {
  return role == Role::block_matrix;
}

/// \brief One learned matrix of a model: its name (what PyTorch's `named_parameters()` would
///        call it, `blocks.0.attention.W_Q`), its role, and where it is.
/// \tparam Matrix `arma::mat` to change it, `const arma::mat` to read it.
template <typename Matrix>
struct ParameterOf {
  std::string name;  ///< for messages, checkpoints and matching a fixture.
  Role role;         ///< what it is.
  Matrix* value;     ///< into the TransformerWeights it was taken from.
  /// \brief Whether weight decay applies to it (gpt::decays()). \return the flag.
  [[nodiscard]] bool decays() const { return gpt::decays(role); }
};
using Parameter = ParameterOf<arma::mat>;             ///< a parameter to change.
using ConstParameter = ParameterOf<const arma::mat>;  ///< a parameter to read.

/// \brief Every learned matrix of \p weights, in a fixed order: the embedding, the learned
///        positions (if learned), then per block ln1 (gamma, and beta unless RMSNorm), W_Q, W_K,
///        W_V, W_O, b_Q, b_K, b_V, b_O (unless the attention has no biases), ln2, then W1, b1, W2,
///        b2 (GELU) or W_gate, W_up, W_down (SwiGLU); then the final norm, and \f$W_U\f$, \f$b_U\f$
///        unless the embeddings are tied.
/// \param weights the model (or a gradient of it). \return pointers into \p weights.
std::vector<Parameter> parameters(TransformerWeights& weights);

/// \brief The same list, read-only. \param weights the model. \return pointers into it.
std::vector<ConstParameter> parameters(const TransformerWeights& weights);

/// \brief One flag per parameter, in the order of parameters(): whether it decays (decays()).
/// \param weights the model. \return the flags AdamW takes.
std::vector<bool> decay_flags(const TransformerWeights& weights);

/// \brief The number of learned numbers: \f$Vd + L(A + n + M) + n\f$, plus \f$dV + V\f$
///        unless the embeddings are tied, plus \f$d \cdot \text{max\_length}\f$ if the
///        positions are learned. Attention has \f$A = 2d^2 + 2d\,g\,d_k + 2d + 2g\,d_k\f$
///        (\f$4d^2 + 4d\f$ when \f$g = h\f$), or \f$2d^2 + 2d\,g\,d_k\f$ without biases;
///        a norm \f$n = 2d\f$ (layer norm) or \f$d\f$ (RMSNorm); the MLP with its norm
///        \f$M = 2d\,d_{ff} + d_{ff} + d + n\f$ (GELU), \f$3d\,d_{ff} + n\f$ (SwiGLU) or 0
///        (none).
/// \param config the sizes. \return the count.
/// \throws InputError as check_config() does.
arma::uword parameter_count(const TransformerConfig& config);

/// The standard deviation init_transformer() draws the output layer, and with tied embeddings
/// the embedding and learned positions, from: small, so that the first logits are near 0.
inline constexpr double kSmallInitStd = 0.02;

/// \brief A new model, drawn from \p standard_normal in the order of parameters():
///        \f$E\f$ from \f$N(0, 1)\f$; every other matrix from \f$N(0, 1/\text{fan-in})\f$,
///        except \f$W_U\f$ from \f$N(0, 0.02^2)\f$ so that the first logits are near 0 and the
///        first loss near \f$\ln V\f$; biases 0; norms' gamma 1 and beta 0. With tied
///        embeddings \f$E\f$ is the output layer too, so it is drawn from \f$N(0, 0.02^2)\f$
///        for the same reason; learned positions are drawn from \f$N(0, 0.02^2)\f$ as well.
/// \param config the sizes.
/// \param standard_normal returns a `(rows × cols)` matrix of \f$N(0, 1)\f$ draws (the book
///        passes numpy's `default_rng(seed).normal(size=(rows, cols))`).
/// \return the weights.
/// \throws InputError as check_config() does, or if a draw holds a NaN or an infinity.
/// \throws ShapeError if \p standard_normal returns a matrix of another shape than asked.
TransformerWeights init_transformer(
    const TransformerConfig& config,
    const std::function<arma::mat(arma::uword, arma::uword)>& standard_normal);

/// \brief How many of a text's last tokens a model keeps in view when the text no longer fits
///        its context: \f$\max(\lfloor \text{max\_length}/2 \rfloor, 1)\f$. The book's one rule for
///        text longer than the context: it is read in windows of max_length tokens, each new
///        window keeping the last half of the text before it, so that once the first window has
///        filled, every later token is predicted from at least half a context. Scoring a text
///        (bits_per_byte(): windows start every kept_context() tokens) and continuing one
///        (continue_text(): a full window restarts on the text's last kept_context() tokens,
///        the token just chosen among them) both follow it.
/// \param config the model's sizes. \return the tokens kept.
arma::uword kept_context(const TransformerConfig& config);

}  // namespace attn::gpt
