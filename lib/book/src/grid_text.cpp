#include "attn/book/grid_text.hpp"

#include "attn/math/validate.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace attn::book {

namespace {

// Python's str.rjust(width): pads by code points, which is what f"{t:>8}" counts. (fmt counts
// display columns instead, which differs for wide characters.)
std::string rjust(const std::string& text, std::size_t width) {
  const auto code_points =
      static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
        return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
      }));
  return std::string(width > code_points ? width - code_points : 0, ' ') + text;
}

// The code point that starts at text[i] and how many bytes it takes, in UTF-8. A byte that does
// not start a well-formed sequence (a stray continuation byte, a sequence cut short or broken by
// an ASCII byte, an overlong form, a surrogate) counts as one code point of its own, U+FFFD,
// which is not whitespace. Python would refuse to decode such text; here it stays in its word,
// and never hides the byte after it: "\xC2\n" is a stray byte and a newline, not one letter.
std::pair<char32_t, std::size_t> code_point_at(const std::string& text, std::size_t i) {
  constexpr std::pair<char32_t, std::size_t> kStray{0xFFFD, 1};
  constexpr std::array<char32_t, 5> kSmallest{0, 0, 0x80, 0x800, 0x10000};  // by length
  const auto byte = [&](std::size_t k) {
    return static_cast<unsigned char>(text[k]);
  };
  const unsigned char lead = byte(i);
  if (lead < 0x80)
    return {lead, 1};
  const std::size_t length = (lead >> 5) == 0x6    ? 2
                             : (lead >> 4) == 0xE  ? 3
                             : (lead >> 3) == 0x1E ? 4
                                                   : 0;
  if (length == 0 || i + length > text.size())
    return kStray;
  char32_t value = lead & (0x7F >> length);
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80)
      return kStray;
    value = (value << 6) | (byte(i + k) & 0x3F);
  }
  if (value < kSmallest[length] || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) {
    return kStray;
  }
  return {value, length};
}

void require_decimals(std::string_view what, int decimals) {
  if (decimals < 0)
    throw math::InputError(fmt::format("{}: decimals = {} must be at least 0", what, decimals));
}

// One number of a table: the whole word, finite ("0.5x", "nan" and "inf" are not numbers here).
double table_number(const std::string& word, std::size_t row, std::size_t column) {
  std::size_t used = 0;
  double value = 0.0;
  try {
    value = std::stod(word, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != word.size() || !std::isfinite(value))
    throw math::InputError(
        fmt::format("grid_from_table: \"{}\" in row {}, column {} is not a finite "
                    "number",
                    word, row, column));
  return value;
}

}  // namespace

namespace {

bool is_python_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

}  // namespace

std::vector<std::string> split_words(const std::string& sentence) {
  std::vector<std::string> words;
  std::string word;
  for (std::size_t i = 0; i < sentence.size();) {
    const auto [c, length] = code_point_at(sentence, i);
    if (is_python_space(c)) {
      if (!word.empty())
        words.push_back(std::move(word));
      word.clear();
    } else {
      word.append(sentence, i, length);
    }
    i += length;
  }
  if (!word.empty())
    words.push_back(std::move(word));
  return words;
}

std::string grid_table(const std::vector<std::string>& queries,
                       const std::vector<std::string>& keys,
                       const std::vector<std::vector<std::string>>& cells) {
  if (queries.size() != cells.size())
    throw math::ShapeError(
        fmt::format("grid_table: {} query labels for {} rows", queries.size(), cells.size()));
  std::string text(12, ' ');
  for (const std::string& key : keys)
    text += rjust(key, 8);
  text += '\n';
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (cells[i].size() != keys.size())
      throw math::ShapeError(fmt::format("grid_table: row {} has {} cells for {} key labels", i,
                                         cells[i].size(), keys.size()));
    text += rjust(queries[i], 10) + "  ";
    for (const std::string& cell : cells[i])
      text += rjust(cell, 8);
    text += '\n';
  }
  return text;
}

std::string grid_table(const std::vector<std::string>& queries,
                       const std::vector<std::string>& keys, const arma::mat& grid, int decimals) {
  require_decimals("grid_table", decimals);
  if (queries.size() != grid.n_rows || keys.size() != grid.n_cols)
    throw math::ShapeError(
        fmt::format("grid_table: {} query labels and {} key labels for a grid of "
                    "shape {}",
                    queries.size(), keys.size(), math::shape_of(grid)));
  std::vector<std::vector<std::string>> cells(grid.n_rows);
  for (arma::uword i = 0; i < grid.n_rows; ++i)
    for (arma::uword j = 0; j < grid.n_cols; ++j)  // f"{w:8.2f}": the text, then padded
      cells[i].push_back(fmt::format("{:.{}f}", grid(i, j), decimals));
  return grid_table(queries, keys, cells);
}

arma::mat grid_from_table(const std::string& table) {
  std::istringstream lines(table);
  std::string header;
  std::getline(lines, header);
  const std::size_t keys = split_words(header).size();
  if (keys == 0)
    throw math::InputError("grid_from_table: the table has no header of keys");
  std::vector<arma::rowvec> rows;
  for (std::string line; std::getline(lines, line);) {
    const std::vector<std::string> words = split_words(line);
    if (words.empty())
      continue;
    if (words.size() != keys + 1)
      throw math::InputError(
          fmt::format("grid_from_table: the row \"{}\" has {} numbers for {} keys", line,
                      words.size() - 1, keys));
    arma::rowvec row(keys);
    for (std::size_t k = 0; k < keys; ++k)
      row(k) = table_number(words[k + 1], rows.size(), k);
    rows.push_back(row);
  }
  if (rows.empty())
    throw math::InputError("grid_from_table: the table has no rows under its header");
  arma::mat grid(rows.size(), keys);
  for (std::size_t i = 0; i < rows.size(); ++i)
    grid.row(i) = rows[i];
  return grid;
}

std::vector<std::string> cell_labels(const std::vector<std::string>& tokens, std::size_t row) {
  if (row >= tokens.size())
    throw std::out_of_range(
        fmt::format("cell_labels: row {} is not one of the {} tokens", row, tokens.size()));
  std::vector<std::string> labels;
  for (std::size_t col = 0; col < tokens.size(); ++col)
    labels.push_back(fmt::format("{},{} {}→{}", row, col, tokens.at(row), tokens[col]));
  return labels;
}

std::string fixed(double value, int decimals) {
  require_decimals("fixed", decimals);
  if (std::isnan(value))
    return "nan";  // as Python prints any NaN; fmt would print "-nan" for some
  std::string text = fmt::format("{:.{}f}", value, decimals);
  if (text.find_first_not_of("-0.") == std::string::npos && text[0] == '-')
    text.erase(0, 1);
  return text;
}

std::string vector_text(const arma::mat& values, int decimals) {
  require_decimals("vector_text", decimals);
  std::string text = "[";
  for (arma::uword i = 0; i < values.n_elem; ++i)
    text += (i ? ", " : "") + fixed(values(i), decimals);
  return text + "]";
}

arma::uword token_index(const std::vector<std::string>& tokens, const std::string& token) {
  const auto found = std::find(tokens.begin(), tokens.end(), token);
  if (found == tokens.end())
    throw std::invalid_argument(
        fmt::format("unknown token \"{}\"; the tokens are: {}", token, fmt::join(tokens, ", ")));
  return static_cast<arma::uword>(found - tokens.begin());
}

}  // namespace attn::book
