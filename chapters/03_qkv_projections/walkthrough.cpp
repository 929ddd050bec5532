#include "walkthrough.hpp"

#include "attn/book/grid_text.hpp"
#include "attn/book/palette.hpp"
#include "attn/book/plot.hpp"
#include "attn/math/validate.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <stdexcept>

namespace attn::ch03 {

namespace {

void require_two_dimensional(const std::vector<std::string>& tokens, const arma::mat& X,
                             const math::Projections& W, const math::Attention& a) {
  for (const auto& [name, m] :
       {std::pair{"W_Q", &W.W_Q}, std::pair{"W_K", &W.W_K}, std::pair{"W_V", &W.W_V}})
    if (m->n_rows != 2 || m->n_cols != 2)
      throw math::ShapeError(fmt::format(
          "walk_through writes out 2-D examples: {} is {}, not (2 × 2)", name, math::shape_of(*m)));
  if (X.n_cols != 2 || tokens.size() != X.n_rows)
    throw math::ShapeError(
        fmt::format("walk_through needs (n × 2) embeddings with one label per row: "
                    "X is {} with {} labels",
                    math::shape_of(X), tokens.size()));
  if (a.weights.n_rows != X.n_rows || a.weights.n_cols != X.n_rows)
    throw math::ShapeError(fmt::format("walk_through: the attention weights {} do not fit X {}",
                                       math::shape_of(a.weights), math::shape_of(X)));
  if (arma::size(a.scores) != arma::size(a.weights) || a.output.n_rows != X.n_rows)
    throw math::ShapeError(
        fmt::format("walk_through: the attention's scores {} and output {} do not "
                    "fit its weights {}",
                    math::shape_of(a.scores), math::shape_of(a.output), math::shape_of(a.weights)));
  math::require_finite("attention.scores", a.scores);  // X and W are checked by project()
  math::require_finite("attention.weights", a.weights);
  math::require_finite("attention.output", a.output);
}

// Token t's walk from the projections and both attentions, which the caller computes once
// for every token of the sentence.
TokenWalk walk_of(const std::vector<std::string>& tokens, const arma::mat& X,
                  const math::Projections& W, const math::QKV& qkv, const math::Attention& a,
                  const math::Attention& raw, arma::uword t) {
  TokenWalk w;
  w.token = tokens[t];
  w.x = {book::fixed(X(t, 0), 1), book::fixed(X(t, 1), 1)};
  w.w_q = {{{book::fixed(W.W_Q(0, 0)), book::fixed(W.W_Q(0, 1))},
            {book::fixed(W.W_Q(1, 0)), book::fixed(W.W_Q(1, 1))}}};
  w.q = {book::fixed(qkv.Q(t, 0)), book::fixed(qkv.Q(t, 1))};
  w.k = book::vector_text(qkv.K.row(t));
  w.v = book::vector_text(qkv.V.row(t));
  w.root = fmt::format("√{}", qkv.K.n_cols);
  w.root_value = fmt::format("{:.3f}", 1.0 / math::score_scale(qkv.K.n_cols));

  const arma::rowvec scores = a.scores.row(t);
  const double top = scores.max();
  w.top = book::fixed(top);
  w.exp_sum =
      fmt::format("{:.3f}", arma::accu(arma::exp(scores - top)));  // shown; the weights are a's
  for (arma::uword j = 0; j < tokens.size(); ++j)
    w.keys.push_back({tokens[j],
                      {book::fixed(qkv.K(j, 0)), book::fixed(qkv.K(j, 1))},
                      book::fixed(scores(j)),
                      book::fixed(scores(j) - top),
                      book::fixed(a.weights(t, j)),
                      a.weights(t, j),
                      book::vector_text(qkv.V.row(j)),
                      book::fixed(raw.scores(t, j)),
                      book::fixed(raw.weights(t, j)),
                      raw.weights(t, j)});
  w.weight_sum = fmt::format("{:.2f}", arma::accu(a.weights.row(t)));
  w.output = book::vector_text(a.output.row(t), 3);
  return w;
}

}  // namespace

TokenWalk token_walk(const std::vector<std::string>& tokens, const arma::mat& X,
                     const math::Projections& W, const math::Attention& a, arma::uword t) {
  require_two_dimensional(tokens, X, W, a);
  if (t >= X.n_rows)
    throw std::out_of_range(fmt::format("token {} is not a row of X {}", t, math::shape_of(X)));
  return walk_of(tokens, X, W, math::project(X, W), a, math::raw_self_attention(X), t);
}

std::vector<TokenWalk> token_walks(const std::vector<std::string>& tokens, const arma::mat& X,
                                   const math::Projections& W, const math::Attention& a) {
  require_two_dimensional(tokens, X, W, a);
  const math::QKV qkv = math::project(X, W);
  const math::Attention raw = math::raw_self_attention(X);
  std::vector<TokenWalk> walks;
  for (arma::uword t = 0; t < X.n_rows; ++t)
    walks.push_back(walk_of(tokens, X, W, qkv, a, raw, t));
  return walks;
}

std::string walk_text(const TokenWalk& w) {
  std::string text;
  auto line = [&text](const std::string& s) {
    text += s + '\n';
  };
  const std::string& t = w.token;

  line(fmt::format("step 1  project: x({}) = [{}, {}]", t, w.x[0], w.x[1]));
  line(fmt::format(
      "  Q({0}) = x({0}) W_Q = [{1} × {3} + {2} × {4}, {1} × {5} + {2} × {6}] = "
      "[{7}, {8}]",
      t, w.x[0], w.x[1], w.w_q[0][0], w.w_q[1][0], w.w_q[0][1], w.w_q[1][1], w.q[0], w.q[1]));
  line(fmt::format("  K({0}) = x({0}) W_K = {1}    V({0}) = x({0}) W_V = {2}", t, w.k, w.v));

  line(fmt::format("step 2  score every key: Q({}) · K(j) / {}", t, w.root));
  for (const WalkKey& k : w.keys)
    line(fmt::format("  Q({}) · K({}) / {} = ({} × {} + {} × {}) / {} = {}", t, k.token, w.root,
                     w.q[0], k.k[0], w.q[1], k.k[1], w.root_value, k.score));

  line(
      fmt::format("step 3  softmax: weight(j) = e^(score(j) - {0}) / Σ_k e^(score(k) - {0}), "
                  "Σ_k = {1}",
                  w.top, w.exp_sum));
  for (const WalkKey& k : w.keys)
    line(fmt::format("  weight({}) = e^{} / {} = {}", k.token, k.shifted, w.exp_sum, k.weight));
  line(fmt::format("  Σ weights = {}", w.weight_sum));

  line(fmt::format("step 4  blend the values: out({}) = Σ_j weight(j) V(j)", t));
  for (std::size_t j = 0; j < w.keys.size(); ++j)
    line(fmt::format("  {} {} × {}    V({})", j ? "+" : " ", w.keys[j].weight, w.keys[j].value,
                     w.keys[j].token));
  line(fmt::format("  = {}", w.output));

  // Chapter 02's raw attention beside the projections: the rows of its grids and of this chapter's.
  line(fmt::format(
      "beside chapter 02's raw attention, where x({}) was query, key and value itself:", t));
  std::vector<std::string> keys;
  std::vector<std::vector<std::string>> rows(4);
  for (const WalkKey& k : w.keys) {
    keys.push_back(k.token);
    rows[0].push_back(k.raw_score);
    rows[1].push_back(k.score);
    rows[2].push_back(k.raw_weight);
    rows[3].push_back(k.weight);
  }
  text += book::grid_table({"raw score", "score", "raw weight", "weight"}, keys, rows);
  return text;
}

std::string walk_through(const std::vector<std::string>& tokens, const arma::mat& X,
                         const math::Projections& W, const math::Attention& attention,
                         arma::uword token) {
  return walk_text(token_walk(tokens, X, W, attention, token));
}

std::string walk_page_data(const std::string& sentence, const std::vector<TokenWalk>& walks,
                           const std::string& program) {
  using Json = nlohmann::ordered_json;  // keeps the fields in the order written here
  const auto weight = [](const std::string& text, double value) {
    return Json{{"text", text},
                {"value", value},
                {"colour", book::weight_colour(value)},
                {"ink", book::dark_weight(value) ? book::colour::white : book::colour::black}};
  };
  Json palette = Json::array();
  for (const book::ColourStop& stop : book::weight_palette())
    palette.push_back({stop.at, stop.colour});
  Json data = {{"sentence", sentence}, {"palette", palette}, {"walks", Json::array()}};
  for (const TokenWalk& w : walks) {
    Json keys = Json::array();
    for (const WalkKey& k : w.keys)
      keys.push_back({{"token", k.token},
                      {"k", k.k},
                      {"score", k.score},
                      {"shifted", k.shifted},
                      {"weight", weight(k.weight, k.weight_value)},
                      {"value", k.value},
                      {"raw_score", k.raw_score},
                      {"raw_weight", weight(k.raw_weight, k.raw_weight_value)}});
    data["walks"].push_back({{"token", w.token},
                             {"x", w.x},
                             {"w_q", w.w_q},
                             {"q", w.q},
                             {"k", w.k},
                             {"v", w.v},
                             {"root", w.root},
                             {"root_value", w.root_value},
                             {"top", w.top},
                             {"exp_sum", w.exp_sum},
                             {"keys", keys},
                             {"weight_sum", w.weight_sum},
                             {"output", w.output}});
  }
  return fmt::format(
      "// Written by {}: every number of chapter 03's interactive walk, as the program\n"
      "// printed it. Read by docs/token_walk.js; rebuilt with the book.\n"
      "window.attnTokenWalks = {};\n",
      program, data.dump(1));
}

}  // namespace attn::ch03
