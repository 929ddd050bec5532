/// \file
/// \brief Chapter 02's example, used again by chapter 03: the Nimbus support question, with
/// designed
///        embeddings and projections.
#pragma once

#include <attn/math/attention.hpp>

#include <armadillo>

#include <string>
#include <vector>

/// \brief Chapter 02's own material: the designed Nimbus question, used again by chapter 03.
namespace attn::ch02 {

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
  math::Projections projections;    ///< W_Q, W_K, W_V, each `(2 × 2)`.
};

/// \brief The designed Nimbus thread (see NimbusThread for how each number was chosen).
/// \return tokens, embeddings and projections.
NimbusThread nimbus_thread();

}  // namespace attn::ch02
