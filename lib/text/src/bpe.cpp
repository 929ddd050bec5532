#include "attn/text/bpe.hpp"

#include "attn/math/validate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <queue>
#include <utility>

namespace attn::text {

namespace {

enum class ByteClass { kWhitespace, kLetter, kDigit, kOther };

ByteClass class_of(char c) {
  const auto b = static_cast<unsigned char>(c);
  if (b == ' ' || (b >= '\t' && b <= '\r'))  // \t \n \v \f \r are 9 to 13
    return ByteClass::kWhitespace;
  if ((b >= 'A' && b <= 'Z') || (b >= 'a' && b <= 'z') || b >= 0x80)
    return ByteClass::kLetter;
  if (b >= '0' && b <= '9')
    return ByteClass::kDigit;
  return ByteClass::kOther;
}

bool is_whitespace(char c) {
  return class_of(c) == ByteClass::kWhitespace;
}

// Where the piece that starts at `from` ends (pretokenize()'s rule; from < text.size()).
std::size_t piece_end(std::string_view text, std::size_t from) {
  const std::size_t n = text.size();
  std::size_t i = from;
  // 1. An optional space, then a run of one class other than whitespace.
  if (text[i] == ' ' && i + 1 < n && !is_whitespace(text[i + 1]))
    ++i;
  if (!is_whitespace(text[i])) {
    const ByteClass run = class_of(text[i]);
    while (i < n && class_of(text[i]) == run)
      ++i;
    return i;
  }
  // 2. A run of whitespace, less a last space that a non-whitespace byte follows.
  while (i < n && is_whitespace(text[i]))
    ++i;
  if (i < n && i - from > 1 && text[i - 1] == ' ')
    --i;
  return i;
}

// A pair of adjacent tokens as one key: left in the high half, right in the low half.
std::uint64_t pair_key(TokenId left, TokenId right) {
  return (std::uint64_t{left} << 32) | right;
}

Merge pair_of(std::uint64_t key) {
  return {static_cast<TokenId>(key >> 32), static_cast<TokenId>(key & 0xFFFFFFFFu)};
}

// Replaces every occurrence of `pair` in `tokens` by `made`, left to right.
void apply_merge(std::vector<TokenId>& tokens, Merge pair, TokenId made) {
  std::size_t out = 0;
  for (std::size_t i = 0; i < tokens.size(); ++out) {
    if (i + 1 < tokens.size() && tokens[i] == pair.left && tokens[i + 1] == pair.right) {
      tokens[out] = made;
      i += 2;
    } else {
      tokens[out] = tokens[i++];
    }
  }
  tokens.resize(out);
}

std::vector<TokenId> bytes_of(std::string_view piece) {
  std::vector<TokenId> tokens(piece.size());
  std::transform(piece.begin(), piece.end(), tokens.begin(),
                 [](char c) { return TokenId{static_cast<unsigned char>(c)}; });
  return tokens;
}

// The error for a token id outside the vocabulary; `which` names the token.
math::InputError outside_vocabulary(const std::string& which, std::size_t vocab_size) {
  return math::InputError(fmt::format("{} is outside the vocabulary of {} tokens (ids 0 to {})",
                                      which, vocab_size, vocab_size - 1));
}

// One distinct piece of the training text: its tokens so far, and how often it occurs.
struct Word {
  std::vector<TokenId> tokens;
  std::int64_t count = 0;
};

// A pair's count when it was pushed on the heap. The best candidate is on top: the highest
// count, then the smallest left id, then the smallest right id.
struct Candidate {
  std::int64_t count = 0;
  Merge pair;

  friend bool operator<(const Candidate& a, const Candidate& b) {
    if (a.count != b.count)
      return a.count < b.count;
    if (a.pair.left != b.pair.left)
      return a.pair.left > b.pair.left;
    return a.pair.right > b.pair.right;
  }
};

// Calls f(left, right) for each adjacent pair of tokens, in order.
template <class F>
void for_each_pair(const std::vector<TokenId>& tokens, F f) {
  for (std::size_t i = 0; i + 1 < tokens.size(); ++i)
    f(tokens[i], tokens[i + 1]);
}

// The training state: every distinct piece, every pair's count, and where each pair occurs.
class PairCounts {
 public:
  explicit PairCounts(std::vector<Word> words) : words_(std::move(words)) {
    for (std::size_t w = 0; w < words_.size(); ++w) {
      count_pairs(w, +1);
      for_each_pair(words_[w].tokens, [&](TokenId left, TokenId right) {
        where_[pair_key(left, right)].push_back(w);
      });
    }
    for (const auto& [key, count] : count_)
      heap_.push({count, pair_of(key)});
    changed_.clear();  // every count is on the heap
  }

