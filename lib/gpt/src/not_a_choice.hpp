// The error of a switch on one of the GPT's choices (Positions, Norm, Mlp, Precision, Variant)
// that must return a value, for a value outside its enum, an integer cast to it: refused, so
// that no choice is ever taken by default. Private to attn::gpt.
#pragma once

#include <attn/math/validate.hpp>

#include <fmt/format.h>

#include <string_view>

namespace attn::gpt {

/// \brief Throws math::InputError: "who: 7 is not a choice of what".
/// \param who the function or type that met the value. \param what the enum's name.
/// \param value the value outside it.
template <typename Choice>
[[noreturn]] void not_a_choice(std::string_view who, std::string_view what, Choice value) {
  throw math::InputError(
      fmt::format("{}: {} is not a choice of {}", who, static_cast<int>(value), what));
}

}  // namespace attn::gpt
