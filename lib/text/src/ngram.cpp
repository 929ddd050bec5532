#include "attn/text/ngram.hpp"

#include "attn/math/validate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace attn::text {

namespace {

/// One key for (node, byte): the node's number shifted past the byte's eight bits.
std::uint64_t key(std::uint64_t node, unsigned char byte) {
  return node << 8 | byte;
}

}  // namespace

NgramModel::NgramModel(int order, std::string_view training) : order_(order) {
  if (order < 1)
    throw math::InputError(fmt::format("NgramModel: the order must be at least 1, not {}", order));
  if (training.empty())
    throw math::InputError("NgramModel: the training text is empty");
  const auto n = static_cast<std::size_t>(order);
  const auto byte = [&](std::size_t i) {
    return static_cast<unsigned char>(training[i]);
  };
  std::vector<std::size_t> depth_of{0};  // each node's context length, for the count-of-counts
  std::vector<std::uint64_t> node(n);    // node[d]: the context x_{i-d} ... x_{i-1}
  //! [count]
  for (std::size_t i = 0; i < training.size(); ++i) {
    const std::size_t deepest = std::min(i, n - 1);
    for (std::size_t d = 1; d <= deepest; ++d) {  // x_{i-d} before the context one byte shorter
      const auto [it, added] = longer_.try_emplace(key(node[d - 1], byte(i - d)), depth_of.size());
      if (added)
        depth_of.push_back(d);
      node[d] = it->second;
    }
    // The grams ending at x_i, longest first. Below the top, a gram's count grows only when the
    // gram one byte longer is new, a byte never seen before it; and a gram seen before had all
    // its shorter ones seen with it, so the first one not new ends the walk.
    for (std::size_t d = deepest + 1; d-- > 0;) {
      const auto [it, added] = counts_.try_emplace(key(node[d], byte(i)), 0);
      if (d == n - 1 || d < deepest)  // c_n(hw): one more occurrence; N1+(. hw): one more byte
        ++it->second;
      if (!added)
        break;
    }
  }
  //! [count]
  totals_.resize(depth_of.size());
  std::vector<std::uint64_t> once(n), twice(n);  // m_1, m_2 of each order
  for (const auto& [gram_key, count] : counts_) {
    const std::uint64_t h = gram_key >> 8;  // the gram's context
    totals_[h].count += count;
    totals_[h].distinct += count > 0;
    once[depth_of[h]] += count == 1;
    twice[depth_of[h]] += count == 2;
  }
  for (std::size_t k = 0; k < n; ++k) {
    const double m1 = static_cast<double>(std::max<std::uint64_t>(once[k], 1));
    discounts_.push_back(m1 / (m1 + 2.0 * static_cast<double>(twice[k])));
  }
}

double NgramModel::discount(int k) const {
  if (k < 1 || k > order_)
    throw math::InputError(
        fmt::format("NgramModel::discount: order {} is not between 1 and {}", k, order_));
  return discounts_[static_cast<std::size_t>(k - 1)];
}

double NgramModel::probability(std::string_view context, unsigned char next) const {
  const std::size_t deepest = std::min(context.size(), static_cast<std::size_t>(order_ - 1));
  //! [probability]
  double p = 1.0 / 256.0;  // P_0, the uniform distribution
  std::uint64_t node = 0;  // h: the empty context, then one byte longer each step
  for (std::size_t d = 0; d <= deepest; ++d) {  // the order k = d + 1
    if (d > 0) {
      const auto it =
          longer_.find(key(node, static_cast<unsigned char>(context[context.size() - d])));
      if (it == longer_.end())
        break;  // h never seen, nor any longer context ending in it: P_k = P_{k-1}
      node = it->second;
    }
    const ContextTotals& h = totals_[node];
    if (h.count == 0)
      continue;  // seen only where nothing preceded it: no continuations to count
    const auto it = counts_.find(key(node, next));
    const double c = it == counts_.end() ? 0.0 : static_cast<double>(it->second);
    const double D = discounts_[d];
    p = (std::max(c - D, 0.0) + D * static_cast<double>(h.distinct) * p) /
        static_cast<double>(h.count);
  }
  //! [probability]
  return p;
}

double NgramModel::bits_per_byte(std::string_view text, std::size_t first) const {
  if (text.empty())
    throw math::InputError("NgramModel::bits_per_byte: the text is empty");
  if (first >= text.size())
    throw math::InputError(fmt::format(
        "NgramModel::bits_per_byte: scoring from byte {} of a text of {} bytes scores nothing",
        first, text.size()));
  const auto n = static_cast<std::size_t>(order_);
  double bits = 0.0;
  for (std::size_t i = first; i < text.size(); ++i) {
    const std::size_t start = i < n ? 0 : i - (n - 1);
    bits -=
        std::log2(probability(text.substr(start, i - start), static_cast<unsigned char>(text[i])));
  }
  return bits / static_cast<double>(text.size() - first);
}

}  // namespace attn::text
