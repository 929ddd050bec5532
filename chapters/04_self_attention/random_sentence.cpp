#include "random_sentence.hpp"

#include <attn/book/grid_text.hpp>
#include <attn/numpy/numpy_random.hpp>

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace attn::ch04 {

RandomSentence random_sentence(const std::string& seed, const std::string& sentence,
                               const RandomSetup& setup) {
  const std::vector<std::string> tokens = book::split_words(sentence);
  if (tokens.empty())
    throw std::invalid_argument("the sentence needs at least one word");
  if (setup.d_model == 0 || setup.d_k == 0 || setup.d_v == 0 || !std::isfinite(setup.weight_scale))
    throw std::invalid_argument(
        fmt::format("random_sentence: d_model = {}, d_k = {}, d_v = {} must "
                    "be at least 1 and weight_scale = {} finite",
                    setup.d_model, setup.d_k, setup.d_v, setup.weight_scale));
  //! [random-sentence]
  RandomSentence r;
  r.tokens = tokens;  // the sentence's words, as Python's sentence.split() gives them
  numpy::Generator rng = numpy::default_rng(seed);
  // The article's order: X first, then W_Q, W_K, W_V.
  r.X = rng.normal(r.tokens.size(), setup.d_model);
  r.W.W_Q = rng.normal(setup.d_model, setup.d_k) * setup.weight_scale;
  r.W.W_K = rng.normal(setup.d_model, setup.d_k) * setup.weight_scale;
  r.W.W_V = rng.normal(setup.d_model, setup.d_v) * setup.weight_scale;
  return r;
  //! [random-sentence]
}

}  // namespace attn::ch04
