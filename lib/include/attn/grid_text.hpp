/// \file
/// \brief Score and weight grids as text, in the layout article 004's Python prints.
#pragma once

#include <armadillo>

#include <string>
#include <vector>

namespace attn {

/// \brief A grid as a table: keys across the top, one row per query.
///
/// The layout is the one article 004 prints with f-strings, so a chapter's output can be
/// compared with the article byte for byte:
/// a header of 12 spaces then every key as `f"{t:>8}"`; each row `f"{tok:>10}  "` followed by
/// every value as `f"{w:8.2f}"` (the precision is \p decimals). Lines end with `'\n'`.
/// Labels are padded by code points, as Python pads them, so non-ASCII tokens line up the same.
/// \param queries one label per row of \p grid. \param keys one label per column.
/// \param grid `(n × m)` scores or weights. \param decimals digits after the point.
/// \return the table, one line per query plus the header.
/// \throws ShapeError if the label counts do not match the grid's shape.
std::string grid_table(const std::vector<std::string>& queries,
                       const std::vector<std::string>& keys, const arma::mat& grid,
                       int decimals = 2);

/// \brief A vector written as in the Module 2.1 article: `[0.35, 0.22]`.
/// \param values `(1 × d)` or `(d × 1)`. \param decimals digits after the point.
/// \return the entries, each as `{:.{decimals}f}`, comma separated, in brackets.
std::string vector_text(const arma::mat& values, int decimals = 2);

}  // namespace attn
