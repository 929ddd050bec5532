// Chapter 02's exercises, answered. Reference solutions: look only after trying.
#include "02_nimbus_raw.hpp"

#include <stdexcept>

namespace attn::exercises {

std::string strongest_partner(const arma::mat& E, const std::vector<std::string>& tokens,
                              const std::string& token) {
  arma::uword asking = tokens.size();
  for (arma::uword i = 0; i < tokens.size(); ++i) {
    if (tokens[i] == token)
      asking = i;
  }
  if (asking == tokens.size()) {
    std::string valid;
    for (const auto& t : tokens)
      valid += (valid.empty() ? "" : ", ") + t;
    throw std::invalid_argument("\"" + token + "\" is not a token; the tokens are " + valid);
  }
  arma::rowvec scores = E.row(asking) * E.t();  // the softmax keeps this order
  scores(asking) = -arma::datum::inf;           // a word does not count as its own partner
  return tokens[scores.index_max()];
}

arma::mat raw_weights(const arma::mat& E) {
  const arma::mat scores = E * E.t();
  arma::mat weights = arma::exp(scores.each_col() - arma::max(scores, 1));
  weights.each_col() /= arma::sum(weights, 1);
  return weights;
}

}  // namespace attn::exercises
