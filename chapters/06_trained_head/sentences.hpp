// Chapter 06's data: a small vocabulary of six kinds of word, the training sentences in which
// "it" refers to an animal, and the held-out test sentence. main.cpp tells the story with it.
#pragma once

#include <attn/numpy_random.hpp>
#include <attn/training.hpp>

#include <armadillo>

#include <string>
#include <vector>

namespace ch06 {

extern const std::vector<std::string> kTraining;  // "it" always refers to the animal
extern const std::string kTest;                   // held out: its "cat" and "milk" never train

// The sentences as training examples: embeddings (n × d_model), the row of "it" (the query)
// and the row of its animal (the target).
struct Sentences {
  std::vector<attn::AttentionExample> training;  // one per kTraining sentence
  attn::AttentionExample test;                   // kTest
};

// Draws the vocabulary's embeddings from rng, a (words × width) matrix of noise · N(0, 1) in
// vocabulary order, adds 1 at the column of each word's kind, and embeds every sentence.
// Throws std::invalid_argument if a sentence lacks "it" or an animal.
Sentences make_sentences(attn::numpy::Generator& rng, arma::uword width, double noise);

}  // namespace ch06
