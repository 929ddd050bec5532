#include "attn/walkthrough.hpp"

#include "attn/grid_text.hpp"
#include "attn/validate.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace attn {

namespace {

void require_two_dimensional(const std::vector<std::string>& tokens, const arma::mat& X,
                             const Projections& W, const Attention& a) {
  for (const auto& [name, m] : {std::pair{"W_Q", &W.W_Q}, std::pair{"W_K", &W.W_K},
                                std::pair{"W_V", &W.W_V}})
    if (m->n_rows != 2 || m->n_cols != 2)
      throw ShapeError(fmt::format("walk_through writes out 2-D examples: {} is {}, not (2 × 2)",
                                   name, shape_of(*m)));
  if (X.n_cols != 2 || tokens.size() != X.n_rows)
    throw ShapeError(fmt::format("walk_through needs (n × 2) embeddings with one label per row: "
                                 "X is {} with {} labels", shape_of(X), tokens.size()));
  if (a.weights.n_rows != X.n_rows || a.weights.n_cols != X.n_rows)
    throw ShapeError(fmt::format("walk_through: the attention weights {} do not fit X {}",
                                 shape_of(a.weights), shape_of(X)));
}

}  // namespace

std::string walk_through(const std::vector<std::string>& tokens, const arma::mat& X,
                         const Projections& W, const Attention& a, arma::uword t) {
  require_two_dimensional(tokens, X, W, a);
  if (t >= X.n_rows)
    throw std::out_of_range(fmt::format("token {} is not a row of X {}", t, shape_of(X)));
  const QKV qkv = project(X, W);
  const std::string& name = tokens[t];
  const std::string root_label = fmt::format("√{}", qkv.K.n_cols);
  std::string text;
  auto line = [&text](const std::string& s) { text += s + '\n'; };

  const arma::rowvec x = X.row(t);
  line(fmt::format("step 1  project: x({}) = {}", name, vector_text(x, 1)));
  line(fmt::format("  Q({0}) = x({0}) W_Q = [{1:.1f} × {3:.2f} + {2:.1f} × {4:.2f}, "
                   "{1:.1f} × {5:.2f} + {2:.1f} × {6:.2f}] = {7}",
                   name, x(0), x(1), W.W_Q(0, 0), W.W_Q(1, 0), W.W_Q(0, 1), W.W_Q(1, 1),
                   vector_text(qkv.Q.row(t))));
  line(fmt::format("  K({0}) = x({0}) W_K = {1}    V({0}) = x({0}) W_V = {2}", name,
                   vector_text(qkv.K.row(t)), vector_text(qkv.V.row(t))));

  line(fmt::format("step 2  score every key: Q({}) · K(j) / {}", name, root_label));
  for (arma::uword j = 0; j < tokens.size(); ++j)
    line(fmt::format("  Q({}) · K({}) / {} = ({} × {} + {} × {}) / {:.3f} = {}", name, tokens[j],
                     root_label, fixed(qkv.Q(t, 0)), fixed(qkv.K(j, 0)), fixed(qkv.Q(t, 1)),
                     fixed(qkv.K(j, 1)), 1.0 / score_scale(qkv.K.n_cols), fixed(a.scores(t, j))));

  const arma::rowvec scores = a.scores.row(t);
  const double top = scores.max();
  const double total = arma::accu(arma::exp(scores - top));  // shown; the weights are a's
  line(fmt::format("step 3  softmax: weight(j) = e^(score(j) - {0}) / Σ_k e^(score(k) - {0}), "
                   "Σ_k = {1:.3f}", fixed(top), total));
  for (arma::uword j = 0; j < tokens.size(); ++j)
    line(fmt::format("  weight({}) = e^{} / {:.3f} = {}", tokens[j], fixed(scores(j) - top),
                     total, fixed(a.weights(t, j))));
  line(fmt::format("  Σ weights = {:.2f}", arma::accu(a.weights.row(t))));

  line(fmt::format("step 4  blend the values: out({}) = Σ_j weight(j) V(j)", name));
  for (arma::uword j = 0; j < tokens.size(); ++j)
    line(fmt::format("  {} {} × {}    V({})", j ? "+" : " ", fixed(a.weights(t, j)),
                     vector_text(qkv.V.row(j)), tokens[j]));
  line(fmt::format("  = {}", vector_text(a.output.row(t), 3)));
  return text;
}

}  // namespace attn
