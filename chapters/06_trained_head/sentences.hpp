/// \file
/// \brief Chapter 06's data: a vocabulary of six kinds of word, the training sentences in which
///        "it" refers to an animal, and the held-out test sentence.
#pragma once

#include <attn/math/training.hpp>
#include <attn/numpy/numpy_random.hpp>

#include <armadillo>

#include <string>
#include <vector>

/// \brief Chapter 06's own material: its little language, and training one head on it.
namespace attn::ch06 {

/// The training sentences; in each, "it" refers to the animal.
extern const std::vector<std::string> kTraining;
/// The held-out test sentence: its "cat" and "milk" never occur in training.
extern const std::string kTest;

/// \brief The sentences as training examples: embeddings `X: (n × d_model)`, the row of "it"
///        (the query) and the row of its animal (the target).
struct Sentences {
  std::vector<attn::math::AttentionExample> training;  ///< one per sentence of kTraining.
  attn::math::AttentionExample test;                   ///< kTest.
};

/// \brief Embeds every sentence, each word as
///        \f$ e_{\text{word}} = u_{\text{kind}} + \sigma\, n_{\text{word}} \f$.
///
/// \f$u_{\text{kind}}\f$ is the unit vector of the word's kind and \f$n\f$ one row of a
/// `(words × width)` draw of N(0, 1) from \p rng, in vocabulary order.
/// \param rng the generator; one `(words × width)` matrix is drawn from it.
/// \param width d_model, at least 6 (one column per kind). \param noise \f$\sigma\f$.
/// \return the training examples and the test example.
/// \throws std::invalid_argument if a sentence lacks "it" or an animal.
Sentences make_sentences(attn::numpy::Generator& rng, arma::uword width, double noise);

}  // namespace attn::ch06
