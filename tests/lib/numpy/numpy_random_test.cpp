// Checks attn::numpy against numpy 1.24.2: the check values quoted in the appendix page
// (docs/appendix_numpy_random.md) and the fixtures written by
// tests/data/generate_random_fixtures.py.
#include "attn/numpy/numpy_random.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#ifndef ATTN_TEST_DATA_DIR
#error "ATTN_TEST_DATA_DIR must point at tests/data"
#endif

namespace {

using attn::numpy::default_rng;
using attn::numpy::Generator;
using attn::numpy::PCG64;
using attn::numpy::SeedSequence;
using attn::numpy::UInt128;

constexpr double kNormalRelativeTolerance = 1e-13;
constexpr double kZigguratTailStart = 3.6541528853610088;
// numpy 1.24.2 gives ~82% bit-identical normals; far less means the tables drifted.
constexpr double kMinBitIdenticalShare = 0.75;

std::string fixture_path(const std::string& relative) {
  return std::string(ATTN_TEST_DATA_DIR) + "/numpy_random/" + relative;
}

/// All non-comment, non-empty lines of a fixture; throws so a missing file fails loudly.
std::vector<std::string> read_fixture_lines(const std::string& relative) {
  const std::string path = fixture_path(relative);
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error("cannot open fixture " + path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '#')
      lines.push_back(line);
  }
  if (lines.empty())
    throw std::runtime_error("fixture has no values: " + path);
  return lines;
}

std::uint64_t parse_hex_u64(const std::string& text) {
  std::size_t used = 0;
  const std::uint64_t value = std::stoull(text, &used, 16);  // accepts the 0x prefix
  if (used != text.size())
    throw std::runtime_error("bad hex integer: " + text);
  return value;
}

/// "0x" followed by 32 hex digits -> two 64-bit halves.
UInt128 parse_hex_u128(const std::string& text) {
  if (text.size() != 34 || text.compare(0, 2, "0x") != 0) {
    throw std::runtime_error("bad 128-bit hex: " + text);
  }
  return UInt128{parse_hex_u64(text.substr(2, 16)), parse_hex_u64(text.substr(18, 16))};
}

/// Python's float.hex() text -> the exact double (strtod reads C99 hex floats).
double parse_hex_double(const std::string& text) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size())
    throw std::runtime_error("bad hex float: " + text);
  return value;
}

std::vector<double> read_doubles(const std::string& relative) {
  std::vector<double> values;
  for (const std::string& line : read_fixture_lines(relative))
    values.push_back(parse_hex_double(line));
  return values;
}

std::vector<std::string> fixture_seeds() {
  return read_fixture_lines("seeds.txt");
}

std::string seed_file(const std::string& seed, const std::string& name) {
  return "seed_" + seed + "/" + name;
}

bool bit_identical(double a, double b) {
  return std::memcmp(&a, &b, sizeof(double)) == 0;
}

bool within_relative(double actual, double expected, double tolerance) {
  return std::fabs(actual - expected) <= tolerance * std::fabs(expected);
}

std::string to_hex(std::uint64_t value) {
  std::ostringstream out;
  out << "0x" << std::hex << value;
  return out.str();
}

// --- Check values quoted in the appendix (independent of the fixture files) -------------------

TEST(NumpyRandomDocumented, SeedZeroSeedSequenceWords) {
  const std::vector<std::uint64_t> expected = {0xdb2cd7e7b0f478beULL, 0xabf4641a2c71ba49ULL,
                                               0x20c6ed6d9d7b8d41ULL, 0x2c4099de223c39d4ULL};
  EXPECT_EQ(SeedSequence(std::uint64_t{0}).generate_state_u64(4), expected);
}

TEST(NumpyRandomDocumented, SeedZeroPcg64StateAndIncrement) {
  const PCG64 bits(SeedSequence(std::uint64_t{0}));
  EXPECT_EQ(to_hex(bits.state().high), "0x1aa1b5345996452d");
  EXPECT_EQ(to_hex(bits.state().low), "0x9585eb7a69561e3");
  EXPECT_EQ(to_hex(bits.increment().high), "0x418ddadb3af71a82");
  EXPECT_EQ(to_hex(bits.increment().low), "0x588133bc447873a9");
}

TEST(NumpyRandomDocumented, SeedZeroFirstNormals) {
  Generator rng = default_rng(0);
  // The documented values carry 16 significant digits, so compare to 1e-15.
  //! [first-normals]
  EXPECT_NEAR(rng.normal(), 0.1257302210933933, 1e-15);
  EXPECT_NEAR(rng.normal(), -0.1321048632913019, 1e-15);
  EXPECT_NEAR(rng.normal(), 0.6404226504432821, 1e-15);
  //! [first-normals]
}

// --- Seed parsing -----------------------------------------------------------------------------

