// Implementation of attn/numpy/numpy_random.hpp: numpy 1.24's default_rng stream.
// Written from the algorithm description (constants, bit layouts, order of operations);
// the ziggurat tables are computed at first use rather than pasted in.
#include "attn/numpy/numpy_random.hpp"

#include <cmath>
#include <cstddef>
#include <stdexcept>

namespace attn::numpy {
namespace {

// ---------------------------------------------------------------------------------------
// SeedSequence hashing constants (numpy's seed-sequence design).
// ---------------------------------------------------------------------------------------
constexpr std::uint32_t kMixHashInit = 0x43b0d7e5;  // running constant for hashmix
constexpr std::uint32_t kMixHashMultiplier = 0x931e8875;
constexpr std::uint32_t kMixMultiplierL = 0xca01f9dd;  // mix(x, y) = L*x - R*y
constexpr std::uint32_t kMixMultiplierR = 0x4973f715;
constexpr std::uint32_t kOutputHashInit = 0x8b51f9dd;  // running constant for output words
constexpr std::uint32_t kOutputHashMultiplier = 0x58f38ded;
constexpr unsigned kXorShift = 16;

/// hashmix(value): xor in the running constant, advance it, multiply, fold high bits down.
std::uint32_t hashmix(std::uint32_t value, std::uint32_t& hash_const) {
  value ^= hash_const;
  hash_const *= kMixHashMultiplier;
  value *= hash_const;
  return value ^ (value >> kXorShift);
}

/// mix(x, y) = L*x - R*y (mod 2^32), then fold the high bits down.
std::uint32_t mix(std::uint32_t x, std::uint32_t y) {
  std::uint32_t result = kMixMultiplierL * x - kMixMultiplierR * y;
  return result ^ (result >> kXorShift);
}

/// Parses a non-negative decimal integer of any length into 32-bit words, low word first.
std::vector<std::uint32_t> decimal_to_words(const std::string& text) {
  if (text.empty()) {
    throw std::invalid_argument(
        "SeedSequence: seed must be a non-negative decimal integer, got an empty string \"\"");
  }
  std::vector<std::uint32_t> words{0};
  for (char c : text) {
    if (c < '0' || c > '9') {
      throw std::invalid_argument(
          "SeedSequence: seed must be a non-negative decimal integer (digits 0-9 only), got \"" +
          text + "\"");
    }
    // words = words * 10 + digit, carrying 32 bits at a time.
    std::uint64_t carry = static_cast<std::uint64_t>(c - '0');
    for (std::uint32_t& word : words) {
      const std::uint64_t value = static_cast<std::uint64_t>(word) * 10 + carry;
      word = static_cast<std::uint32_t>(value);
      carry = value >> 32;
    }
    if (carry != 0)
      words.push_back(static_cast<std::uint32_t>(carry));
  }
  return words;  // leading zeros never add words, so "0" and "000" both give {0}
}

std::vector<std::uint32_t> uint64_to_words(std::uint64_t seed) {
  std::vector<std::uint32_t> words{static_cast<std::uint32_t>(seed)};
  if (seed >> 32 != 0)
    words.push_back(static_cast<std::uint32_t>(seed >> 32));
  return words;
}

// ---------------------------------------------------------------------------------------
// 128-bit arithmetic on two 64-bit halves (modulo 2^128).
// ---------------------------------------------------------------------------------------
UInt128 add(UInt128 a, UInt128 b) {
  UInt128 sum;
  sum.low = a.low + b.low;
  const std::uint64_t carry = sum.low < a.low ? 1 : 0;
  sum.high = a.high + b.high + carry;
  return sum;
}

/// Full 64 x 64 -> 128-bit product, schoolbook on 32-bit halves.
UInt128 multiply_full(std::uint64_t a, std::uint64_t b) {
  constexpr std::uint64_t kLow32 = 0xffffffffULL;
  const std::uint64_t a_lo = a & kLow32, a_hi = a >> 32;
  const std::uint64_t b_lo = b & kLow32, b_hi = b >> 32;
  const std::uint64_t lo_lo = a_lo * b_lo;
  const std::uint64_t lo_hi = a_lo * b_hi;
  const std::uint64_t hi_lo = a_hi * b_lo;
  const std::uint64_t hi_hi = a_hi * b_hi;
  // Sum of everything landing in bits 32..95; cannot overflow 64 bits (3 * (2^32 - 1)).
  const std::uint64_t middle = (lo_lo >> 32) + (lo_hi & kLow32) + (hi_lo & kLow32);
  UInt128 product;
  product.low = (middle << 32) | (lo_lo & kLow32);
  product.high = hi_hi + (lo_hi >> 32) + (hi_lo >> 32) + (middle >> 32);
  return product;
}

/// a * b mod 2^128: the high x high term is a multiple of 2^128 and drops out.
UInt128 multiply(UInt128 a, UInt128 b) {
  UInt128 product = multiply_full(a.low, b.low);
  product.high += a.high * b.low + a.low * b.high;
  return product;
}

constexpr UInt128 kPcgMultiplier{0x2360ED051FC65DA4ULL, 0x4385DF649FCCF645ULL};

std::uint64_t rotate_right(std::uint64_t value, unsigned rotation) {
  return (value >> rotation) | (value << ((64U - rotation) & 63U));  // "& 63" keeps rot=0 defined
}

/// 2^-53: spacing of doubles in [0.5, 1); 53 random bits times it fill [0, 1) evenly.
constexpr double kTwoPowMinus53 = 1.0 / 9007199254740992.0;

double to_unit_double(std::uint64_t bits) {
  return static_cast<double>(bits >> 11) * kTwoPowMinus53;
}

// ---------------------------------------------------------------------------------------
// 256-layer ziggurat for the standard normal (numpy's constants).
// ---------------------------------------------------------------------------------------
constexpr int kLayers = 256;
constexpr double kTailStart = 3.6541528853610088;          // r: x of the base layer's edge
constexpr double kInverseTailStart = 0.27366123732975828;  // 1 / r, as numpy rounds it
constexpr double kLayerArea = 0.00492867323397465;         // v: area of every layer
constexpr double kTwoPow52 = 4503599627370496.0;           // rabs has 52 random bits
constexpr std::uint64_t kMantissaMask = (std::uint64_t{1} << 52) - 1;

double unnormalized_gaussian(double x) {
  return std::exp(-0.5 * x * x);
}

struct ZigguratTables {
  std::array<double, kLayers> w{};         // x scale per unit of rabs: x = rabs * w[idx]
  std::array<std::uint64_t, kLayers> k{};  // rabs < k[idx] lies surely under the curve
  std::array<double, kLayers> f{};         // f(x[idx]), heights of the layer edges
};

ZigguratTables build_ziggurat_tables() {
  // Layer edges: every layer has area v, so walking down from the tail start r,
  // x[i-1] solves f(x[i-1]) = v / x[i] + f(x[i]).
  std::array<double, kLayers> x{};
  x[kLayers - 1] = kTailStart;
  for (int i = kLayers - 1; i >= 2; --i) {
    x[i - 1] = std::sqrt(-2.0 * std::log(kLayerArea / x[i] + unnormalized_gaussian(x[i])));
  }
  const double f_r = unnormalized_gaussian(kTailStart);
  ZigguratTables tables;
  // Layer 0 is the base strip plus the tail; its width is the one with area v, v / f(r).
  tables.w[0] = kLayerArea / f_r / kTwoPow52;
  tables.k[0] = static_cast<std::uint64_t>(std::floor(kTwoPow52 * kTailStart * f_r / kLayerArea));
  tables.k[1] = 0;  // the top layer has no part surely under the curve
  tables.f[0] = 1.0;
  for (int i = 1; i < kLayers; ++i) {
    tables.w[i] = x[i] / kTwoPow52;
    tables.f[i] = unnormalized_gaussian(x[i]);
    if (i >= 2)
      tables.k[i] = static_cast<std::uint64_t>(std::floor(kTwoPow52 * x[i - 1] / x[i]));
  }
  return tables;
}

const ZigguratTables& ziggurat_tables() {
  static const ZigguratTables tables = build_ziggurat_tables();  // built once, thread-safe
  return tables;
}

/// Marsaglia's tail method for |x| > r: exponential proposals accepted by a second exponential.
double sample_normal_tail(PCG64& bits, bool negative) {
  for (;;) {
    // log1p(-u) = log(1 - u): 1 - u is in (0, 1], so the log is always finite.
    const double xx = -kInverseTailStart * std::log1p(-bits.random());
    const double yy = -std::log1p(-bits.random());
    if (yy + yy > xx * xx)
      return negative ? -(kTailStart + xx) : kTailStart + xx;
  }
}

/// In the wedge between layer idx's rectangle and the curve: accept x if a uniform height in
/// [f[idx], f[idx-1]) falls under the curve.
bool wedge_accepts(PCG64& bits, const ZigguratTables& tables, int idx, double x) {
  const double height = (tables.f[idx - 1] - tables.f[idx]) * bits.random() + tables.f[idx];
  return height < unnormalized_gaussian(x);
}

}  // namespace

// -----------------------------------------------------------------------------------------
// SeedSequence
// -----------------------------------------------------------------------------------------
SeedSequence::SeedSequence(std::uint64_t seed) : entropy_words_(uint64_to_words(seed)) {
  mix_entropy();
}

SeedSequence::SeedSequence(const std::string& decimal_seed)
    : entropy_words_(decimal_to_words(decimal_seed)) {
  mix_entropy();
}

//! [seed-sequence]
void SeedSequence::mix_entropy() {
  const std::size_t pool_size = pool_.size();
  std::uint32_t hash_const = kMixHashInit;  // one running constant for all three phases
  for (std::size_t i = 0; i < pool_size; ++i) {
    const std::uint32_t word = i < entropy_words_.size() ? entropy_words_[i] : 0;
    pool_[i] = hashmix(word, hash_const);
  }
  // Every pool word influences every other (ordered pairs, source outer, destination inner).
  for (std::size_t src = 0; src < pool_size; ++src) {
    for (std::size_t dst = 0; dst < pool_size; ++dst) {
      if (src != dst)
        pool_[dst] = mix(pool_[dst], hashmix(pool_[src], hash_const));
    }
  }
  // Seeds longer than the pool fold their extra words into every pool word.
  for (std::size_t src = pool_size; src < entropy_words_.size(); ++src) {
    for (std::size_t dst = 0; dst < pool_size; ++dst) {
      pool_[dst] = mix(pool_[dst], hashmix(entropy_words_[src], hash_const));
    }
  }
}
//! [seed-sequence]

std::vector<std::uint64_t> SeedSequence::generate_state_u64(std::size_t n) const {
  std::uint32_t hash_const = kOutputHashInit;
  auto next_word = [&](std::size_t i) {
    std::uint32_t word = pool_[i % pool_.size()] ^ hash_const;
    hash_const *= kOutputHashMultiplier;
    word *= hash_const;
    return static_cast<std::uint64_t>(word ^ (word >> kXorShift));
  };
  std::vector<std::uint64_t> state(n);
  for (std::size_t j = 0; j < n; ++j) {
    const std::uint64_t low = next_word(2 * j);  // numpy views uint32 pairs as little-endian
    const std::uint64_t high = next_word(2 * j + 1);
    state[j] = low | (high << 32);
  }
  return state;
}

// -----------------------------------------------------------------------------------------
// PCG64
// -----------------------------------------------------------------------------------------
PCG64::PCG64(UInt128 state, UInt128 increment) : state_(state), increment_(increment) {
  if (increment.low % 2 == 0)
    throw std::invalid_argument("PCG64: the increment must be odd, as every PCG64's is");
}

PCG64::PCG64(const SeedSequence& seed_sequence) {
  const std::vector<std::uint64_t> words = seed_sequence.generate_state_u64(4);
  const UInt128 initial_state{words[0], words[1]};
  // inc = (initseq << 1) | 1 with initseq = words[2]:words[3]; odd for the full period.
  increment_ = UInt128{(words[2] << 1) | (words[3] >> 63), (words[3] << 1) | 1};
  state_ = UInt128{};
  step();
  state_ = add(state_, initial_state);
  step();
}

void PCG64::step() {
  state_ = add(multiply(state_, kPcgMultiplier), increment_);
}

//! [xsl-rr]
std::uint64_t PCG64::next_uint64() {
  step();
  // XSL-RR: xor-fold the 128 bits to 64, then rotate by the top 6 bits (state >> 122).
  const auto rotation = static_cast<unsigned>(state_.high >> 58);
  return rotate_right(state_.high ^ state_.low, rotation);
}
//! [xsl-rr]

double PCG64::random() {
  return to_unit_double(next_uint64());
}

// -----------------------------------------------------------------------------------------
// Generator
// -----------------------------------------------------------------------------------------
Generator::Generator(PCG64 bit_generator) : bit_generator_(bit_generator) {}

std::uint64_t Generator::next_uint64() {
  return bit_generator_.next_uint64();
}

double Generator::random() {
  return bit_generator_.random();
}

//! [ziggurat-draw]
double Generator::normal() {
  const ZigguratTables& tables = ziggurat_tables();
  for (;;) {
    // One 64-bit word: 8 bits pick the layer, 1 bit the sign, 52 bits the position.
    std::uint64_t bits = bit_generator_.next_uint64();
    const int idx = static_cast<int>(bits & 0xff);
    bits >>= 8;
    const bool negative = (bits & 1) != 0;
    const std::uint64_t rabs = (bits >> 1) & kMantissaMask;
    double x = static_cast<double>(rabs) * tables.w[idx];
    if (negative)
      x = -x;
    if (rabs < tables.k[idx])
      return x;  // inside the layer's rectangle: ~99% of draws
    if (idx == 0)
      return sample_normal_tail(bit_generator_, ((rabs >> 8) & 1) != 0);
    if (wedge_accepts(bit_generator_, tables, idx, x))
      return x;
    // Rejected in the wedge: numpy starts over with a fresh 64-bit word.
  }
}
//! [ziggurat-draw]

//! [c-order]
arma::mat Generator::normal(arma::uword rows, arma::uword cols) {
  arma::mat matrix(rows, cols);
  for (arma::uword row = 0; row < rows; ++row) {
    for (arma::uword col = 0; col < cols; ++col)
      matrix(row, col) = normal();  // C order
  }
  return matrix;
}
//! [c-order]

Generator default_rng(std::uint64_t seed) {
  return Generator(PCG64(SeedSequence(seed)));
}

Generator default_rng(const std::string& decimal_seed) {
  return Generator(PCG64(SeedSequence(decimal_seed)));
}

}  // namespace attn::numpy
