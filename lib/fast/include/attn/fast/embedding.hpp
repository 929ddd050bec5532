/// \file
/// \brief Where a token's column starts, in `float`, forward and backward: its embedding plus
///        its position's (learned or sinusoidal), and rotary positions (RoPE), turned into its
///        queries and keys.
#pragma once

#include <armadillo>

namespace attn::fast {

/// \brief Each token's column of the residual stream: \f$x_i = E_{t_i} + P_{p_i}\f$, the
///        embedding of its token \f$t_i\f$ plus that of its position \f$p_i\f$ in its sentence
///        (no \f$P\f$ with rotary positions, or none).
///
/// `// E_columns: (d × V), Eᵀ; P_columns: (d × max_length), Pᵀ, or empty`
/// `// tokens, positions: (N); x: (d × N), one column a token`
/// \param E_columns the token embedding, one column a token id. \param P_columns the position
///        embedding, one column a position, or empty. \param tokens \f$t_i\f$, each below V.
/// \param positions \f$p_i\f$, each below max_length. \param x the stream, sized here.
void embedding_forward(const arma::fmat& E_columns, const arma::fmat& P_columns,
                       const arma::uvec& tokens, const arma::uvec& positions, arma::fmat& x);

/// \brief The backward pass of embedding_forward(): column \f$t_i\f$ of \f$\partial L/\partial
///        E^\top\f$ and column \f$p_i\f$ of \f$\partial L/\partial P^\top\f$ collect column
///        \f$i\f$ of \f$\partial L/\partial x\f$, token after token.
///
/// `// dx: (d × N); dE_columns: (d × V); dP_columns: (d × max_length), or empty`
/// \param E_columns,P_columns as given to embedding_forward() (their shapes are the
///        gradients'). \param tokens,positions the same. \param dx \f$\partial L/\partial x\f$.
/// \param dE_columns,dP_columns the tables' gradients, overwritten (\p dP_columns empty when
///        \p P_columns is).
void embedding_backward(const arma::fmat& E_columns, const arma::fmat& P_columns,
                        const arma::uvec& tokens, const arma::uvec& positions, const arma::fmat& dx,
                        arma::fmat& dE_columns, arma::fmat& dP_columns);

/// \brief The angles of rotary positions, \f$\cos p\,\theta_i\f$ and \f$\sin p\,\theta_i\f$ with
///        \f$\theta_i = 10000^{-2i/d_k}\f$ (attn::math::rotary_frequencies()), computed in double
///        and rounded.
struct RopeTables {
  arma::fmat cos;  ///< `(d_k/2 × max_length)`: column \f$p\f$ holds \f$\cos p\,\theta_i\f$.
  arma::fmat sin;  ///< `(d_k/2 × max_length)`: and \f$\sin p\,\theta_i\f$.
};

/// \brief The tables of rope_forward() for heads of \p d_head and positions below \p max_length.
/// \param d_head \f$d_k\f$, even. \param max_length the positions. \return the tables.
RopeTables rope_tables(arma::uword d_head, arma::uword max_length);

/// \brief RoPE in place, in attn::math::rotary()'s interleaved layout: in token \f$t\f$'s column,
///        each of the first \p heads heads of \f$d_k\f$ rows turns its pairs \f$(2i, 2i+1)\f$ by
///        \f$p_t\theta_i\f$: \f$(a, b) \to (a\cos - b\sin,\ a\sin + b\cos)\f$.
///
/// `// x: (rows × N), one column a token, its first heads · d_k rows turned; positions: (N)`
/// (in a column of Q, K and V: the query heads, then the key heads.)
/// \param x the columns. \param heads how many heads, from row 0, turn.
/// \param tables from rope_tables() for their \f$d_k\f$. \param positions \f$p_t\f$.
void rope_forward(arma::fmat& x, arma::uword heads, const RopeTables& tables,
                  const arma::uvec& positions);

/// \brief The backward pass of rope_forward(), in place: a gradient turns back by the
///        transpose, \f$(a, b) \to (a\cos + b\sin,\ -a\sin + b\cos)\f$.
///
/// `// dx: (rows × N); positions: (N)`
/// \param dx the gradient of rope_forward()'s output in, of its input out.
/// \param heads,tables,positions as given to rope_forward().
void rope_backward(arma::fmat& dx, arma::uword heads, const RopeTables& tables,
                   const arma::uvec& positions);

}  // namespace attn::fast
