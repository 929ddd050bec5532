/// \file
/// \brief One token's way through query/key/value attention, written out with every number
///        filled in, as Module 2.1's interactive page shows it: as text for the terminal and
///        as data for the book's interactive page, from one set of formatted numbers.
#pragma once

#include "attn/math/attention.hpp"

#include <armadillo>

#include <array>
#include <string>
#include <vector>

/// \brief Chapter 03's own material: each token's walk through the equations, and the page's data.
namespace attn::ch03 {

/// \brief What the followed token does with one key \f$j\f$, every number as it is printed.
struct WalkKey {
  std::string token;             ///< the key's token, `"fail"`.
  std::array<std::string, 2> k;  ///< the entries of \f$k_j\f$, `{"1.00", "0.70"}`.
  std::string score;             ///< \f$s_j = q_t \cdot k_j / \sqrt{d_k}\f$, `"0.37"`.
  std::string shifted;           ///< \f$s_j - \max s\f$, the exponent softmax uses, `"-0.06"`.
  std::string weight;            ///< the softmax weight \f$w_j\f$, `"0.21"`.
  double weight_value = 0;       ///< \f$w_j\f$ unrounded, for a bar's length and colour.
  std::string value;             ///< \f$v_j\f$, `"[1.10, 0.75]"`.
  std::string raw_score;         ///< chapter 02's raw score \f$x_t \cdot x_j\f$, `"2.75"`.
  std::string raw_weight;        ///< chapter 02's raw weight, `"0.33"`.
  double raw_weight_value = 0;   ///< the same, unrounded.
};

/// \brief The four steps of \f$\mathrm{softmax}(Q K^\top / \sqrt{d_k})\, V\f$ for one token,
///        every number formatted once, as both the terminal and the book's page show it.
struct TokenWalk {
  std::string token;                              ///< the followed token \f$t\f$.
  std::array<std::string, 2> x;                   ///< its embedding's entries, `{"1.5", "1.0"}`.
  std::array<std::array<std::string, 2>, 2> w_q;  ///< \f$W_Q\f$, `w_q[row][column]`.
  std::array<std::string, 2> q;                   ///< the entries of \f$q_t = x_t W_Q\f$.
  std::string k;                                  ///< \f$k_t = x_t W_K\f$, `"[1.00, 0.70]"`.
  std::string v;                                  ///< \f$v_t = x_t W_V\f$.
  std::string root;           ///< `"√2"`: the square root scores are divided by.
  std::string root_value;     ///< its value, `"1.414"`.
  std::string top;            ///< the row's largest score, \f$\max s\f$.
  std::string exp_sum;        ///< \f$\sum_k e^{s_k - \max s}\f$, `"4.548"`.
  std::vector<WalkKey> keys;  ///< one per key, in sentence order.
  std::string weight_sum;     ///< \f$\sum_j w_j\f$, `"1.00"`.
  std::string output;         ///< \f$\mathrm{out}_t\f$, `"[0.252, 0.682]"`.
};

/// \brief Follows one token through the four steps, formatting every number once.
///
/// 1. project: \f$q_t = x_t W_Q\f$ entry by entry, and \f$k_t = x_t W_K\f$, \f$v_t = x_t W_V\f$;
/// 2. score every key: \f$s_j = q_t \cdot k_j / \sqrt{d_k}\f$;
/// 3. softmax, shifted by the row's maximum as softmax_rows() does:
///    \f$w_j = e^{s_j - \max s} / \sum_k e^{s_k - \max s}\f$;
/// 4. blend the values: \f$\mathrm{out}_t = \sum_j w_j v_j\f$;
///
/// and beside them, chapter 02's raw attention of the same row (raw_self_attention() of
/// \p X), where the embedding itself was query, key and value.
/// Scores, weights and the output are read from \p attention, not computed a second time.
/// Written for the book's two-dimensional examples, so that every product fits on a line.
/// \param tokens one label per row of \p X.
/// \param X embeddings `(n × 2)`.
/// \param W the projections, each `(2 × 2)`.
/// \param attention the result of scaled_dot_product_attention() on project(\p X, \p W).
/// \param token the row of the token to follow.
/// \return every number of the walk, formatted.
/// \throws ShapeError unless the embeddings and projections are two-dimensional and the
///         labels and attention match \p X (the shapes are named).
/// \throws std::out_of_range if \p token is not a row of \p X.
/// \throws InputError if \p X, a projection or \p attention holds a NaN or an infinity (it is
///         named), so that no walk ever shows `nan`.
TokenWalk token_walk(const std::vector<std::string>& tokens, const arma::mat& X,
                     const math::Projections& W, const math::Attention& attention,
                     arma::uword token);

/// \brief token_walk() for every token of the sentence, in order, with the projections and
///        the raw attention computed once for all of them.
/// \param tokens,X,W,attention as for token_walk().
/// \return one walk per row of \p X.
/// \throws ShapeError, InputError as token_walk() does.
std::vector<TokenWalk> token_walks(const std::vector<std::string>& tokens, const arma::mat& X,
                                   const math::Projections& W, const math::Attention& attention);

/// \brief A walk as text for the terminal: one line per entry, the arithmetic of each, then a
///        table of the raw row beside the projected one.
/// \param walk what token_walk() returned.
/// \return the lines, each ending with `'\n'`.
std::string walk_text(const TokenWalk& walk);

/// \brief walk_text() of token_walk(): the text `--token NAME` prints.
/// \param tokens,X,W,attention,token as for token_walk().
/// \return the walk's text.
/// \throws ShapeError, InputError, std::out_of_range as token_walk() does.
std::string walk_through(const std::vector<std::string>& tokens, const arma::mat& X,
                         const math::Projections& W, const math::Attention& attention,
                         arma::uword token);

/// \brief The data file of the book's interactive walk (`docs/token_walk.js` reads it).
///
/// A JavaScript file, so that a page opened from `file://` can load it with a `<script>`
/// element (browsers refuse to fetch JSON there). It sets `window.attnTokenWalks` to a JSON
/// object: the sentence, the weights' colour scale (weight_palette()) and one walk per token
/// with every field of TokenWalk and WalkKey, each weight with the colour and the text colour
/// a heatmap cell of that weight has. The page typesets these strings and computes nothing.
/// \param sentence the sentence the tokens come from, shown above the walk.
/// \param walks one walk per token, in sentence order.
/// \param program the chapter that wrote the file, named in its first line.
/// \return the file's text.
std::string walk_page_data(const std::string& sentence, const std::vector<TokenWalk>& walks,
                           const std::string& program);

}  // namespace attn::ch03
