#include "attn/examples.hpp"

#include "attn/grid_text.hpp"
#include "attn/numpy_random.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace attn::examples {

//! [money-bank-river]
MoneyBankRiver money_bank_river() {
  MoneyBankRiver m;
  m.tokens = {"money", "bank", "river"};
  m.embeddings = {  // E: (3 × 2)
      {0.20, 0.98},  // money
      {1.00, 0.00},  // bank
      {0.70, 0.71},  // river
  };
  m.bank = 1;
  return m;
}
//! [money-bank-river]

NimbusThread nimbus_thread() {
  NimbusThread t;
  t.sentence = "Why did my Nimbus export fail?";
  t.tokens = {"why", "did", "my", "Nimbus", "export", "fail"};
  t.embeddings = {
      // about the problem, frames the question
      {-1.0, 1.5},  // why
      {-1.0, 0.5},  // did
      {-0.5, 1.0},  // my
      {1.0, -0.5},  // Nimbus
      {1.5, 0.5},   // export
      {1.5, 1.0},   // fail
  };
  t.projections.W_Q = {{0.2, 0.1}, {0.1, 0.14}};   // Q(export) = [0.35, 0.22]
  t.projections.W_K = {{0.6, 0.2}, {0.1, 0.4}};    // K(fail) = [1.0, 0.7]
  t.projections.W_V = {{0.8, 0.2}, {-0.2, 0.9}};
  return t;
}

arma::uword token_index(const std::vector<std::string>& tokens, const std::string& token) {
  const auto found = std::find(tokens.begin(), tokens.end(), token);
  if (found == tokens.end())
    throw std::invalid_argument(fmt::format("unknown token \"{}\"; the tokens are: {}", token,
                                            fmt::join(tokens, ", ")));
  return static_cast<arma::uword>(found - tokens.begin());
}

//! [random-sentence]
RandomSentence random_sentence(const std::string& seed, const std::string& sentence,
                               const RandomSetup& setup) {
  RandomSentence r;
  r.tokens = split_words(sentence);  // Python's sentence.split()
  if (r.tokens.empty()) throw std::invalid_argument("the sentence needs at least one word");
  if (setup.d_model == 0 || setup.d_k == 0 || setup.d_v == 0 || !std::isfinite(setup.weight_scale))
    throw std::invalid_argument(fmt::format("random_sentence: d_model = {}, d_k = {}, d_v = {} must "
                                            "be at least 1 and weight_scale = {} finite",
                                            setup.d_model, setup.d_k, setup.d_v,
                                            setup.weight_scale));
  numpy::Generator rng = numpy::default_rng(seed);
  // The article's order: X first, then W_Q, W_K, W_V.
  r.X = rng.normal(r.tokens.size(), setup.d_model);
  r.W.W_Q = rng.normal(setup.d_model, setup.d_k) * setup.weight_scale;
  r.W.W_K = rng.normal(setup.d_model, setup.d_k) * setup.weight_scale;
  r.W.W_V = rng.normal(setup.d_model, setup.d_v) * setup.weight_scale;
  return r;
}
//! [random-sentence]

}  // namespace attn::examples
