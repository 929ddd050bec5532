/// \file numpy_random.hpp
/// \brief A C++ reproduction of numpy's `np.random.default_rng(seed)` stream.
///
/// The article reproduced in chapter 04 draws its random matrices with numpy 1.24. To get the
/// very same matrices in C++ we re-implement the three stages numpy chains together:
///   1. SeedSequence: hashes an integer seed into 64-bit words,
///   2. PCG64: a 128-bit linear congruential generator with XSL-RR output,
///   3. Generator: turns 64-bit outputs into uniforms and ziggurat normals.
/// The 64-bit stream and the uniforms are bit-identical to numpy; normals agree to about
/// 1e-14 relative (the ziggurat tables are computed here, not copied from numpy).
#pragma once

#include <armadillo>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace attn::numpy {

/// \brief An unsigned 128-bit integer stored as two 64-bit halves:
/// value = high * 2^64 + low.
///
/// Used for the PCG64 state so the code needs no compiler-specific `__int128`.
struct UInt128 {
  std::uint64_t high = 0;  ///< Most significant 64 bits.
  std::uint64_t low = 0;   ///< Least significant 64 bits.
};

/// \brief numpy's `np.random.SeedSequence`: hashes a non-negative integer seed of any size
/// into well-mixed 32-bit words that seed a bit generator.
///
/// Algorithm: the seed is split into 32-bit words (least significant first), hashed into a
/// pool of 4 words with `hashmix`/`mix`, and output words are drawn from the pool with a
/// second running hash constant.
class SeedSequence {
 public:
  /// \brief Seed from a 64-bit integer, like `np.random.SeedSequence(seed)`.
  /// \param seed The integer seed; 0 is allowed.
  explicit SeedSequence(std::uint64_t seed);

  /// \brief Seed from a decimal string so seeds above 2^64 are possible
  /// (numpy accepts Python integers of any size).
  /// \param decimal_seed Digits 0-9 only, e.g. "1361129467683753853853498429727072858169";
  ///        leading zeros are allowed.
  /// \throws std::invalid_argument if the text is empty or contains anything but digits
  ///         (signs, spaces, "0x", "1.5", ...); the message quotes the bad text.
  explicit SeedSequence(const std::string& decimal_seed);

  /// \brief The seed split into 32-bit words, least significant first (`0` gives `{0}`).
  /// \return The entropy words that are hashed into the pool.
  const std::vector<std::uint32_t>& entropy_words() const { return entropy_words_; }

  /// \brief numpy's `generate_state(n, np.uint64)`: 2n 32-bit output words d[0..2n) paired
  /// low word first, w64[j] = d[2j] | d[2j+1] << 32.
  /// \param n Number of 64-bit words wanted (PCG64 uses 4).
  /// \return The n words, in numpy's order; none for n = 0.
  std::vector<std::uint64_t> generate_state_u64(std::size_t n) const;

 private:
  /// Hashes entropy_words_ into pool_ (the `mix_entropy` step).
  void mix_entropy();

  std::vector<std::uint32_t> entropy_words_;  ///< Seed as 32-bit words, low word first.
  std::array<std::uint32_t, 4> pool_{};       ///< Hashed entropy pool (numpy's pool_size 4).
};

/// \brief numpy's PCG64 bit generator: a 128-bit LCG, state = state * multiplier + inc
/// (mod 2^128), whose output is the XSL-RR permutation of the new state.
class PCG64 {
 public:
  /// \brief Seed like `np.random.PCG64(seed_sequence)`: with w = generate_state_u64(4),
  /// initstate = w[0]:w[1], inc = (w[2]:w[3] << 1) | 1, then state = 0, step,
  /// state += initstate, step.
  /// \param seed_sequence Source of the four 64-bit seeding words.
  explicit PCG64(const SeedSequence& seed_sequence);

  /// \brief A generator resumed where another one was, as numpy's setter
  /// `bit_generator.state = {"state": {"state": ..., "inc": ...}, ...}` resumes it: its next
  /// output is the one the other would have given next (chapter 11's checkpoints).
  /// \param state a state() read earlier. \param increment the increment() read with it.
  /// \throws std::invalid_argument if \p increment is even (no PCG64 has an even one).
  PCG64(UInt128 state, UInt128 increment);

  /// \brief Advance one LCG step and return XSL-RR of the new state:
  /// (high64 ^ low64) rotated right by (state >> 122).
  /// \return The next 64-bit output, equal to numpy's `bit_generator.random_raw()`.
  std::uint64_t next_uint64();

  /// \brief A uniform double in [0, 1): (next_uint64() >> 11) * 2^-53.
  /// \return The same double as numpy's `next_double`.
  double random();

  /// \brief The current 128-bit LCG state (numpy's `.state["state"]["state"]`).
  /// \return The state as two 64-bit halves.
  UInt128 state() const { return state_; }

  /// \brief The odd LCG increment (numpy's `.state["state"]["inc"]`).
  /// \return The increment as two 64-bit halves.
  UInt128 increment() const { return increment_; }

 private:
  /// One LCG step: state = state * multiplier + increment (mod 2^128).
  void step();

  UInt128 state_;      ///< Current LCG state.
  UInt128 increment_;  ///< LCG increment; always odd so the period is 2^128.
};

/// \brief What `np.random.default_rng(seed)` returns: a PCG64 plus numpy's samplers.
class Generator {
 public:
  /// \brief Wrap an already seeded bit generator.
  /// \param bit_generator The PCG64 that supplies every random bit.
  explicit Generator(PCG64 bit_generator);

  /// \brief The next raw 64-bit output (`rng.bit_generator.random_raw()`).
  /// \return 64 random bits.
  std::uint64_t next_uint64();

  /// \brief One uniform double in [0, 1) (`rng.random()`).
  /// \return (next_uint64() >> 11) * 2^-53.
  double random();

  /// \brief One standard normal N(0, 1) by numpy's 256-layer ziggurat
  /// (`rng.standard_normal()`): a fast in-layer accept for about 99% of draws, the
  /// exponential tail sampler for layer 0, and a wedge rejection test otherwise.
  /// \return The normal draw; within about 1e-14 relative of numpy's.
  double normal();

  /// \brief A rows x cols matrix of standard normals, equal to
  /// `rng.normal(size=(rows, cols))`: numpy fills in C order (row by row), so draw k goes
  /// to row k / cols, column k % cols even though Armadillo stores column-major.
  /// \param rows Number of rows.
  /// \param cols Number of columns.
  /// \return The rows x cols matrix, every entry finite; with 0 rows or 0 columns an empty
  ///         matrix of that shape, and no draw is taken (as numpy's `size=(0, 3)`).
  arma::mat normal(arma::uword rows, arma::uword cols);

  /// \brief The underlying bit generator (`rng.bit_generator`), e.g. to inspect its state.
  /// \return A read-only reference to the PCG64.
  const PCG64& bit_generator() const { return bit_generator_; }

 private:
  PCG64 bit_generator_;  ///< Source of all random bits.
};

/// \brief `np.random.default_rng(seed)`: Generator(PCG64(SeedSequence(seed))).
/// \param seed Non-negative integer seed.
/// \return A freshly seeded Generator.
Generator default_rng(std::uint64_t seed);

/// \brief `np.random.default_rng(seed)` for seeds of any size given in decimal.
/// \param decimal_seed Digits only, e.g. "42" or "1361129467683753853853498429727072858169".
/// \return A freshly seeded Generator.
/// \throws std::invalid_argument if decimal_seed is not a non-negative decimal integer.
Generator default_rng(const std::string& decimal_seed);

}  // namespace attn::numpy
