/// \file
/// \brief Causal multi-head attention over a packed batch of sentences in `float`, forward and
///        backward, on the columns of \f$Q, K, V\f$ in place: grouped-query heads, a sliding
///        window, and the blocks every query ignores never computed.
///
/// attn::math::attend() with a causal (or sliding-window) Mask, and attend_backward(), are its
/// readable twins: one head of one sentence, one row a token, in double.
#pragma once

#include <armadillo>

#include <span>
#include <vector>

namespace attn::fast {

/// \brief One sentence of a packed batch: its columns, and where its heads' weights are kept.
struct Sentence {
  arma::uword first = 0;    ///< its first column (token).
  arma::uword length = 0;   ///< \f$n\f$, its tokens.
  arma::uword weights = 0;  ///< where its \f$h\f$ blocks of \f$n^2\f$ weights begin.
};

/// \brief How the heads lie in a token's column of \f$Q, K, V\f$: \f$h\f$ query heads of
///        \f$d_k\f$ rows, then \f$g\f$ key heads, then \f$g\f$ value heads (query head \f$k\f$
///        reads key/value head \f$k/(h/g)\f$), and which keys a query sees.
struct Heads {
  arma::uword heads = 0;     ///< \f$h\f$.
  arma::uword kv_heads = 0;  ///< \f$g\f$, dividing \f$h\f$ (\f$g = h\f$ but for grouped-query).
  arma::uword d_head = 0;    ///< \f$d_k\f$.
  arma::uword window = 0;    ///< \f$w\f$: query \f$i\f$ sees keys \f$i - w < j \le i\f$; 0, all
                             ///< \f$j \le i\f$.
};

/// \brief The weights' places: each sentence's \f$h\f$ blocks of \f$n^2\f$, one after another.
/// \param sentences their first columns and lengths; their `weights` are set here.
/// \param heads \f$h\f$. \return how many weights the batch has, \f$\sum h n^2\f$.
arma::uword place_weights(std::span<Sentence> sentences, arma::uword heads);

/// \brief Causal attention of every sentence and head:
///        \f$S^\top = K_h^\top Q_h / \sqrt{d_k}\f$, one column a query \f$i\f$; its softmax over
///        the keys it sees, \f$P^\top\f$ (the other keys get weight exactly 0); \f$O_h = V_h
///        P^\top\f$.
///
/// `// qkv: (h d_k + 2 g d_k × N), one column a token, Q above K above V`
/// `// out: (h d_k × N), the heads side by side`
/// `// weights: Σ h n²; sentence s's head k's (n × n) from s.weights + k n², a column a query`
///
/// The products run on blocks of 32 queries, each against only the keys those queries see:
/// blocks above the diagonal, and below the window's band, are never computed. Threads
/// (OpenMP) share the (sentence, head) pairs.
/// \param qkv the queries, keys and values. \param sentences from place_weights().
/// \param heads their layout. \param weights \f$P^\top\f$ per sentence and head, kept for the
///        backward pass (sized by the caller, place_weights()'s count).
/// \param out \f$O\f$, sized here.
void attention_forward(const arma::fmat& qkv, std::span<const Sentence> sentences,
                       const Heads& heads, std::vector<float>& weights, arma::fmat& out);

/// \brief The backward pass of attention_forward(), given \f$\partial L/\partial O\f$:
///        \f$dV_h = dO_h\,P\f$, \f$dP^\top = V_h^\top dO_h\f$,
///        \f$dS = P \odot (dP - \mathrm{rowsum}(P \odot dP))\f$,
///        \f$dQ_h = K_h\,dS^\top/\sqrt{d_k}\f$, \f$dK_h = Q_h\,dS/\sqrt{d_k}\f$; a key/value head
///        shared by a group of query heads sums their \f$dK\f$ and \f$dV\f$.
///
/// `// qkv, d_qkv: (h d_k + 2 g d_k × N); d_out: (h d_k × N); weights as attention_forward()'s`
///
/// Threads share the (sentence, key/value head) pairs, each taking its group's query heads in
/// turn, so that no two add to the same columns.
/// \param qkv,sentences,heads as given to attention_forward(). \param weights what it kept.
/// \param d_out \f$\partial L/\partial O\f$. \param d_qkv \f$\partial L/\partial(Q, K, V)\f$,
///        sized here. \param scratch one \f$(n \times n)\f$ block per thread, sized here.
void attention_backward(const arma::fmat& qkv, std::span<const Sentence> sentences,
                        const Heads& heads, const std::vector<float>& weights,
                        const arma::fmat& d_out, arma::fmat& d_qkv,
                        std::vector<std::vector<float>>& scratch);

}  // namespace attn::fast
