#include "agreement.hpp"

#include "attn/math/validate.hpp"
#include "attn/numpy/numpy_random.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>
#include <stdexcept>

namespace attn::ch10 {

namespace {

const std::vector<std::string> kNouns{"cat", "cats",  "dog",   "dogs",   "bird",  "birds",
                                      "fox", "foxes", "horse", "horses", "mouse", "mice"};
const std::vector<std::string> kRelativeVerbs{"saw", "chased", "heard", "followed"};
const std::vector<std::string> kAdverbs{"today", "yesterday", "again"};
const std::vector<std::string> kAdjectiveVerbs{"thirsty", "drank", "hungry", "ate",
                                               "tired",   "slept", "happy",  "sang"};

// int(k * u) for a draw u in [0, 1): Python's way of picking one of k.
arma::uword pick(numpy::Generator& rng, arma::uword k) {
  return static_cast<arma::uword>(static_cast<double>(k) * rng.random());
}

}  // namespace

const std::vector<std::string>& vocabulary() {
  static const std::vector<std::string> words = [] {
    std::vector<std::string> v{".", "the", "that", "was", "were", "so", "it", "they"};
    for (const auto* group : {&kNouns, &kRelativeVerbs, &kAdverbs, &kAdjectiveVerbs})
      v.insert(v.end(), group->begin(), group->end());
    return v;
  }();
  return words;
}

arma::uword word_id(const std::string& word) {
  const std::vector<std::string>& v = vocabulary();
  const auto found = std::find(v.begin(), v.end(), word);
  if (found == v.end())
    throw std::invalid_argument(
        fmt::format("unknown word \"{}\"; the words are: {}", word, fmt::join(v, " ")));
  return static_cast<arma::uword>(found - v.begin());
}

std::vector<std::string> words(const arma::uvec& tokens) {
  std::vector<std::string> out;
  for (const arma::uword t : tokens)
    out.push_back(vocabulary().at(t));
  return out;
}

std::string text(const arma::uvec& tokens) {
  return fmt::format("{}", fmt::join(words(tokens), " "));
}

arma::uvec parse(const std::string& words) {
  std::istringstream in(words);
  std::vector<arma::uword> ids;
  for (std::string w; in >> w;)
    ids.push_back(word_id(w));
  if (ids.empty())
    throw std::invalid_argument("the prompt needs at least one word");
  return arma::uvec(ids);
}

//! [generate]
std::vector<Sentence> generate(std::uint64_t seed, std::size_t count) {
  numpy::Generator rng = numpy::default_rng(seed);
  std::vector<Sentence> out;
  for (std::size_t s = 0; s < count; ++s) {
    const arma::uword n1 = pick(rng, 6);
    const bool n1_plural = rng.random() < 0.5;
    const arma::uword n2 = pick(rng, 6);
    const bool n2_plural = rng.random() < 0.5;
    const std::string& verb = kRelativeVerbs[pick(rng, 4)];
    const bool object_relative = rng.random() >= 0.5;
    const arma::uword adverb = pick(rng, 4);  // 0: none
    const arma::uword adjective = pick(rng, 4);

    const std::string& subject = kNouns[2 * n1 + n1_plural];
    const std::string& distractor = kNouns[2 * n2 + n2_plural];
    std::vector<std::string> w{"the", subject, "that"};
    if (object_relative)
      w.insert(w.end(), {"the", distractor, verb});
    else
      w.insert(w.end(), {verb, "the", distractor});
    if (adverb > 0)
      w.push_back(kAdverbs[adverb - 1]);
    w.insert(w.end(), {n1_plural ? "were" : "was", kAdjectiveVerbs[2 * adjective], "so",
                       n1_plural ? "they" : "it", kAdjectiveVerbs[2 * adjective + 1], "."});

    std::vector<arma::uword> ids;
    for (const std::string& word : w)
      ids.push_back(word_id(word));
    Sentence sentence;
    sentence.tokens = arma::uvec(ids);
    sentence.distractor = object_relative ? 4 : 5;
    sentence.verb_slot = adverb > 0 ? 6 : 5;
    sentence.pronoun_slot = sentence.verb_slot + 3;
    sentence.subject_plural = n1_plural;
    sentence.distractor_plural = n2_plural;
    out.push_back(std::move(sentence));
  }
  return out;
}
//! [generate]

double loss_floor(const std::vector<Sentence>& sentences) {
  const double choices =
      static_cast<double>(kNouns.size() * kNouns.size() * 2 * kRelativeVerbs.size() *
                          (kAdverbs.size() + 1) * (kAdjectiveVerbs.size() / 2));
  double predicted = 0.0;
  for (const Sentence& s : sentences)
    predicted += static_cast<double>(s.tokens.n_elem - 1);
  return predicted > 0 ? std::log(choices) * static_cast<double>(sentences.size()) / predicted
                       : 0.0;
}

std::size_t repeated(const std::vector<Sentence>& training, const std::vector<Sentence>& test) {
  std::set<std::string> seen;
  for (const Sentence& s : training)
    seen.insert(text(s.tokens));
  return static_cast<std::size_t>(std::count_if(
      test.begin(), test.end(), [&](const Sentence& s) { return seen.count(text(s.tokens)) > 0; }));
}

bool agrees(const arma::uvec& text, bool plural) {
  const auto first_of = [&](const char* a, const char* b) {
    for (const arma::uword t : text)
      if (t == word_id(a) || t == word_id(b))
        return vocabulary()[t];
    return std::string();
  };
  return first_of("was", "were") == (plural ? "were" : "was") &&
         first_of("it", "they") == (plural ? "they" : "it");
}

Accuracy accuracy(const std::vector<Sentence>& sentences, const std::vector<arma::mat>& scores) {
  if (scores.size() != sentences.size())
    throw std::invalid_argument(fmt::format("accuracy: {} score matrices for {} sentences",
                                            scores.size(), sentences.size()));
  const arma::uword was = word_id("was"), were = word_id("were");
  const arma::uword it = word_id("it"), they = word_id("they");
  arma::uword right = 0, right_disagreeing = 0;
  Accuracy a;
  for (std::size_t k = 0; k < sentences.size(); ++k) {
    const Sentence& s = sentences[k];
    const arma::mat& z = scores[k];
    if (z.n_rows + 1 != s.tokens.n_elem || z.n_cols != vocabulary().size())
      throw std::invalid_argument(
          fmt::format("accuracy: sentence {} has {} words but scores of "
                      "({} × {})",
                      k, s.tokens.n_elem, z.n_rows, z.n_cols));
    if (z.has_nan())  // a NaN compares false both ways: it would count as a silent "wrong"
      throw math::InputError(fmt::format("accuracy: the scores of sentence {} hold a NaN", k));
    if (s.verb_slot >= z.n_rows || s.pronoun_slot >= z.n_rows)
      throw math::InputError(
          fmt::format("accuracy: sentence {} has slots {} and {}, but only {} "
                      "predicted words",
                      k, s.verb_slot, s.pronoun_slot, z.n_rows));
    const bool plural = s.subject_plural;
    const bool disagree = s.subject_plural != s.distractor_plural;
    for (const auto& [row, yes, no] :
         {std::tuple{s.verb_slot, plural ? were : was, plural ? was : were},
          std::tuple{s.pronoun_slot, plural ? they : it, plural ? it : they}}) {
      const bool correct = z(row, yes) > z(row, no);
      right += correct;
      ++a.slots;
      if (disagree) {
        right_disagreeing += correct;
        ++a.disagreeing_slots;
      }
    }
  }
  a.all = a.slots ? static_cast<double>(right) / static_cast<double>(a.slots) : 0.0;
  a.disagreeing = a.disagreeing_slots ? static_cast<double>(right_disagreeing) /
                                            static_cast<double>(a.disagreeing_slots)
                                      : 0.0;
  return a;
}

arma::mat bigram_counts(const std::vector<Sentence>& sentences) {
  const arma::uword V = vocabulary().size();
  arma::mat counts(V, V, arma::fill::zeros);
  for (const Sentence& s : sentences)
    if (!s.tokens.is_empty() && s.tokens.max() >= V)
      throw std::out_of_range(
          fmt::format("bigram_counts: a sentence holds the id {}, outside a "
                      "vocabulary of {}",
                      s.tokens.max(), V));
  for (const Sentence& s : sentences)
    for (arma::uword i = 0; i + 1 < s.tokens.n_elem; ++i)
      counts(s.tokens(i), s.tokens(i + 1)) += 1;
  return counts;
}

namespace {

// Bigram counts as bigram_counts() makes them: (V × V), finite, at least 0.
void require_counts(std::string_view what, const arma::mat& counts) {
  const arma::uword V = vocabulary().size();
  if (counts.n_rows != V || counts.n_cols != V)
    throw math::ShapeError(
        fmt::format("{}: counts is {}, not ({} × {})", what, math::shape_of(counts), V, V));
  math::require_finite("counts", counts);
  if (counts.min() < 0)
    throw math::InputError(fmt::format("{}: counts holds a negative count {}", what, counts.min()));
}

void require_tokens(std::string_view what, const Sentence& s) {
  if (s.tokens.is_empty())
    throw math::InputError(fmt::format("{}: a sentence has no token", what));
  if (s.tokens.max() >= vocabulary().size())
    throw std::out_of_range(
        fmt::format("{}: a sentence holds the id {}, outside a vocabulary "
                    "of {}",
                    what, s.tokens.max(), vocabulary().size()));
}

}  // namespace

std::vector<arma::mat> bigram_scores(const arma::mat& counts,
                                     const std::vector<Sentence>& sentences) {
  require_counts("bigram_scores", counts);
  for (const Sentence& s : sentences)
    require_tokens("bigram_scores", s);
  std::vector<arma::mat> scores;
  for (const Sentence& s : sentences)
    scores.push_back(counts.rows(s.tokens.head(s.tokens.n_elem - 1)));
  return scores;
}

double bigram_loss(const arma::mat& counts, const std::vector<Sentence>& sentences) {
  require_counts("bigram_loss", counts);
  for (const Sentence& s : sentences)
    if (!s.tokens.is_empty())
      require_tokens("bigram_loss", s);
  const double V = static_cast<double>(counts.n_cols);
  const arma::vec totals = arma::sum(counts, 1);
  double loss = 0.0;
  arma::uword predicted = 0;
  for (const Sentence& s : sentences)
    for (arma::uword i = 0; i + 1 < s.tokens.n_elem; ++i, ++predicted) {
      const arma::uword a = s.tokens(i), b = s.tokens(i + 1);
      loss -= std::log((counts(a, b) + 1.0) / (totals(a) + V));
    }
  return predicted ? loss / static_cast<double>(predicted) : 0.0;
}

}  // namespace attn::ch10
