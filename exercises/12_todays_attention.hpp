/// \file
/// \brief Chapter 12's exercises: the KV cache's bytes with grouped-query attention and a
///        sliding window, and RMSNorm's backward pass.
#pragma once

#include <attn/gpt/model.hpp>

#include <armadillo>

#include <cstddef>

namespace attn::exercises {

/// \brief Exercise 12.1: the KV cache's size.
///
/// A decoder keeps, in every block, the key and the value of every token it has read, so that a
/// new token costs one query instead of a whole forward pass (attn::gpt::Decoder). Return the
/// bytes its cache holds after decoding \p tokens tokens with the model \p config, each number
/// stored in \p bytes_per_number bytes (2 for fp16, 8 for the book's doubles). Per token held,
/// each of the \f$L\f$ blocks keeps a key and a value, \f$d_k = d / h\f$ numbers each, for each
/// of its \f$g\f$ key/value heads: attn::gpt::TransformerConfig::kv_heads, or \f$h\f$ where it is
/// 0, since the query heads of a group share one. So the cache holds \f$2 \cdot L \cdot g \cdot
/// d_k\f$ numbers a token, and the tokens held are \p tokens, or at most \f$w\f$ under a sliding
/// window of \f$w\f$ (attn::gpt::TransformerConfig::sliding_window; 0 means none). Only the layers,
/// heads, key/value heads, \f$d\f$ and the window matter: the positions, the norm and the MLP
/// change nothing in the cache, and max_length is not checked. If \f$h\f$ is 0 or does not divide
/// \f$d\f$, if \f$g\f$ does not divide \f$h\f$, or if \p bytes_per_number is 0, throw
/// std::invalid_argument.
///
/// For example, Llama 2 7B has 32 blocks of 32 heads and \f$d = 4096\f$, so \f$d_k = 128\f$ and
/// \f$g = h = 32\f$: in fp16 a token costs \f$2 \cdot 32 \cdot 32 \cdot 128 \cdot 2 = 524288\f$
/// bytes, half a mebibyte, and 4096 tokens 2 GiB. Llama 2 70B (80 blocks, 64 heads, \f$d =
/// 8192\f$) shares 8 key/value heads among its 64 query heads: 327680 bytes a token, an eighth
/// of the 2621440 that 64 key/value heads would take. Mistral 7B has Llama 2 7B's 32 blocks, 32
/// heads and \f$d\f$, 8 key/value heads and a window of 4096: 131072 bytes a token, and its cache
/// stops growing at 4096 tokens, 536870912 bytes (512 MiB), however long the text.
/// The test checks these, GPT-2's and the chapter's models by hand, and the bad sizes; then it
/// decodes random small models of every kind token by token, and holds your count with
/// \p bytes_per_number 8 to attn::gpt::Decoder::cache_bytes() after every token.
///
/// \param config the model's sizes and choices. \param tokens the tokens decoded so far.
/// \param bytes_per_number the bytes of one stored number: 2 (fp16, bf16), 4 (fp32), 8 (double).
/// \return the bytes of keys and values the cache holds.
///
/// \par Hint
/// Check the sizes before any division: \f$d / h\f$ is undefined with \f$h = 0\f$, and where
/// \f$h\f$ does not divide \f$d\f$ integer division would quietly drop the remainder.
/// attn::gpt::key_value_heads() turns a kv_heads of 0 into \f$h\f$. Then count one token's
/// bytes, and multiply by the tokens held: the window caps how many tokens the cache holds, not
/// what each costs. The query heads enter the count only through \f$d_k\f$: only the key/value
/// heads are cached, which is the whole saving of grouped-query and multi-query attention.
std::size_t kv_cache_bytes(const attn::gpt::TransformerConfig& config, std::size_t tokens,
                           std::size_t bytes_per_number);

/// \brief Exercise 12.2: RMSNorm's backward pass, for one row.
///
/// RMSNorm (Zhang and Sennrich 2019, Llama's and Mistral's norm) turns a row \p x of \f$d\f$
/// numbers into \f$y = \gamma \odot x / r\f$, with \f$r = \sqrt{\overline{x^2} + \epsilon}\f$:
/// \f$\overline{x^2}\f$ is the mean of the \f$x_j^2\f$ (divided by \f$d\f$, as PyTorch's
/// `nn.RMSNorm` does) and \f$\epsilon\f$ is \p eps. It is layer norm without the centring and
/// without \f$\beta\f$: a row is rescaled, never moved. Given \p dy, the gradient
/// \f$\partial L / \partial y\f$ of some loss, return \f$\partial L / \partial x\f$, a row of
/// \f$d\f$ numbers. With \f$g = \gamma \odot dy\f$, it is
/// \f[ \frac{\partial L}{\partial x} = \frac{g}{r} - x\,\frac{\overline{x \odot g}}{r^3}, \f]
/// the bar again a mean over the row: \f$\partial r / \partial x_k = x_k / (d\,r)\f$, so every
/// \f$x_k\f$ reaches every \f$y_j\f$ through \f$r\f$ as well as its own \f$y_k\f$ directly.
/// For example, \f$x = (1, 7)\f$, \f$\gamma = (1, 1)\f$, \f$dy = (1, 0)\f$ and \f$\epsilon =
/// 0\f$ give \f$r = 5\f$ and \f$\overline{x \odot g} = 1/2\f$, so the answer is
/// \f$(1/5 - 1/250,\ {-7/250}) = (49/250,\ {-7/250})\f$. The test checks that example and
/// another by hand, compares your row with attn::math::rms_norm_backward() on a one-row matrix
/// and with central finite differences of \f$L = \sum_j dy_j\, y_j\f$, and checks that with
/// \f$\epsilon = 0\f$ the row is orthogonal to \f$x\f$. If \p gamma or \p dy does not have as
/// many entries as \p x, throw std::invalid_argument.
///
/// \param x one row `(1 × d)`. \param gamma the scale `(1 × d)`.
/// \param dy \f$\partial L / \partial y\f$ `(1 × d)`. \param eps added to the mean square.
/// \return \f$\partial L / \partial x\f$, `(1 × d)`.
///
/// \par Hint
/// Compute \f$r\f$, \f$g\f$ and the one mean \f$\overline{x \odot g}\f$; the answer is then one
/// line. Where the formula comes from: \f$\partial L / \partial x_k\f$ is the sum over
/// \f$j\f$ of \f$dy_j\, \partial y_j / \partial x_k\f$, and \f$y_j = \gamma_j x_j / r\f$
/// depends on \f$x_k\f$ directly when \f$j = k\f$, which gives \f$g_k / r\f$, and through
/// \f$1/r\f$ always, whose derivative is \f$\partial (1/r) / \partial x_k = -x_k / (d\,r^3)\f$,
/// which gives \f$-x_k \sum_j g_j x_j / (d\,r^3)\f$. Layer norm's gradient (exercise 10.1) has
/// one more term, \f$-\overline{g}/\sigma\f$, which its centring brings. Why orthogonal: with
/// \f$\epsilon = 0\f$, scaling \f$x\f$ does not change \f$y\f$, so \f$L\f$ does not change
/// along \f$x\f$.
arma::rowvec rms_norm_backward_row(const arma::rowvec& x, const arma::rowvec& gamma,
                                   const arma::rowvec& dy, double eps = 1e-5);

}  // namespace attn::exercises
