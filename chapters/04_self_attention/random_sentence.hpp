/// \file
/// \brief Chapter 04's sentence with random embeddings and projections, drawn as article 004 draws
///        them; chapters 07 to 09 draw theirs the same way.
#pragma once

#include <attn/math/attention.hpp>

#include <armadillo>

#include <string>
#include <vector>

/// \brief Chapter 04's own material: a sentence drawn as article 004 draws it (used by 07 to 09).
namespace attn::ch04 {

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
  math::Projections W;              ///< W_Q, W_K `(d_model × d_k)`, W_V `(d_model × d_v)`.
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

}  // namespace attn::ch04
