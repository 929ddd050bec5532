// Fuzzes numpy-style printing, attn::numpy::array_str() and matrix_str(), and np.round's twin
// attn::numpy::round(), with arbitrary doubles: every bit pattern, so NaN, ±∞, -0, subnormals
// and the extremes, in arrays of any length and matrices of any shape.
//
// Input: the first byte picks the matrix's column count (1 to 8) and the digits to round to
// (0 to 15); every 8 further bytes are one double, as the machine stores it.
//
// The promises checked, besides no crash, leak or undefined behaviour:
// - the text is bracketed as numpy brackets it, and no line is longer than numpy's 75
//   characters;
// - it holds one number per entry, and each reads back (strtod) as the entry: NaN as NaN, an
//   infinity as itself, a finite number to the 8 digits numpy prints;
// - rounding keeps NaN as NaN and a finite number within half a unit of its last digit, unless
//   numpy's scaling by 10^digits overflows.
#include <attn/numpy/numpy_print.hpp>

#include <armadillo>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>

namespace {

[[noreturn]] void fail(const char* promise, const std::string& text) {
  std::fprintf(stderr, "numpy printing: %s\n%s\n", promise, text.c_str());
  std::abort();
}

// Every line of `text` fits numpy's 75 characters, and its numbers read back as `values`.
void check_numbers(const std::string& text, const arma::mat& values) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.size() > 75)
      fail("a line is longer than 75 characters", text);
  }
  std::string numbers = text;
  std::replace_if(
      numbers.begin(), numbers.end(), [](char c) { return c == '[' || c == ']'; }, ' ');
  std::istringstream tokens(numbers);
  arma::uword k = 0;
  const arma::mat by_rows = values.t();  // the text lists the entries row by row
  for (std::string token; tokens >> token; ++k) {
    if (k == by_rows.n_elem)
      fail("more numbers than entries", text);
    const double x = by_rows(k);
    char* end = nullptr;
    const double read = std::strtod(token.c_str(), &end);
    if (*end != '\0')
      fail("a number does not read back", text);
    const bool same = std::isnan(x) ? std::isnan(read)
                      : std::isinf(x)
                          ? read == x
                          : std::abs(read - x) <= 5.000001e-9 * std::max(1.0, std::abs(x));
    if (!same)
      fail("a number reads back as another", text);
  }
  if (k != by_rows.n_elem)
    fail("fewer numbers than entries", text);
}

void check_round(double x, int digits) {
  const double rounded = attn::numpy::round(x, digits);
  if (std::isnan(x) != std::isnan(rounded))
    fail("rounding made or lost a NaN", std::to_string(x));
  const double scale = std::pow(10.0, digits);
  if (std::isfinite(x) && std::isfinite(x * scale) &&
      std::abs(rounded - x) > 0.5 / scale * (1 + 1e-12) + 4 * std::abs(x) * 2.3e-16) {
    fail("rounding moved a number by more than half a unit of its last digit", std::to_string(x));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0 || size > 1 + 8 * 256)
    return 0;
  const arma::uword cols = 1 + data[0] % 8;
  const int digits = data[0] / 8 % 16;
  arma::rowvec values((size - 1) / 8);
  for (arma::uword i = 0; i < values.n_elem; ++i) {
    std::memcpy(&values(i), data + 1 + 8 * i, sizeof(double));
    check_round(values(i), digits);
  }

  const std::string array = attn::numpy::array_str(values);
  if (array.front() != '[' || array.back() != ']')
    fail("an array not in brackets", array);
  check_numbers(array, values);

  const arma::uword rows = values.n_elem / cols;
  arma::mat matrix(rows, cols);  // filled row by row
  for (arma::uword i = 0; i < matrix.n_elem; ++i)
    matrix(i / cols, i % cols) = values(i);
  const std::string text = attn::numpy::matrix_str(matrix);
  if (matrix.n_elem == 0 ? text != "[]"
                         : text.rfind("[[", 0) != 0 || text.size() < 4 ||
                               text.compare(text.size() - 2, 2, "]]") != 0) {
    fail("a matrix not in double brackets", text);
  }
  check_numbers(text, matrix);
  return 0;
}
