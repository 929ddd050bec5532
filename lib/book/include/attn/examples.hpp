/// \file
/// \brief The book's worked examples whose numbers the articles do not give, designed once
///        and shared by every chapter that uses them.
#pragma once

#include "attn/attention.hpp"

#include <armadillo>

#include <string>
#include <vector>

namespace attn::examples {

/// \brief Article 004's "money bank river": three toy 2-D embeddings, one row per token.
///
/// They are the article's own, chosen so that the dot products with "bank" are exactly the
/// scores it reasons with: 0.2 for money, 1.0 for bank itself, 0.7 for river.
struct MoneyBankRiver {
  std::vector<std::string> tokens;  ///< money, bank, river.
  arma::mat embeddings;             ///< `E: (3 × 2)`, one row per token.
  arma::uword bank = 1;             ///< the row of "bank", the token that asks.
};

/// \brief The money-bank-river embeddings of article 004.
/// \return tokens, embeddings and the row of "bank".
MoneyBankRiver money_bank_river();

/// \brief The "Nimbus thread": the support question "Why did my Nimbus export fail?".
///
/// The Module 2.1 article prints three numbers for it but not the embeddings or projections
/// behind them, so these are designed, in two dimensions so every vector can be drawn:
///
/// - **Embeddings** `E: (6 × 2)`. The first coordinate says "this word is about the product
///   and its problem" (Nimbus, export, fail positive; the question words negative); the second
///   says "this word frames the question". export `[1.5, 0.5]` and fail `[1.5, 1.0]` point
///   almost the same way, so in raw attention each is the other's strongest partner.
/// - **W_Q** `(2 × 2)` is chosen to satisfy the article's `Q(export) = [0.35, 0.22]`, two
///   equations for its four entries:
///   \f$1.5 \cdot 0.2 + 0.5 \cdot 0.1 = 0.35\f$ and \f$1.5 \cdot 0.1 + 0.5 \cdot 0.14 = 0.22\f$.
/// - **W_K** `(2 × 2)` is chosen so that `K(fail) = [1.0, 0.7]`, which makes
///   \f$Q(\text{export}) \cdot K(\text{fail}) / \sqrt 2 = 0.504 / 1.414 = 0.356\f$, the
///   article's 0.36. W_Q and W_K differ, so the projected score grid is not symmetric.
/// - **W_V** `(2 × 2)` is a mild mixing of the two coordinates; the articles give no number
///   for a value, so it is only required to be invertible (no information is lost).
struct NimbusThread {
  std::string sentence;             ///< "Why did my Nimbus export fail?", as the user typed it.
  std::vector<std::string> tokens;  ///< why, did, my, Nimbus, export, fail.
  arma::mat embeddings;             ///< `E: (6 × 2)`, one row per token.
  Projections projections;          ///< W_Q, W_K, W_V, each `(2 × 2)`.
};

/// \brief The designed Nimbus thread (see NimbusThread for how each number was chosen).
/// \return tokens, embeddings and projections.
NimbusThread nimbus_thread();

/// \brief The sizes of a sentence drawn at random; the defaults are article 004's.
struct RandomSetup {
  arma::uword d_model = 8;    ///< embedding width.
  arma::uword d_k = 4;        ///< query and key width.
  arma::uword d_v = 4;        ///< value width.
  double weight_scale = 0.5;  ///< every projection is a standard normal draw times this.
};

/// \brief A sentence with random embeddings and projections, as article 004 makes one.
struct RandomSentence {
  std::vector<std::string> tokens;  ///< the sentence's words (Python's `sentence.split()`).
  arma::mat X;                      ///< `(n × d_model)` embeddings, one row per token.
  Projections W;                    ///< W_Q, W_K `(d_model × d_k)`, W_V `(d_model × d_v)`.
};

/// \brief Draws a sentence's embeddings and projections from numpy's `default_rng(seed)`, in
///        the order article 004's program draws them: \f$X\f$ first, then \f$W_Q\f$,
///        \f$W_K\f$, \f$W_V\f$, each scaled by RandomSetup::weight_scale.
/// \param seed numpy's seed, a non-negative decimal integer. \param sentence the words.
/// \param setup the sizes.
/// \return tokens, embeddings and projections, equal to numpy's draws.
/// \throws std::invalid_argument if the seed is not one numpy accepts, the sentence has no word,
///         a width in \p setup is 0 or its weight_scale is NaN or infinite (each is named).
RandomSentence random_sentence(const std::string& seed, const std::string& sentence,
                               const RandomSetup& setup = {});

/// \brief The row of \p token in \p tokens.
/// \param tokens a sentence's tokens. \param token the one to find (exact spelling).
/// \return its index.
/// \throws std::invalid_argument listing the valid tokens if \p token is not one of them.
arma::uword token_index(const std::vector<std::string>& tokens, const std::string& token);

}  // namespace attn::examples
