/// \file
/// \brief Multi-head attention, computed as PyTorch's `nn.MultiheadAttention` computes it, and
///        its grouped-query and rotary variants, as `F.scaled_dot_product_attention` does.
///
/// \f$h\f$ heads of width \f$d_k = d_{\text{model}} / h\f$. Head \f$k\f$ uses columns
/// \f$k d_k \dots (k+1) d_k - 1\f$ of \f$W_Q\f$, \f$W_K\f$, \f$W_V\f$ (each
/// \f$d_{\text{model}} \times d_{\text{model}}\f$ when every head has its own keys and values)
/// and writes its output into the same columns
/// of the concatenation, which \f$W_O\f$ projects back:
///
/// \f[ \mathrm{head}_k = \mathrm{softmax}\!\Big(\frac{Q_k K_k^\top}{\sqrt{d_k}}\Big) V_k,\qquad
///     \mathrm{MultiHead} = [\mathrm{head}_1, \dots, \mathrm{head}_h]\, W_O + b_O \f]
///
/// with \f$Q = X_q W_Q + b_Q\f$ and so on. PyTorch stores the transposes: its
/// `in_proj_weight` is \f$[W_Q^\top; W_K^\top; W_V^\top]\f$ stacked in that order, `q, k, v`,
/// into a \f$(3 d_{\text{model}} \times d_{\text{model}})\f$ matrix, and `out_proj.weight` is
/// \f$W_O^\top\f$.
///
/// Two changes of today's models are options of the same layer:
/// - **Grouped-query attention** (Ainslie et al., 2023): \f$g\f$ key/value heads, \f$g\f$
///   dividing \f$h\f$, so \f$W_K\f$ and \f$W_V\f$ are \f$(d_{\text{model}} \times g\,d_k)\f$
///   and query head \f$k\f$ reads key/value head \f$\lfloor k / (h/g) \rfloor\f$: each group of
///   \f$h/g\f$ neighbouring query heads shares one. \f$g = h\f$ is the layer above; \f$g = 1\f$
///   is multi-query attention (Shazeer, 2019). `F.scaled_dot_product_attention(...,
///   enable_gqa=True)` pairs the heads the same way (it repeats each key/value head \f$h/g\f$
///   times, `repeat_interleave`).
/// - **Rotary positions** (RoPE, chapter 07): each head's queries and keys are turned by
///   rotary() at their positions before the scores. With both, and \f$j = \lfloor k/(h/g)
///   \rfloor\f$ the key/value head of query head \f$k\f$,
///   \f[ \mathrm{head}_k = \mathrm{softmax}\!\Big(\frac{\mathrm{rope}(Q_k)\,
///       \mathrm{rope}(K_j)^\top}{\sqrt{d_k}}\Big) V_j, \f]
///   a mask, if there is one, leaving out the keys it blocks.
#pragma once

#include "attn/math/attention.hpp"
#include "attn/math/mask.hpp"
#include "attn/math/positions.hpp"

#include <armadillo>

#include <optional>
#include <vector>

