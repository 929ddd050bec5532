#include "attn/numpy/numpy_print.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <string_view>
#include <vector>

namespace attn::numpy {

double round(double x, int decimals) {
  if (decimals < 0 || decimals > 308)  // 10^decimals must be a finite double, and not 1/10^k
    throw std::invalid_argument(
        fmt::format("numpy::round: decimals = {} must be from 0 to 308", decimals));
  const double scale = std::pow(10.0, decimals);
  return std::nearbyint(x * scale) / scale;  // nearbyint: ties to even, like np.rint
}

arma::mat round(const arma::mat& x, int decimals) {
  arma::mat rounded = x;
  rounded.transform([decimals](double v) { return round(v, decimals); });
  return rounded;
}

std::string shape_str(const arma::mat& m) {
  return fmt::format("({}, {})", m.n_rows, m.n_cols);
}

namespace {

// numpy prints with `precision=8`: at most 8 digits after the point (or in the mantissa).
constexpr int kMaxDigits = 8;
// numpy's default `linewidth`.
constexpr std::size_t kLineWidth = 75;

// Shortest digits that read back as x (std::to_chars without a precision), unless that needs
// more than kMaxDigits fraction digits: then x rounded to kMaxDigits, trailing zeros trimmed.
std::string shortest(double x, std::chars_format format) {
  char buf[400];
  auto end = std::to_chars(buf, buf + sizeof buf, x, format).ptr;
  std::string s(buf, end);
  const std::size_t exp_at = std::min(s.find('e'), s.size());
  const std::size_t dot = s.find('.');
  if (dot == std::string::npos || exp_at - dot - 1 <= kMaxDigits)
    return s;
  end = std::to_chars(buf, buf + sizeof buf, x, format, kMaxDigits).ptr;
  s.assign(buf, end);
  std::string mantissa = s.substr(0, std::min(s.find('e'), s.size()));
  const std::string exponent = s.substr(mantissa.size());
  mantissa.erase(mantissa.find_last_not_of('0') + 1);
  return mantissa + exponent;
}

// One number split the way numpy lays it out: sign and integer digits | fraction | exponent.
struct Pieces {
  std::string integer;   // "-0", "12"
  std::string fraction;  // digits after the point, possibly empty
  std::string exponent;  // "" in positional notation, else "+01", "-105", ...
};

Pieces split(double x, bool scientific) {
  std::string s =
      shortest(x, scientific ? std::chars_format::scientific : std::chars_format::fixed);
  Pieces p;
  const std::size_t e = s.find('e');
  if (e != std::string::npos) {
    p.exponent = s.substr(e + 1);
    s.erase(e);
  }
  const std::size_t dot = s.find('.');
  p.integer = s.substr(0, dot);
  if (dot != std::string::npos)
    p.fraction = s.substr(dot + 1);
  return p;
}

// x in scientific notation with exactly `digits` mantissa digits after the point.
Pieces padded(double x, std::size_t digits) {
  char buf[64];
  const auto end = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific,
                                 static_cast<int>(digits))
                       .ptr;
  const std::string s(buf, end);
  const std::size_t dot = s.find('.'), e = s.find('e');
  return {s.substr(0, dot), s.substr(dot + 1, e - dot - 1), s.substr(e + 1)};
}

// The shared layout numpy computes from all finite entries before printing any of them.
struct Layout {
  bool scientific = false;
  std::size_t pad_left = 0;         // width of the integer part
  std::size_t pad_right = 0;        // width of everything after the point
  std::size_t mantissa_digits = 0;  // scientific: fraction digits, zero-filled
  std::size_t exponent_digits = 0;  // scientific: exponent digits, zero-filled
};

bool wants_scientific(const std::vector<double>& finite) {
  double max_abs = 0.0, min_abs = HUGE_VAL;
  for (double v : finite)
    if (v != 0.0) {
      max_abs = std::max(max_abs, std::fabs(v));
      min_abs = std::min(min_abs, std::fabs(v));
    }
  if (max_abs == 0.0)
    return false;
  return max_abs >= 1e8 || min_abs < 1e-4 || max_abs / min_abs > 1000.0;
}

Layout layout_for(const std::vector<double>& values) {
  std::vector<double> finite;
  bool has_nan = false, has_neg_inf = false, has_inf = false;
  for (double v : values) {
    if (std::isfinite(v))
      finite.push_back(v);
    else if (std::isnan(v))
      has_nan = true;
    else
      (v < 0 ? has_neg_inf : has_inf) = true;
  }
  Layout l;
  l.scientific = wants_scientific(finite);
  for (double v : finite) {
    const Pieces p = split(v, l.scientific);
    l.pad_left = std::max(l.pad_left, p.integer.size());
    l.pad_right = std::max(l.pad_right, p.fraction.size());
    l.exponent_digits = std::max(l.exponent_digits, p.exponent.size() - (l.scientific ? 1 : 0));
  }
  if (l.scientific) {
    l.mantissa_digits = l.pad_right;
    l.pad_right = l.exponent_digits + 2 + l.mantissa_digits;
  }
  // "nan", "inf" and "-inf" are right-aligned in the full width of a number.
  const std::size_t after_point = l.pad_right + 1;
  if (has_nan)
    l.pad_left = std::max(l.pad_left, 3 > after_point ? 3 - after_point : 0);
  const std::size_t inf_len = has_neg_inf ? 4 : 3;
  if (has_inf || has_neg_inf)
    l.pad_left = std::max(l.pad_left, inf_len > after_point ? inf_len - after_point : 0);
  return l;
}

std::string format_one(double x, const Layout& l) {
  if (!std::isfinite(x)) {
    const std::string word = std::isnan(x) ? "nan" : (x < 0 ? "-inf" : "inf");
    return fmt::format("{:>{}}", word, l.pad_left + l.pad_right + 1);
  }
  const Pieces p = split(x, l.scientific);
  if (!l.scientific)
    return fmt::format("{:>{}}.{:<{}}", p.integer, l.pad_left, p.fraction, l.pad_right);
  // numpy pads a shorter mantissa (min_digits with unique=True) with the value's own further
  // digits, correctly rounded, not with zeros. They are zeros for every normal double, whose
  // shortest digits are exact to 15 places; a subnormal's are not: 5e-324 prints as
  // 4.94065646e-324 beside 1.23456789.
  const Pieces q = p.fraction.size() < l.mantissa_digits ? padded(x, l.mantissa_digits) : p;
  const char sign = q.exponent[0];
  const std::string digits = q.exponent.substr(1);
  return fmt::format("{:>{}}.{:0<{}}e{}{:0>{}}", q.integer, l.pad_left, q.fraction,
                     l.mantissa_digits, sign, digits, l.exponent_digits);
}

// numpy's _formatArray for the last axis: the words of one row joined by ' '. A word that
// would end past `elem_width` starts a new line (unless the line holds no word yet): the line
// is right-stripped and the next one starts with `hanging_indent`. The first line's hanging
// indent is dropped and the row is wrapped in brackets.
std::string row_str(const std::vector<double>& row, const Layout& l,
                    const std::string& hanging_indent, std::size_t elem_width) {
  std::string text, line = hanging_indent;
  for (std::size_t i = 0; i < row.size(); ++i) {
    const std::string word = format_one(row[i], l);
    if (line.size() + word.size() > elem_width && line.size() > hanging_indent.size()) {
      line.erase(line.find_last_not_of(' ') + 1);
      text += line + "\n";
      line = hanging_indent;
    }
    line += word;
    if (i + 1 < row.size())
      line += ' ';
  }
  text += line;
  return fmt::format("[{}]", text.substr(hanging_indent.size()));
}

// Every entry of m, column by column.
std::vector<double> entries(const arma::mat& m) {
  return arma::conv_to<std::vector<double>>::from(arma::vectorise(m));
}

}  // namespace

std::string array_str(const arma::mat& values) {
  const std::vector<double> v = entries(values);
  // One axis: hanging indent " ", and a line may reach column 74 (75 less the closing ']').
  return row_str(v, layout_for(v), " ", kLineWidth - 1);
}

std::string matrix_str(const arma::mat& values) {
  if (values.is_empty())
    return "[]";  // numpy prints any array of size 0 as "[]"
  // One layout for all entries, so every column lines up. Each row is one level deeper than
  // the matrix: hanging indent "  " and width 74, less 1 for its own ']'. Rows are joined by
  // "\n", each after the matrix's hanging indent " ", whose first one becomes the '['.
  const Layout l = layout_for(entries(values));
  const std::string indent = " ";
  std::string text;
  for (arma::uword r = 0; r < values.n_rows; ++r) {
    if (r > 0)
      text += "\n";
    text += indent + row_str(entries(values.row(r)), l, indent + indent, kLineWidth - 2);
  }
  return fmt::format("[{}]", text.substr(indent.size()));
}

}  // namespace attn::numpy
