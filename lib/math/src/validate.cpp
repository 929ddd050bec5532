#include "attn/math/validate.hpp"

#include <fmt/format.h>

#include <cmath>

namespace attn::math {

template <typename eT>
std::string shape_of(const arma::Mat<eT>& m) {
  return fmt::format("({} × {})", m.n_rows, m.n_cols);
}

template <typename eT>
void require_nonempty(std::string_view what, const arma::Mat<eT>& m) {
  if (m.is_empty())
    throw InputError(fmt::format("{} is empty {}: it needs at least one entry", what, shape_of(m)));
}

template <typename eT>
void require_finite(std::string_view what, const arma::Mat<eT>& m) {
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

void require_finite(std::string_view what, double value) {
  if (!std::isfinite(value))
    throw InputError(fmt::format("{} is {}; it must be a finite number", what, value));
}

namespace {

template <typename eT>
[[noreturn]] void shape_mismatch(std::string_view op, std::string_view a_name,
                                 const arma::Mat<eT>& a, std::string_view b_name,
                                 const arma::Mat<eT>& b, std::string_view rule) {
  throw ShapeError(fmt::format("{}: {} is {} and {} is {}; {}", op, a_name, shape_of(a), b_name,
                               shape_of(b), rule));
}

enum class Extent { rows, columns };

// One check for both directions; the message says which one differs.
template <typename eT>
void same_extent(Extent extent, std::string_view op, std::string_view a_name,
                 const arma::Mat<eT>& a, std::string_view b_name, const arma::Mat<eT>& b) {
  const bool rows = extent == Extent::rows;
  const arma::uword a_count = rows ? a.n_rows : a.n_cols;
  const arma::uword b_count = rows ? b.n_rows : b.n_cols;
  if (a_count != b_count)
    shape_mismatch(op, a_name, a, b_name, b,
                   fmt::format("{} and {} need the same number of {}", a_name, b_name,
                               rows ? "rows" : "columns"));
}

}  // namespace

void require_multipliable(std::string_view op, std::string_view a_name, const arma::mat& a,
                          std::string_view b_name, const arma::mat& b) {
  if (a.n_cols != b.n_rows)
    shape_mismatch(op, a_name, a, b_name, b,
                   fmt::format("the columns of {} must match the rows of {}", a_name, b_name));
}

template <typename eT>
void require_same_cols(std::string_view op, std::string_view a_name, const arma::Mat<eT>& a,
                       std::string_view b_name, const arma::Mat<eT>& b) {
  same_extent(Extent::columns, op, a_name, a, b_name, b);
}

template <typename eT>
void require_same_rows(std::string_view op, std::string_view a_name, const arma::Mat<eT>& a,
                       std::string_view b_name, const arma::Mat<eT>& b) {
  same_extent(Extent::rows, op, a_name, a, b_name, b);
}

// The two element types the library uses; a third would be one more line in each group.
template std::string shape_of(const arma::mat&);
template std::string shape_of(const arma::fmat&);
template void require_nonempty(std::string_view, const arma::mat&);
template void require_nonempty(std::string_view, const arma::fmat&);
template void require_finite(std::string_view, const arma::mat&);
template void require_finite(std::string_view, const arma::fmat&);
template void require_same_cols(std::string_view, std::string_view, const arma::mat&,
                                std::string_view, const arma::mat&);
template void require_same_cols(std::string_view, std::string_view, const arma::fmat&,
                                std::string_view, const arma::fmat&);
template void require_same_rows(std::string_view, std::string_view, const arma::mat&,
                                std::string_view, const arma::mat&);
template void require_same_rows(std::string_view, std::string_view, const arma::fmat&,
                                std::string_view, const arma::fmat&);

}  // namespace attn::math