namespace attn::math {

/// \brief The weights of one multi-head attention layer.
struct MultiHeadWeights {
  arma::uword heads = 1;     ///< \f$h\f$; must divide \f$d_{\text{model}}\f$.
  arma::uword kv_heads = 0;  ///< \f$g\f$, dividing \f$h\f$; 0 means \f$g = h\f$.
  arma::mat W_Q;             ///< `(d_model × d_model)`: the query heads side by side.
  arma::mat W_K;             ///< `(d_model × g·d_k)`: the key/value heads side by side.
  arma::mat W_V;             ///< `(d_model × g·d_k)`.
  arma::mat W_O;             ///< `(d_model × d_model)`: the output projection.
  arma::rowvec b_Q = {};     ///< `(1 × d_model)`, or empty for no bias (all four or none).
  arma::rowvec b_K = {};     ///< `(1 × g·d_k)` or empty.
  arma::rowvec b_V = {};     ///< `(1 × g·d_k)` or empty.
  arma::rowvec b_O = {};     ///< `(1 × d_model)` or empty.
};

/// \brief The number of key/value heads \f$g\f$ of a layer: MultiHeadWeights::kv_heads, or
///        \f$h\f$ where it is 0. \param W the weights. \return \f$g\f$.
/// \throws InputError if \f$g\f$ does not divide \f$h\f$.
arma::uword key_value_heads(const MultiHeadWeights& W);

/// \brief Where the rows of a multi-head pass are, for rotary positions: query row \f$i\f$ is
///        turned by rotary() at `queries(i)`, key row \f$j\f$ at `keys(j)`.
struct RotaryPositions {
  arma::vec queries;                                ///< `(n)`: one position per query row.
  arma::vec keys;                                   ///< `(m)`: one position per key row.
  RotaryLayout layout = RotaryLayout::interleaved;  ///< which columns of a head turn together.
  double base = 10000.0;                            ///< \f$b\f$ of rotary_frequencies().
};

/// \brief Everything a multi-head pass produces.
struct MultiHead {
  arma::mat Q;  ///< `(n × d_model)`: \f$X_q W_Q + b_Q\f$, the heads side by side (turned by RoPE).
  arma::mat K;  ///< `(m × g·d_k)`: \f$X_k W_K + b_K\f$ (turned by RoPE).
  arma::mat V;  ///< `(m × g·d_k)`: \f$X_v W_V + b_V\f$.
  std::vector<Attention> heads;  ///< per head: scores and weights `(n × m)`, output `(n × d_k)`.
  arma::mat concat;              ///< `(n × d_model)`: the heads' outputs side by side.
  arma::mat output;              ///< `(n × d_model)`: `concat W_O + b_O`.
  std::optional<RotaryPositions> rotary;  ///< the positions \f$Q\f$ and \f$K\f$ were turned at.
};

/// \brief The columns of head \p k: the \p heads blocks of \p X, each `(n × d / heads)`.
/// \param X `(n × d)`. \param heads \f$h\f$, dividing \f$d\f$.
/// \return \f$h\f$ matrices `(n × d/h)`, head 0 first. Entries are copied as they are, NaN
///         and ±∞ included, and an \p X of 0 rows gives blocks of 0 rows.
/// \throws InputError if \p heads is 0 or does not divide the columns of \p X, or \p X has
///         no column.
std::vector<arma::mat> split_heads(const arma::mat& X, arma::uword heads);

/// \brief The inverse of split_heads(): the blocks side by side.
/// \param blocks \f$h\f$ matrices with the same number of rows.
/// \return `(n × Σ widths)`; entries are copied as they are, NaN and ±∞ included.
/// \throws ShapeError if the rows differ (the message names both shapes).
/// \throws InputError if \p blocks is empty.
arma::mat concat_heads(const std::vector<arma::mat>& blocks);

/// \brief A projection, \f$XW + b\f$: \p b added to every row, or nothing added if it is
///        empty. Every projection of multi-head attention is one (and the GPT's KV-cached step
///        makes its projections with it, so they cannot drift from these).
/// \param X `(n × d_in)`. \param W `(d_in × d_out)`. \param b `(1 × d_out)` or empty.
/// \return `(n × d_out)`. Shapes are not checked here: multi_head_attention() checks them.
arma::mat affine(const arma::mat& X, const arma::mat& W, const arma::rowvec& b);

/// \brief Multi-head attention of queries \p query over keys \p key and values \p value.
/// \param query `X_q: (n × d_model)`. \param key `X_k: (m × d_model)`.
/// \param value `X_v: (m × d_model)`. \param W the layer's weights.
/// \return the heads, their concatenation and the output.
/// \throws ShapeError naming the shapes if a matrix does not fit.
/// \throws InputError if \p query or \p key is empty, if an input or a weight holds a NaN or
///         an infinity (it is named), if \p W's head count does not divide
///         \f$d_{\text{model}}\f$ or if only some biases are given.
MultiHead multi_head_attention(const arma::mat& query, const arma::mat& key, const arma::mat& value,
                               const MultiHeadWeights& W);

/// \brief multi_head_attention() with a mask applied in every head.
/// \param query,key,value,W as for multi_head_attention(). \param mask `(n × m)`.
/// \return the heads, their concatenation and the output.
/// \throws as multi_head_attention() and attend() with a mask do.
MultiHead multi_head_attention(const arma::mat& query, const arma::mat& key, const arma::mat& value,
                               const MultiHeadWeights& W, const Mask& mask);

/// \brief multi_head_attention() with a mask, each head's queries and keys turned by rotary()
///        at their positions (RoPE inside the layer, as Llama's attention does it).
/// \param query,key,value,W,mask as for multi_head_attention(). \param rotary the rows'
///        positions, one per query row and one per key row.
/// \return the heads, their concatenation and the output, with MultiHead::Q and
///         MultiHead::K turned and MultiHead::rotary recording \p rotary for the backward pass.
/// \throws ShapeError if \p rotary does not give one position per row, or as
///         multi_head_attention() with a mask does.
/// \throws InputError if \f$d_k\f$ is odd, a position is negative or not finite, or as
///         multi_head_attention() with a mask does.
MultiHead multi_head_attention(const arma::mat& query, const arma::mat& key, const arma::mat& value,
                               const MultiHeadWeights& W, const Mask& mask,
                               const RotaryPositions& rotary);

/// \brief The heads' weights averaged, as `nn.MultiheadAttention` returns them by default
///        (`need_weights=True, average_attn_weights=True`).
/// \param result a multi-head pass. \return `(n × m)`.
/// \throws InputError if \p result has no heads.
/// \throws ShapeError if two heads' weights differ in shape (both shapes are named).
arma::mat average_weights(const MultiHead& result);

/// \brief The number of learned numbers in one layer: \f$2 d^2 + 2 d\,g\,d_k\f$, plus
///        \f$2d + 2 g\,d_k\f$ with biases; with \f$g = h\f$, \f$4 d^2\f$ and \f$4d\f$.
/// \param d_model \f$d\f$. \param heads \f$h\f$ (it must divide \f$d\f$).
/// \param biases whether the four biases are learned.
/// \param kv_heads \f$g\f$, dividing \f$h\f$; 0 means \f$g = h\f$.
/// \return 2,362,368 for \f$d = 768\f$, 12 heads, with biases, as PyTorch counts.
/// \throws InputError if \p heads or \p d_model is 0, \p heads does not divide \p d_model or
///         \p kv_heads does not divide \p heads.
arma::uword multi_head_parameters(arma::uword d_model, arma::uword heads, bool biases,
                                  arma::uword kv_heads = 0);

/// \brief Gradients of a multi-head pass with respect to its inputs and weights.
struct MultiHeadGradients {
  arma::mat d_query;    ///< `(n × d_model)`.
  arma::mat d_key;      ///< `(m × d_model)`.
  arma::mat d_value;    ///< `(m × d_model)`.
  MultiHeadWeights dW;  ///< every weight's gradient (biases empty where \p W has none).
};

/// \brief Backward pass of multi_head_attention(), with or without a mask or rotary positions
///        (the forward pass carries the projections, the masked weights and the positions, so
///        nothing is computed twice). With grouped-query attention, a key/value head's
///        gradients are the sums over the query heads of its group; with RoPE, a head's query
///        and key gradients are turned back by rotary_backward().
/// \param query,key,value,W the forward pass's inputs. \param forward its result.
/// \param d_output `(n × d_model)`: the gradient with respect to the output.
/// \return the gradients.
/// \throws ShapeError if \p d_output does not fit, if an input is not the shape of its
///         projection in \p forward or if \p forward has a different number of heads.
/// \throws InputError if \p d_output or a weight holds a NaN or an infinity, or as
///         multi_head_attention() does for \p W.
MultiHeadGradients multi_head_backward(const arma::mat& query, const arma::mat& key,
                                       const arma::mat& value, const MultiHeadWeights& W,
                                       const MultiHead& forward, const arma::mat& d_output);

}  // namespace attn::math
