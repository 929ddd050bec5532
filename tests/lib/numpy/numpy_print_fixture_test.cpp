// numpy's printing and rounding over random values: every case numpy 1.24 printed or rounded in
// tests/data/numpy_print_random.txt and numpy_round_random.txt (written by
// generate_print_random_fixtures.py) must come out of attn::numpy byte for byte, bit for bit.
#include <attn/numpy/numpy_print.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

const std::string kData = ATTN_TEST_DATA_DIR;

// As many as generate_print_random_fixtures.py writes (ARRAYS, MATRICES, ROUNDS): a missing,
// empty or truncated file fails instead of checking nothing.
constexpr std::size_t kArrays = 240;
constexpr std::size_t kMatrices = 60;
constexpr std::size_t kRounds = 1200;

double from_hex(const std::string& text) {
  return std::strtod(text.c_str(), nullptr);
}

// One printed case: `array NAME N` or `matrix NAME ROWS COLS`, its `in` lines, its `out` lines.
struct PrintCase {
  std::string kind;  // "array" or "matrix"
  std::string name;
  arma::uword rows = 0, cols = 0;     // an array of length n is 1 x n
  std::vector<std::string> in_lines;  // the hex values as written, for failure messages
  std::vector<std::vector<double>> values;
  std::string expected;  // numpy's str(), lines joined by '\n'

  std::string input() const {
    std::string text;
    for (const std::string& line : in_lines)
      text += "\n  in " + line;
    return text;
  }
};

std::vector<PrintCase> read_print_cases() {
  std::ifstream file(kData + "/numpy_print_random.txt");
  std::vector<PrintCase> cases;
  for (std::string line; std::getline(file, line);) {
    if (line.rfind("array ", 0) == 0 || line.rfind("matrix ", 0) == 0) {
      std::istringstream words(line);
      PrintCase c;
      words >> c.kind >> c.name;
      if (c.kind == "array") {
        c.rows = 1;
        words >> c.cols;
      } else {
        words >> c.rows >> c.cols;
      }
      cases.push_back(c);
    } else if (!cases.empty() && line.rfind("in", 0) == 0) {
      const std::string hex = line.size() > 3 ? line.substr(3) : "";
      std::istringstream words(hex);
      std::vector<double> row;
      for (std::string w; words >> w;)
        row.push_back(from_hex(w));
      cases.back().in_lines.push_back(hex);
      cases.back().values.push_back(row);
    } else if (!cases.empty() && line.rfind("out ", 0) == 0) {
      std::string& e = cases.back().expected;
      if (!e.empty())
        e += "\n";
      e += line.substr(4);
    }
  }
  return cases;
}

// The values of a case as a matrix, after checking they fill the declared shape.
::testing::AssertionResult fill(const PrintCase& c, arma::mat& m) {
  // An array always has its one `in` line, empty when the array is; a matrix has one per row.
  if (c.values.size() != (c.kind == "array" ? 1 : c.rows))
    return ::testing::AssertionFailure() << c.name << ": " << c.values.size() << " in lines";
  m.set_size(c.rows, c.cols);
  for (arma::uword r = 0; r < c.rows; ++r) {
    if (c.values[r].size() != c.cols)
      return ::testing::AssertionFailure()
             << c.name << " row " << r << ": " << c.values[r].size() << " values, not " << c.cols;
    for (arma::uword j = 0; j < c.cols; ++j)
      m(r, j) = c.values[r][j];
  }
  return ::testing::AssertionSuccess();
}

TEST(NumpyPrintRandom, EveryArrayAndMatrixPrintsAsNumpyPrintedIt) {
  const std::vector<PrintCase> cases = read_print_cases();
  std::size_t arrays = 0, matrices = 0;
  for (const PrintCase& c : cases) {
    arma::mat m;
    ASSERT_TRUE(fill(c, m));
    ASSERT_FALSE(c.expected.empty()) << c.name << " has no out line";
    const bool is_array = c.kind == "array";
    (is_array ? arrays : matrices) += 1;
    const std::string ours =
        is_array ? attn::numpy::array_str(arma::rowvec(m)) : attn::numpy::matrix_str(m);
    EXPECT_EQ(ours, c.expected) << c.kind << " " << c.name << " (" << c.rows << " x " << c.cols
                                << "):" << c.input() << "\nnumpy:\n"
                                << c.expected << "\nours:\n"
                                << ours;
  }
  EXPECT_EQ(arrays, kArrays) << "numpy_print_random.txt missing or truncated";
  EXPECT_EQ(matrices, kMatrices) << "numpy_print_random.txt missing or truncated";
}

std::uint64_t bits(double x) {
  std::uint64_t b = 0;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

// Equal as doubles bit for bit (so -0.0 differs from 0.0); any NaN equals any NaN.
bool same_double(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || bits(a) == bits(b);
}

std::string hex(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", x);
  return buf;
}

TEST(NumpyRoundRandom, EveryNumberRoundsAsNumpyRoundedIt) {
  std::ifstream file(kData + "/numpy_round_random.txt");
  std::size_t compared = 0;
  for (std::string line; std::getline(file, line);) {
    if (line.empty() || line[0] == '#')
      continue;
    std::istringstream words(line);
    int decimals = -1;
    std::string x, expected;
    ASSERT_TRUE(words >> decimals >> x >> expected) << "unreadable line: " << line;
    const double ours = attn::numpy::round(from_hex(x), decimals);
    EXPECT_TRUE(same_double(ours, from_hex(expected)))
        << "np.round(" << x << ", " << decimals << "): numpy " << expected << ", ours "
        << hex(ours);
    ++compared;
  }
  EXPECT_EQ(compared, kRounds) << "numpy_round_random.txt missing or truncated";
}

}  // namespace
