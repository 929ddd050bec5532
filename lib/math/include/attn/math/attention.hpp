/// \file
/// \brief Attention itself: scores, weights and the blended output, from raw embeddings up to
///        scaled dot-product attention on learned projections.
///
/// Conventions used throughout the book: one token per **row**; queries index the rows of the
/// score and weight grids, keys index the columns; softmax runs along each row.
#pragma once

#include "attn/math/mask.hpp"

#include <armadillo>

/// \brief The book's library, one namespace per layer (attn::math, attn::fast, attn::text,
///        attn::numpy, attn::gpt, attn::book), and each chapter's own material (attn::chNN).
namespace attn {}

/// \brief The math layer: every formula the chapters use, each with its equation and shapes.
///
/// Tokens are rows, queries index the rows of a score grid and keys its columns, and softmax
/// runs along rows. Functions check their input and throw ShapeError or InputError with a
/// message that names the operands and their shapes: an empty operand, a NaN, an infinity or
/// mismatched shapes is an error. Not every result is checked: finite inputs large enough to
/// overflow can still give an infinity or a NaN, for instance in project()'s products.
namespace attn::math {

/// \brief Everything one attention pass produces, for \f$n\f$ queries and \f$m\f$ keys.
struct Attention {
  arma::mat scores;   ///< `S: (n × m)`, \f$S_{ij}\f$ = how well query \f$i\f$ matches key \f$j\f$.
  arma::mat weights;  ///< `W: (n × m)`, the row-wise softmax of `S`; every row sums to 1.
  arma::mat output;   ///< `Z: (n × d_v)`, \f$Z = W V\f$: each query's blend of the values.
};

/// \brief The score grid alone: \f$ S = c\,Q K^\top \f$.
///
/// \param Q queries `(n × d_k)`. \param K keys `(m × d_k)`. \param scale the factor \f$c\f$.
/// \return `S: (n × m)`.
/// \throws ShapeError if \p Q and \p K differ in columns (the message names both shapes).
/// \throws InputError if \p Q or \p K is empty or holds a NaN or an infinity, if \p scale is
///         not finite, or if a score overflows to infinity (each operand is named).
arma::mat attention_scores(const arma::mat& Q, const arma::mat& K, double scale);

/// \brief The one formula behind every chapter: \f$ Z = \mathrm{softmax}(c\,Q K^\top)\,V \f$.
///
/// \param Q queries `(n × d_k)`. \param K keys `(m × d_k)`. \param V values `(m × d_v)`.
/// \param scale the factor \f$c\f$ applied to every score: 1 for raw attention,
///        \f$1/\sqrt{d_k}\f$ for scaled dot-product attention.
/// \return scores and weights `(n × m)`, output `(n × d_v)`.
/// \throws ShapeError if \p Q and \p K differ in columns or \p K and \p V in rows.
/// \throws InputError if \p Q, \p K or \p V is empty or holds a NaN or an infinity, or as
///         attention_scores() does for \p scale.
Attention attend(const arma::mat& Q, const arma::mat& K, const arma::mat& V, double scale);

/// \brief attend() with a mask: blocked scores are left out of the softmax, so their weights
///        are exactly 0.
///
/// \f[ Z = \mathrm{softmax}(c\,Q K^\top + M)\,V, \qquad M_{ij} = 0 \text{ where query } i
///     \text{ may attend to key } j,\ -\infty \text{ where not} \f]
///
/// The scores are returned as computed, before the mask; masked_softmax_rows() makes the
/// weights. The backward pass is attend_backward() unchanged: a weight of 0 passes no gradient
/// to its score.
/// \param Q queries `(n × d_k)`. \param K keys `(m × d_k)`. \param V values `(m × d_v)`.
/// \param scale the factor \f$c\f$. \param mask `(n × m)`: which keys each query may attend to.
/// \return scores and weights `(n × m)`, output `(n × d_v)`.
/// \throws ShapeError if the mask is not `(n × m)`, or as attend() does.
/// \throws InputError if a query may attend to no key (the row is named), or as attend() does.
Attention attend(const arma::mat& Q, const arma::mat& K, const arma::mat& V, double scale,
                 const Mask& mask);

/// \brief Raw-embedding self-attention: each embedding is query, key and value at once.
///
/// \f[ S = E E^\top, \qquad W = \mathrm{softmax}_{\text{rows}}(S), \qquad Z = W E \f]
///
/// Because the same vector both asks and offers, \f$S\f$ is symmetric.
/// \param E embeddings `(n × d)`, one row per token.
/// \return scores and weights `(n × n)`, output `(n × d)`.
/// \throws InputError if \p E is empty or holds a NaN or an infinity.
Attention raw_self_attention(const arma::mat& E);

/// \brief Raw-embedding attention for one query: row \p query of \p E asks every row.
///
/// \f[ s = e_q E^\top, \qquad w = \mathrm{softmax}(s), \qquad z_q = \sum_j w_j\, e_j \f]
///
/// where \f$e_q\f$ `(1 × d)` is row \p query of \p E, so \f$s\f$ is `(1 × n)`.
///
/// \param E embeddings `(n × d)`. \param query the index of the asking token, below `n`.
/// \return scores and weights `(1 × n)`, output `z_q: (1 × d)`.
/// \throws std::out_of_range if \p query is not a row of \p E (an empty \p E has none).
/// \throws InputError if \p E holds a NaN or an infinity.
Attention raw_attention_for(const arma::mat& E, arma::uword query);

/// \brief The factor every score is multiplied by in scaled dot-product attention:
///
/// \f[ c = \frac{1}{\sqrt{d_k}} \f]
///
/// It keeps the variance of the scaled score \f$q \cdot k / \sqrt{d_k}\f$ at 1, whatever the key
/// width, when the entries of \f$q\f$ and \f$k\f$ are all independent, with mean 0 and
/// variance 1 (chapter 05 measures why that matters).
/// \param d_k the width of queries and keys, at least 1.
/// \return \f$1/\sqrt{d_k}\f$.
/// \throws InputError if \p d_k is 0.
double score_scale(arma::uword d_k);

/// \brief Scaled dot-product attention, the equation of "Attention Is All You Need":
///
/// \f[ \mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V
/// \f]
///
/// \param Q queries `(n × d_k)`. \param K keys `(m × d_k)`. \param V values `(m × d_v)`.
/// \return scores (already divided by \f$\sqrt{d_k}\f$) and weights `(n × m)`, output `(n × d_v)`.
/// \throws ShapeError, InputError as attend() does.
Attention scaled_dot_product_attention(const arma::mat& Q, const arma::mat& K, const arma::mat& V);

/// \brief The three learned matrices of one attention head.
struct Projections {
  arma::mat W_Q;  ///< `(d_model × d_k)`: what each token looks for.
  arma::mat W_K;  ///< `(d_model × d_k)`: what each token offers to be matched on.
  arma::mat W_V;  ///< `(d_model × d_v)`: what each token hands over when chosen.
};

/// \brief A sentence's queries, keys and values.
struct QKV {
  arma::mat Q;  ///< `(n × d_k)`
  arma::mat K;  ///< `(n × d_k)`
  arma::mat V;  ///< `(n × d_v)`
};

/// \brief The projections \f$ Q = X W_Q,\; K = X W_K,\; V = X W_V \f$.
///
/// The products themselves are not checked: finite inputs large enough to overflow give an
/// infinity or a NaN in \f$Q\f$, \f$K\f$ or \f$V\f$, which self_attention() then rejects.
/// \param X token embeddings `(n × d_model)`. \param W the head's three matrices.
/// \return `Q, K: (n × d_k)`, `V: (n × d_v)`.
/// \throws ShapeError naming both shapes if a matrix does not have `d_model` rows.
/// \throws InputError if \p X is empty, or \p X or one of \p W's matrices holds a NaN or an
///         infinity (the message names it).
QKV project(const arma::mat& X, const Projections& W);

/// \brief One self-attention head: `project`, then `scaled_dot_product_attention`.
/// \param X token embeddings `(n × d_model)`. \param W the head's three matrices.
/// \return scores and weights `(n × n)`, output `(n × d_v)`.
/// \throws ShapeError, InputError as project() and attend() do.
Attention self_attention(const arma::mat& X, const Projections& W);

/// \brief The key a query weighs most, the query itself left out.
///
/// \f[ \operatorname*{arg\,max}_{j \ne i} W_{ij} \f]
///
/// Every token tends to score itself highly, so "who does this token pull toward?" is asked
/// of the other tokens. Ties go to the first such key.
/// \param grid `W: (n × n)` weights (or scores) of a sentence attending to itself.
/// \param query the row \f$i\f$.
/// \return the column \f$j \ne i\f$ with the largest entry in row \f$i\f$.
/// \throws ShapeError unless \p grid is square with at least two rows (so not empty).
/// \throws std::out_of_range if \p query is not a row.
/// \throws InputError if \p grid holds a NaN or an infinity.
arma::uword strongest_other(const arma::mat& grid, arma::uword query);

}  // namespace attn::math
