// Transformers for the math tests: as training starts them, or with every weight random.
#pragma once

#include <attn/gpt/forward.hpp>

#include <armadillo>

#include <cstdint>
#include <string>

#include "normal_inputs.hpp"

namespace attn_test {

/// A GPT small enough to read whole: 11 tokens, d = 8 in 4 heads of 2, 2 blocks, 6 tokens of
/// context, GPT-2's choices.
inline attn::gpt::TransformerConfig small_gpt() {
  return {.vocabulary = 11,
          .d_model = 8,
          .heads = 4,
          .layers = 2,
          .d_ff = 12,
          .max_length = 6,
          .positions = attn::gpt::Positions::learned,
          .tied_embeddings = true};
}

/// attn::gpt::init_transformer(c) drawing from `draw`: a model as training starts it.
inline attn::gpt::TransformerWeights fresh_model(const attn::gpt::TransformerConfig& c,
                                                 const Normals& draw) {
  return attn::gpt::init_transformer(
      c, [&](arma::uword r, arma::uword k) { return draw.normal(r, k); });
}

/// fresh_model(c) with every parameter then redrawn from the same seeded stream, times 0.5,
/// plus 1 for the layer norms' gammas: no gradient is trivially zero.
inline attn::gpt::TransformerWeights random_model(const attn::gpt::TransformerConfig& c,
                                                  std::uint64_t seed) {
  const Normals draw(seed);
  attn::gpt::TransformerWeights w = fresh_model(c, draw);
  for (attn::gpt::Parameter& p : attn::gpt::parameters(w))
    *p.value = draw.normal(p.value->n_rows, p.value->n_cols) * 0.5 +
               (p.name.find("gamma") != std::string::npos ? 1.0 : 0.0);
  return w;
}

}  // namespace attn_test