  // The most frequent pair (ties: the smallest left id, then right id); none when no piece has
  // two tokens left. The heap holds every pair's current count, and also counts that have
  // changed since they were pushed: those are stale, and skipped.
  std::optional<Merge> best() {
    while (!heap_.empty()) {
      const Candidate top = heap_.top();
      heap_.pop();
      const auto now = count_.find(pair_key(top.pair.left, top.pair.right));
      if (now != count_.end() && now->second == top.count)
        return top.pair;
    }
    return std::nullopt;
  }

  // Replaces `pair` by `made` in every word that holds it, recounting those words alone.
  void merge(Merge pair, TokenId made) {
    const std::uint64_t key = pair_key(pair.left, pair.right);
    std::vector<std::size_t> holders = std::move(where_.at(key));
    where_.erase(key);
    // A word is listed each time it gained the pair, so possibly more than once.
    std::sort(holders.begin(), holders.end());
    holders.erase(std::unique(holders.begin(), holders.end()), holders.end());
    changed_.clear();
    for (const std::size_t w : holders) {
      std::vector<TokenId>& tokens = words_[w].tokens;
      if (!holds(tokens, pair))
        continue;  // it held the pair once, and an earlier merge took it
      count_pairs(w, -1);
      apply_merge(tokens, pair, made);
      count_pairs(w, +1);
      for_each_pair(tokens, [&](TokenId left, TokenId right) {
        if (left == made || right == made)  // a pair new to the word
          where_[pair_key(left, right)].push_back(w);
      });
    }
    std::sort(changed_.begin(), changed_.end());
    changed_.erase(std::unique(changed_.begin(), changed_.end()), changed_.end());
    for (const std::uint64_t changed : changed_) {
      const auto now = count_.find(changed);
      if (now != count_.end())
        heap_.push({now->second, pair_of(changed)});
    }
  }

 private:
  static bool holds(const std::vector<TokenId>& tokens, Merge pair) {
    bool found = false;
    for_each_pair(tokens, [&](TokenId left, TokenId right) {
      found = found || (left == pair.left && right == pair.right);
    });
    return found;
  }

  // Adds (sign +1) or takes away (sign -1) the pairs of word w, each times the word's count.
  void count_pairs(std::size_t w, std::int64_t sign) {
    const Word& word = words_[w];
    for_each_pair(word.tokens, [&](TokenId left, TokenId right) {
      const std::uint64_t key = pair_key(left, right);
      const auto it = count_.try_emplace(key, 0).first;
      it->second += sign * word.count;
      if (it->second == 0)
        count_.erase(it);
      changed_.push_back(key);
    });
  }