TEST(NumpyRandomSeed, DecimalTextSplitsIntoLowFirst32BitWords) {
  using Words = std::vector<std::uint32_t>;
  EXPECT_EQ(SeedSequence("0").entropy_words(), Words({0}));
  EXPECT_EQ(SeedSequence("000042").entropy_words(), Words({42}));
  EXPECT_EQ(SeedSequence("4294967295").entropy_words(), Words({0xffffffffU}));
  EXPECT_EQ(SeedSequence("4294967296").entropy_words(), Words({0, 1}));
  EXPECT_EQ(SeedSequence("18446744073709551616").entropy_words(), Words({0, 0, 1}));
  // 2^130 + 12345
  EXPECT_EQ(SeedSequence("1361129467683753853853498429727072858169").entropy_words(),
            Words({12345, 0, 0, 0, 4}));
}

TEST(NumpyRandomSeed, DecimalAndIntegerSeedsGiveTheSameState) {
  const std::uint64_t seeds[] = {0, 1, 42, (std::uint64_t{1} << 32) + 5,
                                 std::numeric_limits<std::uint64_t>::max()};
  for (std::uint64_t seed : seeds) {
    SCOPED_TRACE(seed);
    EXPECT_EQ(SeedSequence(seed).entropy_words(),
              SeedSequence(std::to_string(seed)).entropy_words());
    EXPECT_EQ(SeedSequence(seed).generate_state_u64(4),
              SeedSequence(std::to_string(seed)).generate_state_u64(4));
  }
}

TEST(NumpyRandomSeed, RejectsTextThatIsNotANonNegativeDecimalInteger) {
  const std::string bad_seeds[] = {"", "-1", "+7", " 42", "42 ", "12a", "1.5", "0x10", "1e3"};
  for (const std::string& bad : bad_seeds) {
    SCOPED_TRACE("seed text \"" + bad + "\"");
    try {
      default_rng(bad);
      ADD_FAILURE() << "no exception thrown";
    } catch (const std::invalid_argument& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find("\"" + bad + "\""), std::string::npos) << message;
      EXPECT_NE(message.find("non-negative decimal integer"), std::string::npos) << message;
    }
  }
}

// --- Fixtures from numpy: seeding and raw stream ------------------------------------------------

TEST(NumpyRandomFixtures, SeedSequenceWordsMatch) {
  for (const std::string& seed : fixture_seeds()) {
    SCOPED_TRACE("seed " + seed);
    std::vector<std::uint64_t> expected;
    for (const std::string& line : read_fixture_lines(seed_file(seed, "seed_words.txt"))) {
      expected.push_back(parse_hex_u64(line));
    }
    EXPECT_EQ(SeedSequence(seed).generate_state_u64(expected.size()), expected);
  }
}

TEST(NumpyRandomFixtures, Pcg64StateAfterSeedingMatches) {
  for (const std::string& seed : fixture_seeds()) {
    SCOPED_TRACE("seed " + seed);
    const std::vector<std::string> lines = read_fixture_lines(seed_file(seed, "pcg64_state.txt"));
    ASSERT_EQ(lines.size(), 2U);
    const UInt128 state = parse_hex_u128(lines[0]);
    const UInt128 increment = parse_hex_u128(lines[1]);
    const PCG64 bits(SeedSequence{seed});
    EXPECT_EQ(bits.state().high, state.high);
    EXPECT_EQ(bits.state().low, state.low);
    EXPECT_EQ(bits.increment().high, increment.high);
    EXPECT_EQ(bits.increment().low, increment.low);
  }
}

TEST(NumpyRandomFixtures, RawOutputsAreIdentical) {
  for (const std::string& seed : fixture_seeds()) {
    SCOPED_TRACE("seed " + seed);
    Generator rng = default_rng(seed);
    const std::vector<std::string> lines = read_fixture_lines(seed_file(seed, "next64.txt"));
    for (std::size_t i = 0; i < lines.size(); ++i) {
      ASSERT_EQ(rng.next_uint64(), parse_hex_u64(lines[i])) << "output " << i;
    }
  }
}

TEST(NumpyRandomFixtures, UniformsAreBitIdentical) {
  for (const std::string& seed : fixture_seeds()) {
    SCOPED_TRACE("seed " + seed);
    Generator rng = default_rng(seed);
    const std::vector<double> expected = read_doubles(seed_file(seed, "uniform.txt"));
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const double actual = rng.random();
      ASSERT_TRUE(bit_identical(actual, expected[i]))
          << "uniform " << i << ": " << actual << " vs " << expected[i];
      ASSERT_GE(actual, 0.0);
      ASSERT_LT(actual, 1.0);
    }
  }
}

// --- Fixtures from numpy: ziggurat normals ------------------------------------------------------

struct NormalComparison {
  std::size_t total = 0;
  std::size_t bit_identical = 0;
  std::size_t tail_draws = 0;  // |x| > r only comes from the idx-0 tail sampler
};

