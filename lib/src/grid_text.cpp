#include "attn/grid_text.hpp"

#include "attn/validate.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace attn {

namespace {

// Python's str.rjust(width): pads by code points, which is what f"{t:>8}" counts. (fmt counts
// display columns instead, which differs for wide characters.)
std::string rjust(const std::string& text, std::size_t width) {
  const auto code_points = static_cast<std::size_t>(std::count_if(
      text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
  return std::string(width > code_points ? width - code_points : 0, ' ') + text;
}

}  // namespace

std::string grid_table(const std::vector<std::string>& queries,
                       const std::vector<std::string>& keys, const arma::mat& grid,
                       int decimals) {
  if (queries.size() != grid.n_rows || keys.size() != grid.n_cols)
    throw ShapeError(fmt::format("grid_table: {} query labels and {} key labels for a grid of "
                                 "shape {}", queries.size(), keys.size(), shape_of(grid)));
  std::string text(12, ' ');
  for (const std::string& key : keys) text += rjust(key, 8);
  text += '\n';
  for (arma::uword i = 0; i < grid.n_rows; ++i) {
    text += rjust(queries[i], 10) + "  ";
    for (arma::uword j = 0; j < grid.n_cols; ++j) text += fmt::format("{:8.{}f}", grid(i, j), decimals);
    text += '\n';
  }
  return text;
}

std::string vector_text(const arma::mat& values, int decimals) {
  std::string text = "[";
  for (arma::uword i = 0; i < values.n_elem; ++i)
    text += fmt::format("{}{:.{}f}", i ? ", " : "", values(i), decimals);
  return text + "]";
}

}  // namespace attn
