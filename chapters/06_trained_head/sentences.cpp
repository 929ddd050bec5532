#include "sentences.hpp"

#include <attn/book/grid_text.hpp>

#include <map>
#include <stdexcept>
#include <utility>

namespace attn::ch06 {
namespace {

//! [vocabulary]
// Each word is one of six kinds. Its embedding is the unit vector of its kind plus noise, so
// words of one kind are alike but never identical: "cat" is an animal the head has never seen.
enum Kind : arma::uword { animal, object, pronoun, verb, function_word, state };
const std::vector<std::pair<std::string, Kind>> kVocabulary = {
    {"the", function_word}, {"cat", animal},        {"dog", animal},    {"horse", animal},
    {"bird", animal},       {"cow", animal},        {"drank", verb},    {"ate", verb},
    {"chased", verb},       {"milk", object},       {"water", object},  {"bone", object},
    {"seeds", object},      {"grass", object},      {"ball", object},   {"because", function_word},
    {"it", pronoun},        {"was", function_word}, {"thirsty", state}, {"hungry", state},
    {"tired", state}};
//! [vocabulary]

// Every vocabulary word's embedding (1 × d_model) and whether it is an animal.
struct Lexicon {
  std::map<std::string, arma::rowvec> embedding;
  std::map<std::string, bool> is_animal;
};

}  // namespace

//! [data]
// In every training sentence "it" refers to the animal. The test sentence is held out.
const std::vector<std::string> kTraining = {"the dog drank the water because it was thirsty",
                                            "the horse ate the grass because it was hungry",
                                            "the bird ate the seeds because it was hungry",
                                            "the dog chased the ball because it was tired",
                                            "the cow drank the water because it was thirsty",
                                            "the dog ate the bone because it was hungry"};
const std::string kTest = "the cat drank the milk because it was thirsty";
//! [data]

namespace {

Lexicon make_lexicon(attn::numpy::Generator& rng, arma::uword width, double noise) {
  Lexicon lex;
  const arma::mat E = rng.normal(kVocabulary.size(), width) * noise;  // (words × d_model)
  for (arma::uword i = 0; i < kVocabulary.size(); ++i) {
    const auto& [word, kind] = kVocabulary[i];
    lex.embedding[word] = E.row(i);
    lex.embedding[word](kind) += 1.0;
    lex.is_animal[word] = kind == animal;
  }
  return lex;
}

attn::math::AttentionExample example(const Lexicon& lex, const std::string& sentence) {
  attn::math::AttentionExample e;
  e.tokens = attn::book::split_words(sentence);
  e.X.set_size(e.tokens.size(), lex.embedding.begin()->second.n_elem);
  bool has_pronoun = false, has_animal = false;
  for (arma::uword i = 0; i < e.tokens.size(); ++i) {
    e.X.row(i) = lex.embedding.at(e.tokens[i]);
    if (e.tokens[i] == "it")
      e.query = i, has_pronoun = true;
    if (lex.is_animal.at(e.tokens[i]))
      e.target = i, has_animal = true;
  }
  if (!has_pronoun || !has_animal)
    throw std::invalid_argument("\"" + sentence + "\" needs the word \"it\" and an animal");
  return e;
}

}  // namespace

Sentences make_sentences(attn::numpy::Generator& rng, arma::uword width, double noise) {
  const Lexicon lex = make_lexicon(rng, width, noise);
  Sentences s{{}, example(lex, kTest)};
  for (const std::string& sentence : kTraining)
    s.training.push_back(example(lex, sentence));
  return s;
}

}  // namespace attn::ch06