/// Draws the fixture's normals for one seed and compares each within kNormalRelativeTolerance.
NormalComparison compare_normals(const std::string& seed) {
  Generator rng = default_rng(seed);
  const std::vector<double> expected = read_doubles(seed_file(seed, "normal.txt"));
  NormalComparison result;
  std::size_t reported = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const double actual = rng.normal();
    ++result.total;
    if (bit_identical(actual, expected[i]))
      ++result.bit_identical;
    if (std::fabs(expected[i]) > kZigguratTailStart)
      ++result.tail_draws;
    if (!within_relative(actual, expected[i], kNormalRelativeTolerance) && reported++ < 5) {
      ADD_FAILURE() << "seed " << seed << " normal " << i << ": got " << actual << ", numpy "
                    << expected[i];
    }
  }
  return result;
}

TEST(NumpyRandomFixtures, NormalsAgreeToRelativeTolerance) {
  NormalComparison all;
  for (const std::string& seed : fixture_seeds()) {
    const NormalComparison one = compare_normals(seed);
    all.total += one.total;
    all.bit_identical += one.bit_identical;
    all.tail_draws += one.tail_draws;
  }
  const double share = static_cast<double>(all.bit_identical) / static_cast<double>(all.total);
  std::cout << "[ numpy    ] " << all.bit_identical << " of " << all.total
            << " normals bit-identical (" << 100.0 * share << "%), " << all.tail_draws
            << " tail draws\n";
  RecordProperty("normals_compared", static_cast<int>(all.total));
  RecordProperty("normals_bit_identical", static_cast<int>(all.bit_identical));
  RecordProperty("normal_tail_draws", static_cast<int>(all.tail_draws));
  EXPECT_GE(all.total, 100000U) << "fixtures too small to exercise the ziggurat tail";
  EXPECT_GT(all.tail_draws, 0U) << "no draw went through the idx-0 tail sampler";
  EXPECT_GT(share, kMinBitIdenticalShare);
}

// Each rejected wedge point or tail proposal consumes extra 64-bit words; ending at numpy's
// stream position proves every branch consumed exactly as many words as numpy's did.
TEST(NumpyRandomFixtures, NormalsConsumeTheSameNumberOfRawOutputs) {
  for (const std::string& seed : fixture_seeds()) {
    SCOPED_TRACE("seed " + seed);
    const std::size_t normal_count = read_fixture_lines(seed_file(seed, "normal.txt")).size();
    const std::vector<std::string> after = read_fixture_lines(seed_file(seed, "after_normals.txt"));
    ASSERT_EQ(after.size(), 2U);
    const std::size_t consumed = std::stoul(after[0]);
    const std::uint64_t next_raw = parse_hex_u64(after[1]);
    EXPECT_GT(consumed, normal_count) << "no wedge or tail draw: slow paths untested";

    Generator rng = default_rng(seed);
    for (std::size_t i = 0; i < normal_count; ++i)
      rng.normal();
    EXPECT_EQ(rng.next_uint64(), next_raw);

    Generator raw = default_rng(seed);
    for (std::size_t i = 0; i < consumed; ++i)
      raw.next_uint64();
    EXPECT_EQ(raw.next_uint64(), next_raw) << "fixture's consumed count is inconsistent";
  }
}

TEST(NumpyRandomFixtures, MatrixIsFilledInCOrder) {
  const std::vector<double> expected = read_doubles("normal_3x4_seed0.txt");
  ASSERT_EQ(expected.size(), 12U);
  Generator rng = default_rng(0);
  const arma::mat matrix = rng.normal(3, 4);
  ASSERT_EQ(matrix.n_rows, 3U);
  ASSERT_EQ(matrix.n_cols, 4U);
  for (arma::uword row = 0; row < 3; ++row) {
    for (arma::uword col = 0; col < 4; ++col) {
      const double numpy_value = expected[row * 4 + col];  // C order: row by row
      EXPECT_TRUE(within_relative(matrix(row, col), numpy_value, kNormalRelativeTolerance))
          << "(" << row << ", " << col << "): " << matrix(row, col) << " vs " << numpy_value;
    }
  }
  // The matrix continues the same stream as scalar draws would.
  Generator scalar = default_rng(0);
  for (std::size_t i = 0; i < 12; ++i)
    scalar.normal();
  EXPECT_EQ(rng.next_uint64(), scalar.next_uint64());
}

}  // namespace

// Chapter 11's checkpoints keep the generator's state and resume from it.
TEST(NumpyRandomState, AResumedGeneratorContinuesTheSameStream) {
  attn::numpy::Generator rng = attn::numpy::default_rng(20261201);
  for (int i = 0; i < 17; ++i)
    rng.random();
  const attn::numpy::PCG64 resumed_bits(rng.bit_generator().state(),
                                        rng.bit_generator().increment());
  attn::numpy::Generator resumed(resumed_bits);
  for (int i = 0; i < 100; ++i)
    ASSERT_EQ(rng.next_uint64(), resumed.next_uint64()) << "output " << i;
  EXPECT_EQ(rng.normal(), resumed.normal());
}

TEST(NumpyRandomState, AnEvenIncrementIsRefused) {
  EXPECT_THROW(attn::numpy::PCG64({0, 1}, {0, 2}), std::invalid_argument);
}
