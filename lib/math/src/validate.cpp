#include "attn/math/validate.hpp"

#include <fmt/format.h>

namespace attn {

// Each check is written once, for any element type, and offered for double and float matrices.
namespace {

template <typename eT>
std::string shape_text(const arma::Mat<eT>& m) {
  return fmt::format("({} × {})", m.n_rows, m.n_cols);
}

template <typename eT>
void nonempty(std::string_view what, const arma::Mat<eT>& m) {
  if (m.is_empty())
    throw InputError(
        fmt::format("{} is empty {}: it needs at least one entry", what, shape_text(m)));
}

template <typename eT>
void finite(std::string_view what, const arma::Mat<eT>& m) {
  if (m.is_finite())
    return;  // the common case: one pass down memory; else find the first bad entry, by rows
  for (arma::uword r = 0; r < m.n_rows; ++r)
    for (arma::uword c = 0; c < m.n_cols; ++c)
      if (!std::isfinite(m(r, c)))
        throw InputError(
            fmt::format("{} has a non-finite entry {} at row {}, column {}: "
                        "attention is defined on finite numbers only",
                        what, m(r, c), r, c));
}

template <typename eT>
[[noreturn]] void shape_mismatch(std::string_view op, std::string_view a_name,
                                 const arma::Mat<eT>& a, std::string_view b_name,
                                 const arma::Mat<eT>& b, std::string_view rule) {
  throw ShapeError(fmt::format("{}: {} is {} and {} is {}; {}", op, a_name, shape_text(a), b_name,
                               shape_text(b), rule));
}

template <typename eT>
void same_cols(std::string_view op, std::string_view a_name, const arma::Mat<eT>& a,
               std::string_view b_name, const arma::Mat<eT>& b) {
  if (a.n_cols != b.n_cols)
    shape_mismatch(op, a_name, a, b_name, b,
                   fmt::format("{} and {} need the same number of columns", a_name, b_name));
}

template <typename eT>
void same_rows(std::string_view op, std::string_view a_name, const arma::Mat<eT>& a,
               std::string_view b_name, const arma::Mat<eT>& b) {
  if (a.n_rows != b.n_rows)
    shape_mismatch(op, a_name, a, b_name, b,
                   fmt::format("{} and {} need the same number of rows", a_name, b_name));
}

}  // namespace

std::string shape_of(const arma::mat& m) {
  return shape_text(m);
}

std::string shape_of(const arma::fmat& m) {
  return shape_text(m);
}

void require_nonempty(std::string_view what, const arma::mat& m) {
  nonempty(what, m);
}

void require_nonempty(std::string_view what, const arma::fmat& m) {
  nonempty(what, m);
}

void require_finite(std::string_view what, const arma::mat& m) {
  finite(what, m);
}

void require_finite(std::string_view what, const arma::fmat& m) {
  finite(what, m);
}

void require_finite(std::string_view what, double value) {
  if (!std::isfinite(value))
    throw InputError(fmt::format("{} is {}; it must be a finite number", what, value));
}

void require_multipliable(std::string_view op, std::string_view a_name, const arma::mat& a,
                          std::string_view b_name, const arma::mat& b) {
  if (a.n_cols != b.n_rows)
    shape_mismatch(op, a_name, a, b_name, b,
                   fmt::format("the columns of {} must match the rows of {}", a_name, b_name));
}

void require_same_cols(std::string_view op, std::string_view a_name, const arma::mat& a,
                       std::string_view b_name, const arma::mat& b) {
  same_cols(op, a_name, a, b_name, b);
}

void require_same_cols(std::string_view op, std::string_view a_name, const arma::fmat& a,
                       std::string_view b_name, const arma::fmat& b) {
  same_cols(op, a_name, a, b_name, b);
}

void require_same_rows(std::string_view op, std::string_view a_name, const arma::mat& a,
                       std::string_view b_name, const arma::mat& b) {
  same_rows(op, a_name, a, b_name, b);
}

void require_same_rows(std::string_view op, std::string_view a_name, const arma::fmat& a,
                       std::string_view b_name, const arma::fmat& b) {
  same_rows(op, a_name, a, b_name, b);
}

}  // namespace attn
