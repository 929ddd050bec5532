/// \file
/// \brief Byte n-gram language models with interpolated Kneser-Ney smoothing: the baselines
///        chapter 11 sets beside its GPT, in the same unit, bits per byte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace attn::text {

/// \brief A byte n-gram model of order \f$n \ge 1\f$: the probability of the next byte given the
///        \f$n-1\f$ bytes before it, counted in a training text and smoothed by interpolated
///        Kneser-Ney (Chen & Goodman, 1998, with one discount per order).
///
/// With \f$h\f$ a context of \f$k-1\f$ bytes and \f$h'\f$ the same context without its oldest
/// byte, the model of order \f$k\f$ mixes its own counts with the model of order \f$k-1\f$:
///
/// \f[ P_k(w \mid h) = \frac{\max\bigl(c_k(hw) - D_k,\ 0\bigr)}{c_k(h\,\cdot)}
///     + \frac{D_k\,N_{1+}(h\,\cdot)}{c_k(h\,\cdot)}\,P_{k-1}(w \mid h'),
///     \qquad P_0(w) = \frac{1}{256}, \f]
///
/// where \f$c_k(h\,\cdot) = \sum_w c_k(hw)\f$ and \f$N_{1+}(h\,\cdot) = |\{w : c_k(hw) > 0\}|\f$.
/// The top order counts occurrences; every lower order counts, as Kneser and Ney proposed, the
/// distinct bytes seen just before, since a lower order matters only where the higher ones have
/// seen little (the many `u`s after `q` give `u` one continuation, not one per `qu`):
///
/// \f[ c_n(hw) = \#\{\text{occurrences of } hw\}, \qquad
///     c_k(hw) = N_{1+}(\cdot\,hw) = \bigl|\{a : ahw \text{ occurs}\}\bigr| \quad (k < n), \f]
///
/// both in the training text. (The text's first \f$k\f$ bytes, preceded by nothing, add no
/// continuation.) A context with \f$c_k(h\,\cdot) = 0\f$, never seen before a byte at that
/// order, passes the lower order on unchanged: \f$P_k(w \mid h) = P_{k-1}(w \mid h')\f$. The
/// discount of each order comes from its count-of-counts, \f$m_r\f$ being the number of
/// \f$k\f$-grams with \f$c_k = r\f$:
///
/// \f[ D_k = \frac{\max(m_1, 1)}{\max(m_1, 1) + 2\,m_2} \in (0, 1]. \f]
///
/// (Without the \f$\max\f$, a small text in which no \f$k\f$-gram occurs once would give
/// \f$D_k = 0\f$ and no probability to anything unseen; on a real corpus \f$m_1 > 0\f$.) As
/// \f$0 < D_k \le 1\f$, each \f$P_k(\cdot \mid h)\f$ sums to 1 and gives every one of the 256
/// bytes a probability above 0.
///
/// **The start of a text.** Byte \f$x_i\f$ is scored with the \f$\min(i, n-1)\f$ bytes before
/// it, by the model of order \f$\min(i, n-1) + 1\f$ (the same \f$P_k\f$ the higher orders
/// interpolate with): the first byte by \f$P_1\f$, the second by \f$P_2(\cdot \mid x_0)\f$, and
/// so on. Nothing of the training text is assumed to precede a text being scored.
///
/// **Memory and time.** The counts live in two hash maps keyed by 64-bit integers: a trie of the
/// contexts seen (a context of \f$k\f$ bytes is its \f$k-1\f$ newest bytes' node and the byte
/// before them) and the count \f$c_k(hw)\f$ of every distinct \f$k\f$-gram, \f$k = 1 \ldots n\f$,
/// keyed by its context's node and \f$w\f$; each context keeps \f$c_k(h\,\cdot)\f$ and
/// \f$N_{1+}(h\,\cdot)\f$. That is about 65 bytes per distinct \f$k\f$-gram (its map entry
/// and bucket, and most grams' context nodes with their 16 bytes of totals): chapter 11's 3.8 MB
/// of King James Bible at \f$n = 5\f$ holds 182 thousand distinct grams in some 12 MB, counted
/// in about a second; at \f$n = 8\f$, 1.7 million grams in 140 MB, in some 15 seconds. Scoring
/// one byte costs \f$2n - 1\f$ hash look-ups.
class NgramModel {
 public:
  /// \brief Counts \p training once; the model then answers without looking at it again.
  /// \param order \f$n \ge 1\f$: the next byte is predicted from the \f$n-1\f$ bytes before it.
  /// \param training the training text, any bytes.
  /// \throws InputError if \p order is below 1 or \p training is empty.
  NgramModel(int order, std::string_view training);

