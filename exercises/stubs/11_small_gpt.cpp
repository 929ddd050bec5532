// Chapter 11's exercises: your answers go here. Each function's statement, parameters and
// hint are above its declaration in exercises/11_small_gpt.hpp and at the end of the
// chapter's page. Replace each not_solved(...) line with your answer, then run
// ./scripts/exercises.
#include "11_small_gpt.hpp"

#include "exercise.hpp"

namespace attn::exercises {

// Exercise 11.1: one merge of BPE training.
// Its statement and hint: exercises/11_small_gpt.hpp, or ./scripts/exercises 11.1.
std::optional<attn::text::Merge> bpe_merge_step(std::vector<CountedPiece>& pieces,
                                                attn::text::TokenId new_id) {
  not_solved("11.1", pieces, new_id);
}

// Exercise 11.2: top-p (nucleus) filtering.
// Its statement and hint: exercises/11_small_gpt.hpp, or ./scripts/exercises 11.2.
arma::rowvec top_p_filter(const arma::rowvec& probabilities, double p) {
  not_solved("11.2", probabilities, p);
}

}  // namespace attn::exercises
