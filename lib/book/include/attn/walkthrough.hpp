/// \file
/// \brief One token's way through query/key/value attention, written out with every number
///        filled in, as Module 2.1's interactive page shows it.
#pragma once

#include "attn/attention.hpp"

#include <armadillo>

#include <string>
#include <vector>

namespace attn {

/// \brief The four steps of \f$\mathrm{softmax}(Q K^\top / \sqrt{d_k})\, V\f$ for one token, as
///        text with the arithmetic of every entry.
///
/// 1. project: \f$q_t = x_t W_Q\f$ entry by entry, and \f$k_t = x_t W_K\f$, \f$v_t = x_t W_V\f$;
/// 2. score every key: \f$s_j = q_t \cdot k_j / \sqrt{d_k}\f$;
/// 3. softmax, shifted by the row's maximum as softmax_rows() does:
///    \f$w_j = e^{s_j - \max s} / \sum_k e^{s_k - \max s}\f$;
/// 4. blend the values: \f$\mathrm{out}_t = \sum_j w_j v_j\f$.
///
/// Written for the book's two-dimensional examples, so that every product fits on a line.
/// \param tokens one label per row of \p X.
/// \param X embeddings `(n × 2)`.
/// \param W the projections, each `(2 × 2)`.
/// \param attention the result of scaled_dot_product_attention() on project(\p X, \p W).
/// \param token the row of the token to follow.
/// \return the four steps, one line per entry, each line ending with `'\n'`.
/// \throws ShapeError unless the embeddings and projections are two-dimensional and the
///         labels and attention match \p X.
/// \throws std::out_of_range if \p token is not a row of \p X.
std::string walk_through(const std::vector<std::string>& tokens, const arma::mat& X,
                         const Projections& W, const Attention& attention, arma::uword token);

}  // namespace attn
