/// \file
/// \brief Today's changes to GPT-2's block, as one list: each a setting of TransformerConfig's
///        fields. Chapter 12 measures them, and the tests hold the readable step, its finite
///        differences, its cached decoder and the float32 step to one another on each, so a
///        variant added here is tested everywhere without a second list to keep.
#pragma once

#include <attn/gpt/model.hpp>

#include <armadillo>

#include <array>
#include <cstddef>
#include <span>
#include <string_view>

namespace attn::gpt {

/// \brief One of today's changes to GPT-2's block.
enum class Variant {
  rotary,               ///< rotary positions (RoPE) for the position table (Llama).
  no_positions,         ///< no positions at all, only the causal mask ("NoPE").
  grouped_query,        ///< VariantSizes::kv_heads key/value heads for the query heads.
  multi_query,          ///< one key/value head.
  sliding_window,       ///< each token attends to the last VariantSizes::sliding_window keys
                        ///< (Mistral).
  rms_norm,             ///< RMSNorm for layer norm.
  swiglu,               ///< the SwiGLU MLP for GELU's.
  no_attention_biases,  ///< attention without \f$b_Q, b_K, b_V, b_O\f$ (Llama, Mistral; Qwen2
                        ///< drops only \f$b_O\f$).
  attention_only,       ///< no MLP: each block is attention alone (d_ff 0), the models of
                        ///< chapter 13's induction-head experiment (Elhage et al., 2021).
};

/// Every variant, in the order of the enum: the list the tests loop over.
inline constexpr std::array kEveryVariant = {
    Variant::rotary,      Variant::no_positions,        Variant::grouped_query,
    Variant::multi_query, Variant::sliding_window,      Variant::rms_norm,
    Variant::swiglu,      Variant::no_attention_biases, Variant::attention_only};

/// \brief The sizes some variants need.
struct VariantSizes {
  arma::uword kv_heads = 2;        ///< \f$g\f$ for Variant::grouped_query, dividing \f$h\f$.
  arma::uword sliding_window = 3;  ///< \f$w\f$ for Variant::sliding_window.
  arma::uword swiglu_d_ff = 0;     ///< SwiGLU's hidden width; 0 keeps the config's d_ff.
};

/// \brief The name of a variant, as the enum spells it (`"grouped_query"`).
/// \param variant the change. \return its name, or empty for a value outside the enum.
constexpr std::string_view to_string(Variant variant) {
  switch (variant) {
    case Variant::rotary:
      return "rotary";
    case Variant::no_positions:
      return "no_positions";
    case Variant::grouped_query:
      return "grouped_query";
    case Variant::multi_query:
      return "multi_query";
    case Variant::sliding_window:
      return "sliding_window";
    case Variant::rms_norm:
      return "rms_norm";
    case Variant::swiglu:
      return "swiglu";
    case Variant::no_attention_biases:
      return "no_attention_biases";
    case Variant::attention_only:
      return "attention_only";
  }
  return "";
}

// The build checks that kEveryVariant lists every value of the enum, in order: a value added
// to the enum without a name stops the build at to_string()'s switch, and one named but not
// listed here stops it at this assertion.
static_assert(
    [] {
      for (std::size_t k = 0; k < kEveryVariant.size(); ++k)
        if (kEveryVariant[k] != static_cast<Variant>(k))
          return false;
      return to_string(static_cast<Variant>(kEveryVariant.size())).empty();
    }(),
    "kEveryVariant must list every Variant, in the enum's order");

/// \brief A configuration with one change made.
/// \param variant the change. \param config the model before it. \param sizes its sizes.
/// \return \p config with the fields of \p variant set; check_config() judges the result.
TransformerConfig with(Variant variant, TransformerConfig config, const VariantSizes& sizes = {});

/// \brief A configuration with several changes made, in order.
/// \param variants the changes. \param config the model before them. \param sizes their sizes.
/// \return \p config with each change made.
TransformerConfig with(std::span<const Variant> variants, TransformerConfig config,
                       const VariantSizes& sizes = {});

}  // namespace attn::gpt
