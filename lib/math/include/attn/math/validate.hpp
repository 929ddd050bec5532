/// \file
/// \brief Input checks shared by every function of the library: shapes, emptiness, finiteness.
///
/// Bad input never produces a silently wrong number: each check throws an exception whose
/// message names the operation, the operands and their shapes.
#pragma once

#include <armadillo>

#include <stdexcept>
#include <string>
#include <string_view>

namespace attn::math {

/// Two operands whose shapes cannot be combined; the message names both shapes.
class ShapeError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// Input that is empty, NaN or infinite, where a finite value is required.
class InputError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Each matrix check is one template, compiled in validate.cpp for the two element types the
// library uses: double (`arma::mat`, `arma::vec`) and float (`arma::fmat`, `arma::fvec`). Pass a
// matrix or a vector; a sub-view (`X.rows(0, 1)`, `X.col(j)`) or an expression (`X * W`) is
// evaluated into one first: `attn::math::shape_of(arma::mat(X.rows(0, 1)))`.

/// \brief A matrix's shape written as in the docs, rows first: `(3 × 2)`.
/// \tparam eT `double` or `float`.
/// \param m any matrix or vector.
/// \return the text `(rows × cols)`.
template <typename eT>
std::string shape_of(const arma::Mat<eT>& m);

/// \brief Throws InputError unless \p m has at least one element.
/// \tparam eT `double` or `float`.
/// \param what the operand's name, used in the message (for example `"E"`).
/// \param m the operand.
template <typename eT>
void require_nonempty(std::string_view what, const arma::Mat<eT>& m);

/// \brief Throws InputError if \p m holds a NaN or an infinity, naming the first such entry.
/// \tparam eT `double` or `float`.
/// \param what the operand's name, used in the message.
/// \param m the operand.
template <typename eT>
void require_finite(std::string_view what, const arma::Mat<eT>& m);

/// \brief Throws InputError if \p value is a NaN or an infinity.
/// \param what the number's name, used in the message (for example `"attend: the scale"`).
/// \param value the number.
void require_finite(std::string_view what, double value);

/// \brief Throws ShapeError unless `a.n_cols == b.n_rows`, so that the product `a b` exists.
/// \param op the operation, for the message (for example `"Q = X W_Q"`).
/// \param a_name name of the left operand. \param a left operand.
/// \param b_name name of the right operand. \param b right operand.
void require_multipliable(std::string_view op, std::string_view a_name, const arma::mat& a,
                          std::string_view b_name, const arma::mat& b);

/// \brief Throws ShapeError unless \p a and \p b have the same number of columns.
/// \tparam eT `double` or `float`.
/// \param op the operation, for the message. \param a_name name of \p a. \param a first operand.
/// \param b_name name of \p b. \param b second operand.
template <typename eT>
void require_same_cols(std::string_view op, std::string_view a_name, const arma::Mat<eT>& a,
                       std::string_view b_name, const arma::Mat<eT>& b);

/// \brief Throws ShapeError unless \p a and \p b have the same number of rows.
/// \tparam eT `double` or `float`.
/// \param op the operation, for the message. \param a_name name of \p a. \param a first operand.
/// \param b_name name of \p b. \param b second operand.
template <typename eT>
void require_same_rows(std::string_view op, std::string_view a_name, const arma::Mat<eT>& a,
                       std::string_view b_name, const arma::Mat<eT>& b);

}  // namespace attn::math