  /// \brief The order the model was built with. \return \f$n\f$.
  int order() const { return order_; }

  /// \brief The discount \f$D_k\f$ of order \p k.
  /// \param k from 1 to order().
  /// \return \f$D_k \in (0, 1]\f$.
  /// \throws InputError if \p k is not in [1, order()].
  double discount(int k) const;

  /// \brief The model's size, beside a network's parameter count: one count per gram.
  /// \return how many distinct \f$k\f$-grams, \f$k = 1 \ldots n\f$, the model holds.
  std::size_t ngram_count() const { return counts_.size(); }

  /// \brief \f$P(w \mid \text{context})\f$: the interpolated Kneser-Ney probability of the next
  ///        byte after the last \f$\min(|\text{context}|, n-1)\f$ bytes of \p context, by the
  ///        model of order one more than that number of bytes.
  /// \param context the bytes before \p next, oldest first; only the last \f$n-1\f$ are read,
  ///        and a shorter one (the start of a text) is allowed, as is an empty one.
  /// \param next the byte \f$w\f$.
  /// \return a probability in (0, 1]; the 256 bytes' probabilities after any context sum to 1.
  double probability(std::string_view context, unsigned char next) const;

  /// \brief The mean number of bits the model spends per byte of a text \f$x\f$, on its bytes
  ///        from \f$f\f$ = \p first on,
  ///        \f[ \frac{1}{|x| - f} \sum_{i=f}^{|x|-1} -\log_2 P\bigl(x_i \mid
  ///            x_{\max(0,\,i-n+1)} \ldots x_{i-1}\bigr), \f]
  ///        each byte scored by probability() with the bytes of \f$x\f$ before it (so the
  ///        bytes before \p first are context only: chapter 11 scores the bytes a transformer
  ///        scores, whose first token is context).
  /// \param text \f$x\f$: held-out text, for a fair measure.
  /// \param first the first byte scored, 0 for all of them.
  /// \return bits per byte, above 0: 8 is what the uniform distribution spends, and a model
  ///         can spend more on text unlike its training.
  /// \throws InputError if \p text has no byte from \p first on.
  double bits_per_byte(std::string_view text, std::size_t first = 0) const;

 private:
  /// \f$c_k(h\,\cdot)\f$ and \f$N_{1+}(h\,\cdot)\f$ of one context \f$h\f$.
  struct ContextTotals {
    std::uint64_t count = 0;     ///< \f$c_k(h\,\cdot)\f$: the sum of the counts after \f$h\f$.
    std::uint64_t distinct = 0;  ///< \f$N_{1+}(h\,\cdot)\f$: how many of them are above 0.
  };

  int order_;
  std::vector<double> discounts_;  ///< \f$D_k\f$ at index \f$k - 1\f$.
  /// The trie of contexts: (node of \f$h\f$, byte \f$a\f$) → node of \f$ah\f$. Node 0 is the
  /// empty context; a node's number indexes totals_.
  std::unordered_map<std::uint64_t, std::uint64_t> longer_;
  /// (node of \f$h\f$, byte \f$w\f$) → \f$c_k(hw)\f$, \f$k - 1\f$ being \f$h\f$'s length.
  std::unordered_map<std::uint64_t, std::uint64_t> counts_;
  std::vector<ContextTotals> totals_;  ///< one per node
};

}  // namespace attn::text
