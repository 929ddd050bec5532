// Fuzzes the parsing of a decimal seed, attn::numpy::SeedSequence(const std::string&), which
// reads chapter 04's --seed and every seed the book passes as text (numpy takes integers of any
// size, so the library reads them as decimal text).
//
// The promises checked, besides no crash, leak or undefined behaviour:
// - the text is accepted exactly when it is one or more digits 0-9; anything else throws
//   std::invalid_argument;
// - an accepted seed below 2^64 hashes to the same state as the same number given as an integer.
#include <attn/numpy/numpy_random.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace {

[[noreturn]] void fail(const char* promise) {
  std::fprintf(stderr, "SeedSequence: %s\n", promise);
  std::abort();
}

// The text's value when every character is a digit and it is below 2^64.
bool small_number(const std::string& text, std::uint64_t& value) {
  value = 0;
  for (const char c : text) {
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (value > (UINT64_MAX - digit) / 10)
      return false;
    value = value * 10 + digit;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 4096)
    return 0;  // the conversion is quadratic in the digits; 4096 is ample
  const std::string text(reinterpret_cast<const char*>(data), size);
  const bool digits = !text.empty() && std::all_of(text.begin(), text.end(),
                                                   [](char c) { return c >= '0' && c <= '9'; });
  try {
    const attn::numpy::SeedSequence seeds(text);
    if (!digits)
      fail("accepted a seed that is not a decimal integer");
    std::uint64_t value = 0;
    if (small_number(text, value) &&
        seeds.generate_state_u64(4) != attn::numpy::SeedSequence(value).generate_state_u64(4)) {
      fail("the text and the integer of the same seed hash differently");
    }
  } catch (const std::invalid_argument&) {
    if (digits)
      fail("refused a seed made of digits");
  }
  return 0;
}
