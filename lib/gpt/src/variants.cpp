#include "attn/gpt/variants.hpp"

#include "not_a_choice.hpp"

#include <attn/math/validate.hpp>

#include <fmt/format.h>

namespace attn::gpt {

TransformerConfig with(Variant variant, TransformerConfig c, const VariantSizes& sizes) {
  switch (variant) {
    case Variant::rotary:
      c.positions = Positions::rotary;
      return c;
    case Variant::no_positions:
      c.positions = Positions::none;
      return c;
    case Variant::grouped_query:
      c.kv_heads = sizes.kv_heads;
      return c;
    case Variant::multi_query:
      c.kv_heads = 1;
      return c;
    case Variant::sliding_window:
      c.sliding_window = sizes.sliding_window;
      return c;
    case Variant::rms_norm:
      c.norm = Norm::rms_norm;
      return c;
    case Variant::swiglu:
      c.mlp = Mlp::swiglu;
      if (sizes.swiglu_d_ff != 0)
        c.d_ff = sizes.swiglu_d_ff;
      return c;
    case Variant::no_attention_biases:
      c.attention_biases = false;
      return c;
    case Variant::attention_only:
      c.mlp = Mlp::none;
      c.d_ff = 0;
      return c;
  }
  not_a_choice("with", "variant", variant);
}

TransformerConfig with(std::span<const Variant> variants, TransformerConfig c,
                       const VariantSizes& sizes) {
  for (const Variant v : variants)
    c = with(v, c, sizes);
  return c;
}

}  // namespace attn::gpt
