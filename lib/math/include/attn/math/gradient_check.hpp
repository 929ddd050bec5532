/// \file
/// \brief Checking an analytic gradient against central finite differences.
///
/// Used by the unit tests of the backward pass and by chapters 05 and 06, which show the check.
#pragma once

#include <armadillo>

#include <functional>

namespace attn::math {

/// \brief The worst disagreement between an analytic gradient and finite differences.
struct GradientCheck {
  double max_relative_error = 0.0;  ///< largest relative error over all entries.
  arma::uword worst_entry = 0;      ///< linear index (column-major) of that entry.
  double analytic = 0.0;            ///< the analytic gradient there.
  double numeric = 0.0;             ///< the finite-difference estimate there.
};

/// \brief Compares \p analytic with central differences of the scalar function \p loss at \p x.
///
/// For every entry \f$x_i\f$:
/// \f[ g_i \approx \frac{L(x + h e_i) - L(x - h e_i)}{2h}, \qquad
///     \text{relative error} = \frac{|g_i - a_i|}{\max(|g_i| + |a_i|,\ \epsilon)} \f]
/// The floor \f$\epsilon = 10^{-8}\f$ keeps entries whose true gradient is zero from turning
/// rounding noise into a large relative error.
/// \param loss the scalar function \f$L\f$ of a matrix.
/// \param x the point `(r × c)`. \param analytic the claimed gradient `(r × c)`.
/// \param h the step (default \f$10^{-5}\f$, near optimal for central differences in doubles).
/// \return the worst entry.
/// \throws ShapeError if \p analytic is not the shape of \p x (both shapes are named).
/// \throws InputError if \p x is empty, \p x or \p analytic holds a NaN or an infinity, \p h
///         is not finite and positive, or \p loss returns a NaN or an infinity (the entry is
///         named): a NaN would otherwise read as "no error".
GradientCheck check_gradient(const std::function<double(const arma::mat&)>& loss,
                             const arma::mat& x, const arma::mat& analytic, double h = 1e-5);

}  // namespace attn::math
