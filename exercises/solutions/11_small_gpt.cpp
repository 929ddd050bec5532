// Chapter 11's exercises, answered. Reference solutions: look only after trying.
#include "11_small_gpt.hpp"

#include <map>
#include <stdexcept>
#include <string>
#include <utility>

namespace attn::exercises {

using attn::text::TokenId;

std::optional<attn::text::Merge> bpe_merge_step(std::vector<CountedPiece>& pieces, TokenId new_id) {
  // 1. Every adjacent pair, at every position, times its piece's count.
  std::map<std::pair<TokenId, TokenId>, std::size_t> counts;
  for (const CountedPiece& piece : pieces) {
    for (std::size_t i = 0; i + 1 < piece.tokens.size(); ++i)
      counts[{piece.tokens[i], piece.tokens[i + 1]}] += piece.count;
  }
  if (counts.empty())
    return std::nullopt;
  // 2. The most frequent; the map's order (left id, then right id) settles ties.
  auto best = counts.begin();
  for (auto it = counts.begin(); it != counts.end(); ++it) {
    if (it->second > best->second)
      best = it;
  }
  const auto [left, right] = best->first;
  // 3. Every occurrence, left to right.
  for (CountedPiece& piece : pieces) {
    std::vector<TokenId> merged;
    for (std::size_t i = 0; i < piece.tokens.size();) {
      if (i + 1 < piece.tokens.size() && piece.tokens[i] == left && piece.tokens[i + 1] == right) {
        merged.push_back(new_id);
        i += 2;
      } else {
        merged.push_back(piece.tokens[i++]);
      }
    }
    piece.tokens = std::move(merged);
  }
  return attn::text::Merge{left, right};
}

arma::rowvec top_p_filter(const arma::rowvec& probabilities, double p) {
  if (!(p > 0.0 && p <= 1.0))
    throw std::invalid_argument("top_p_filter: p is " + std::to_string(p) +
                                "; it must be in (0, 1]");
  const arma::uvec order = arma::stable_sort_index(probabilities, "descend");
  arma::rowvec kept(probabilities.n_elem, arma::fill::zeros);
  double before = 0.0;  // c_{j-1}: the mass of the tokens ahead of this one
  for (arma::uword j = 0; j < order.n_elem && before < p; ++j) {
    kept(order(j)) = probabilities(order(j));
    before += probabilities(order(j));
  }
  return kept / arma::accu(kept);
}

}  // namespace attn::exercises