  std::vector<Word> words_;
  std::unordered_map<std::uint64_t, std::int64_t> count_;  // pair → occurrences, when > 0
  // pair → the words that hold it; a word that no longer holds it may still be listed.
  std::unordered_map<std::uint64_t, std::vector<std::size_t>> where_;
  std::priority_queue<Candidate> heap_;
  std::vector<std::uint64_t> changed_;  // the pairs whose count the merge under way changed
};

}  // namespace

std::vector<std::string_view> pretokenize(std::string_view text) {
  std::vector<std::string_view> pieces;
  for (std::size_t from = 0, to = 0; from < text.size(); from = to) {
    to = piece_end(text, from);
    pieces.push_back(text.substr(from, to - from));
  }
  return pieces;
}

BpeTokenizer::BpeTokenizer(std::vector<Merge> merges) : merges_(std::move(merges)) {
  bytes_.reserve(kByteTokens + merges_.size());
  for (std::size_t b = 0; b < kByteTokens; ++b)
    bytes_.emplace_back(1, static_cast<char>(b));
  for (std::size_t k = 0; k < merges_.size(); ++k) {
    const Merge m = merges_[k];
    const std::size_t made = bytes_.size();
    if (m.left >= made || m.right >= made) {
      throw math::InputError(fmt::format(
          "BpeTokenizer: merge {} ({}, {}) uses a token not yet made: it may use ids 0 to {}", k,
          m.left, m.right, made - 1));
    }
    if (!made_by_.try_emplace(pair_key(m.left, m.right), static_cast<TokenId>(made)).second) {
      throw math::InputError(fmt::format("BpeTokenizer: merge {} ({}, {}) repeats merge {}", k,
                                         m.left, m.right,
                                         made_by_.at(pair_key(m.left, m.right)) - kByteTokens));
    }
    bytes_.push_back(bytes_[m.left] + bytes_[m.right]);
  }
}

std::vector<TokenId> BpeTokenizer::encode_piece(std::string_view piece) const {
  std::vector<TokenId> tokens = bytes_of(piece);
  while (tokens.size() > 1) {
    // The adjacent pair of lowest rank, which is the pair that makes the smallest id.
    TokenId made = std::numeric_limits<TokenId>::max();
    for (std::size_t i = 0; i + 1 < tokens.size(); ++i) {
      const auto it = made_by_.find(pair_key(tokens[i], tokens[i + 1]));
      if (it != made_by_.end())
        made = std::min(made, it->second);
    }
    if (made == std::numeric_limits<TokenId>::max())
      break;
    apply_merge(tokens, merges_[made - kByteTokens], made);
  }
  return tokens;
}

std::vector<TokenId> BpeTokenizer::encode(std::string_view text) const {
  std::vector<TokenId> ids;
  ids.reserve(text.size() / 2);
  std::unordered_map<std::string_view, std::vector<TokenId>> seen;
  for (std::size_t from = 0, to = 0; from < text.size(); from = to) {
    to = piece_end(text, from);
    const auto [it, fresh] = seen.try_emplace(text.substr(from, to - from));
    if (fresh)
      it->second = encode_piece(it->first);
    ids.insert(ids.end(), it->second.begin(), it->second.end());
  }
  return ids;
}

std::string BpeTokenizer::decode(std::span<const TokenId> ids) const {
  std::string text;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] >= bytes_.size()) {
      throw outside_vocabulary(fmt::format("decode: token {} at position {}", ids[i], i),
                               bytes_.size());
    }
    text += bytes_[ids[i]];
  }
  return text;
}

const std::string& BpeTokenizer::token_bytes(TokenId id) const {
  if (id >= bytes_.size())
    throw outside_vocabulary(fmt::format("token_bytes: token {}", id), bytes_.size());
  return bytes_[id];
}

BpeTokenizer train_bpe(std::string_view text, std::size_t vocab_size) {
  if (text.empty())
    throw math::InputError("train_bpe: the training text is empty");
  if (vocab_size < kByteTokens || vocab_size > std::numeric_limits<TokenId>::max()) {
    throw math::InputError(fmt::format(
        "train_bpe: vocab_size = {} is outside [256, 4294967295] (the 256 bytes, then merges)",
        vocab_size));
  }
  std::unordered_map<std::string_view, std::int64_t> piece_counts;
  for (const std::string_view piece : pretokenize(text))
    ++piece_counts[piece];
  std::vector<Word> words;  // in any order: the counts are sums, and ties go by id
  words.reserve(piece_counts.size());
  for (const auto& [piece, count] : piece_counts)
    words.push_back({bytes_of(piece), count});

  PairCounts counts(std::move(words));
  std::vector<Merge> merges;
  while (kByteTokens + merges.size() < vocab_size) {
    const std::optional<Merge> pair = counts.best();
    if (!pair)
      break;  // every piece is one token
    counts.merge(*pair, static_cast<TokenId>(kByteTokens + merges.size()));
    merges.push_back(*pair);
  }
  return BpeTokenizer(std::move(merges));
}

std::string printable(std::string_view bytes) {
  std::string text;
  text.reserve(bytes.size());
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    if (c == '\\')
      text += "\\\\";
    else if (c == '\t')
      text += "\\t";
    else if (c == '\n')
      text += "\\n";
    else if (c == '\r')
      text += "\\r";
    else if (b >= 0x20 && b <= 0x7E)
      text += c;
    else
      text += fmt::format("\\x{:02x}", b);
  }
  return text;
}

}  // namespace attn::text
