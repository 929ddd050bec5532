/// \file
/// \brief Choosing the next token from a model's logits (chapter 11): temperature, top-k and
///        top-p (nucleus) filtering, then one draw by the inverse of the distribution function,
///        as numpy's `Generator.choice(V, p=probabilities)` draws.
///
/// Generating text is a loop: the model gives one logit per token of the vocabulary, they become
/// a probability distribution, one token is drawn from it and appended, and the model runs
/// again. next_token_distribution() builds the distribution, sample_token() draws from it. The
/// uniform number the draw needs is an argument, not a generator of this library: the math
/// layer knows no random stream, and the caller passes whichever it uses (the book passes
/// `attn::numpy::Generator::random()`, numpy's `rng.random()`, so that its C++ draws the very
/// tokens numpy draws).
#pragma once

#include <armadillo>

namespace attn::math {

/// \brief How next_token_distribution() shapes the model's distribution; the defaults change
///        nothing (plain softmax of the logits).
struct SamplingOptions {
  /// \f$T \ge 0\f$, finite. The logits are divided by it: \f$T < 1\f$ sharpens the
  /// distribution, \f$T > 1\f$ flattens it. \f$T = 0\f$ is greedy decoding, the limit
  /// \f$T \to 0\f$ with ties broken towards the lower index: all the probability on the first
  /// largest logit (numpy's `argmax`), whatever top_k and top_p say.
  double temperature = 1.0;
  /// Keep only the \p top_k most likely tokens; 0 keeps them all, and so does any
  /// \f$k \ge V\f$.
  arma::uword top_k = 0;
  /// In \f$(0, 1]\f$: keep the fewest most likely tokens whose probabilities add up to at least
  /// \p top_p; 1 keeps them all (the filter is skipped, not left to rounding).
  double top_p = 1.0;
};

/// \brief The distribution the next token is drawn from: the softmax of the logits at a
///        temperature, then top-k, then top-p, each filter followed by renormalisation.
///
/// \f[ q_i = \frac{e^{(z_i - m)/T}}{\sum_j e^{(z_j - m)/T}}, \qquad m = \max_j z_j, \f]
/// which is \f$\mathrm{softmax}(z/T)\f$: subtracting \f$m\f$ before dividing keeps every
/// exponent \f$\le 0\f$ for any \f$T > 0\f$, however small.
///
/// The filters rank the tokens in one order, the order of their logits: token \f$i\f$ comes
/// before token \f$j\f$ if \f$z_i > z_j\f$, or \f$z_i = z_j\f$ and \f$i < j\f$ (a stable sort,
/// descending; numpy's `np.argsort(-z, kind="stable")`). Write \f$\pi_1, \pi_2, \dots\f$ for the
/// tokens in that order. The filters run in the order of Hugging Face's `generate` and of most
/// samplers: temperature, then top-k, then top-p.
/// - **top-k** keeps \f$\pi_1, \dots, \pi_k\f$: exactly \f$k\f$ tokens, so a tie at the
///   \f$k\f$-th logit goes to the lower indices (Hugging Face keeps every tied token instead).
///   \f$k = 1\f$ is greedy decoding at any temperature.
/// - **top-p** (Holtzman et al. 2020, "The Curious Case of Neural Text Degeneration") works on
///   the distribution top-k left, renormalised. With \f$c_j = \sum_{l \le j} q_{\pi_l}\f$ the
///   mass of the first \f$j\f$ tokens (summed in that order, \f$c_0 = 0\f$) it keeps
///   \f$\pi_j\f$ if and only if \f$c_{j-1} < p\f$: the smallest prefix whose mass reaches \f$p\f$
///   (\f$c_j \ge p\f$), the token that crosses \f$p\f$ included. A prefix whose mass equals
///   \f$p\f$ exactly is complete. \f$\pi_1\f$ is always kept. This is Hugging Face's
///   `TopPLogitsWarper`, which removes the tokens whose ascending cumulative mass is
///   \f$\le 1 - p\f$.
///
/// \param logits `z: (1 × V)`, the model's scores for the next token, finite, non-empty. A
///        column vector `v` is passed as `v.t()`, the last row of a model's `(n × V)` logits as
///        `logits.row(n - 1)`.
/// \param options the temperature and the filters; the defaults give \f$\mathrm{softmax}(z)\f$.
/// \return `(1 × V)` in the logits' order: 0 for every filtered token, the renormalised
///         probability of each kept one, summing to 1 (to rounding). A kept token can also be 0
///         where \f$e^x\f$ underflows, about 745 below the largest scaled logit.
/// \throws InputError if \p logits is empty or holds a NaN or an infinity (its column is named:
///         to forbid a token, drop it from the vocabulary or give it a large negative logit), if
///         the temperature is negative, NaN or infinite, or if top_p is outside \f$(0, 1]\f$.
arma::rowvec next_token_distribution(const arma::rowvec& logits,
                                     const SamplingOptions& options = {});

/// \brief One token drawn from \p probabilities by the uniform number \p u, exactly as numpy's
///        `Generator.choice(V, p=probabilities)` draws with `u = rng.random()`.
///
/// \f[ C_i = \frac{\sum_{l \le i} p_l}{\sum_{l < V} p_l}, \qquad
///     \text{token} = \min\{\, i : C_i > u \,\}, \f]
/// numpy's `cdf = p.cumsum(); cdf /= cdf[-1]; cdf.searchsorted(u, side="right")`, the sums
/// taken left to right as numpy's `cumsum` takes them, so that the same \p u picks the same
/// token. Token \f$i\f$ owns the interval \f$[C_{i-1}, C_i)\f$ of \f$[0, 1)\f$, of length
/// \f$p_i\f$: a token of probability 0 is never drawn, and \f$C_{V-1} = 1 > u\f$ always picks
/// one. numpy's `choice` with `p` takes one `rng.random()` per token drawn, and nothing else.
///
/// \param probabilities `p: (1 × V)`, non-negative, summing to 1 within
///        \f$\sqrt{\varepsilon} \approx 1.5 \cdot 10^{-8}\f$ (numpy's tolerance), as
///        next_token_distribution() returns.
/// \param u a uniform number in \f$[0, 1)\f$.
/// \return the token, in \f$[0, V)\f$.
/// \throws InputError if \p probabilities is empty, holds a NaN, an infinity or a negative entry
///         (its column is named) or does not sum to 1, or if \p u is not in \f$[0, 1)\f$.
arma::uword sample_token(const arma::rowvec& probabilities, double u);

}  // namespace attn::math
