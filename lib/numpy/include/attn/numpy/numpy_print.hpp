/// \file
/// \brief numpy's way of rounding and printing arrays, reproduced so that a chapter's output
///        can be compared byte for byte with what an article's Python printed.
///
/// NaN and ±∞ are numbers here, as they are to numpy: rounding keeps them, and printing writes
/// them as numpy does, `nan`, `inf` and `-inf`, right-aligned in the common width. An array with
/// no entries prints as `[]`.
#pragma once

#include <armadillo>

#include <string>

/// \brief numpy's behaviour, reproduced where a chapter must match an article's Python exactly:
///        its rounding and printing here, its `default_rng` random numbers in numpy_random.hpp.
namespace attn::numpy {

/// \brief `np.round(x, decimals)` for one number: \f$ \mathrm{rint}(x \cdot 10^{k}) / 10^{k} \f$.
///
/// Like numpy, halves round to even (`np.round(0.125, 2) == 0.12`) and the scaling is done in
/// floating point, exactly as numpy does it, so the results are the same doubles.
/// NaN and ±∞ come back unchanged, and, as in numpy, \f$x \cdot 10^{k}\f$ may overflow:
/// `np.round(1.7e308, 1)` is `inf`, and so is this.
/// \param x the number. \param decimals \f$k\f$, the digits kept after the point.
/// \return the rounded double.
/// \throws std::invalid_argument if \p decimals is negative or above 308 (where \f$10^k\f$ is
///         not a finite double and every result would be NaN); the message names it.
double round(double x, int decimals);

/// \brief `np.round(x, decimals)` applied to every entry of a matrix or vector.
/// \param x any shape `(r × c)`, empty included. \param decimals digits kept after the point.
/// \return the same shape, every entry rounded; NaN and ±∞ unchanged.
/// \throws std::invalid_argument as round(double, int) does.
arma::mat round(const arma::mat& x, int decimals);

/// \brief `str(a)` for a 1-D float64 array, as numpy 1.24 prints it with default options.
///
/// Each number gets its shortest round-trip digits (at most 8 after the point), then every
/// number is padded to a common width: integer parts right-aligned, fractions left-aligned,
/// so `[0.2, 1.0, 0.7]` prints as `[0.2 1.  0.7]`. Scientific notation is chosen as numpy
/// chooses it (a non-zero magnitude below 1e-4 or from 1e8 up, or a max/min ratio above 1000),
/// and long arrays wrap at 75 characters. Arrays longer than 1000 entries are printed in full
/// (numpy would elide their middle).
/// NaN and ±∞ print as `nan`, `inf` and `-inf` (`[nan  1.]`), as numpy prints them; an array with
/// no entries prints as `[]`. Never throws on a value.
/// \param values `(1 × n)` or `(n × 1)`: the array, read in order.
/// \return the text numpy's `print` shows for the array.
std::string array_str(const arma::mat& values);

/// \brief `str(a)` for a 2-D float64 array, as numpy 1.24 prints it with default options:
///        what `print(np.round(PE, 4))` shows.
///
/// The numbers are formatted as array_str() formats them, with one common width, precision and
/// choice of scientific notation computed over all entries, so the columns line up:
/// \code
/// [[ 0.      1.    ]
///  [ 0.9093 -0.4161]]
/// \endcode
/// Each row is bracketed and printed on its own line, indented one space under the outer `[`.
/// A row too long for 75 characters wraps (a line holds at most 73, leaving room for `]]`)
/// and its continuation lines are indented two spaces. A `(1 × n)` matrix prints as
/// `[[...]]`, an `(n × 1)` matrix as one single-entry row per line, and a matrix with no
/// entries as `[]`.
/// Matrices of more than 1000 entries are printed in full (numpy would elide their middle).
/// NaN and ±∞ print as array_str() prints them. Never throws on a value.
/// \param values `(r × c)`: the array, row `i` of the matrix being row `i` of the array.
/// \return the text numpy's `print` shows for the array, lines joined by `'\n'`.
std::string matrix_str(const arma::mat& values);

/// \brief A 2-D shape as numpy prints it: `(5, 8)`.
/// \param m any matrix, empty included (`(0, 3)`). \return `(rows, cols)`.
std::string shape_str(const arma::mat& m);

}  // namespace attn::numpy
