/// \file
/// \brief Text the way the articles' Python makes it: score and weight grids in article 004's
///        layout, vectors as Module 2.1 writes them, and sentences split into words.
///
/// Numbers are written as Python's f-strings write them, NaN as `nan` and the infinities as
/// `inf` and `-inf`; a negative count of decimals is an InputError naming `decimals`.
#pragma once

#include <armadillo>

#include <string>
#include <vector>

namespace attn::book {

/// \brief A grid as a table: keys across the top, one row per query.
///
/// The layout is the one article 004 prints with f-strings, so a chapter's output can be
/// compared with the article byte for byte:
/// a header of 12 spaces then every key as `f"{t:>8}"`; each row `f"{tok:>10}  "` followed by
/// every value as `f"{w:8.2f}"` (the precision is \p decimals). Every line ends with a newline.
/// Labels are padded by code points, as Python pads them, so non-ASCII tokens line up the same.
/// \param queries one label per row of \p grid.
/// \param keys one label per column.
/// \param grid `(n × m)` scores or weights.
/// \param decimals digits after the point.
/// \return the table, one line per query plus the header; a NaN cell reads `nan`, as Python's.
/// \throws ShapeError if the label counts do not match the grid's shape (both are named).
/// \throws InputError if \p decimals is negative.
std::string grid_table(const std::vector<std::string>& queries,
                       const std::vector<std::string>& keys, const arma::mat& grid,
                       int decimals = 2);

/// \brief grid_table() for cells already written as text, each right-aligned in 8 columns,
///        for a table whose numbers were formatted elsewhere (one token's walk, say).
/// \param queries one label per row. \param keys one label per column.
/// \param cells one row of texts per query, one text per key.
/// \return the table, one line per query plus the header.
/// \throws ShapeError unless there is one row per query and one text per key in each.
std::string grid_table(const std::vector<std::string>& queries,
                       const std::vector<std::string>& keys,
                       const std::vector<std::vector<std::string>>& cells);

/// \brief The values of a table in grid_table()'s layout, read back: the inverse of
///        grid_table(), for tables an article printed.
///
/// The first line is the header of keys; every further non-empty line is a query label
/// followed by one number per key.
/// \param table the table's text, header first.
/// \return the grid `(queries × keys)`.
/// \throws InputError if a row does not hold one number per key, a cell is not wholly a finite
///         number (`nan`, `inf` and `0.5x` are named with their row and column), or the table
///         has no header or no row.
arma::mat grid_from_table(const std::string& table);

/// \brief Labels for the cells of one row of a grid, by position and by token, such as
///        `"0,1 the→cat"`, so that repeated tokens ("the" twice) stay distinct.
/// \param tokens the sentence's tokens (both queries and keys).
/// \param row the query's row.
/// \return one label per column.
/// \throws std::out_of_range if \p row is not one of \p tokens (none is, when it is empty).
std::vector<std::string> cell_labels(const std::vector<std::string>& tokens, std::size_t row);

/// \brief A number with a fixed count of decimals, like `{:.2f}`, except that a value which
///        rounds to zero prints as `0.00`, never as `-0.00`.
/// NaN prints as `nan` (never `-nan`), the infinities as `inf` and `-inf`, as Python does.
/// \param value the number. \param decimals digits after the point.
/// \return the text.
/// \throws InputError if \p decimals is negative.
std::string fixed(double value, int decimals = 2);

/// \brief A vector written as in the Module 2.1 article: `[0.35, 0.22]`.
/// \param values `(1 × d)` or `(d × 1)`. \param decimals digits after the point.
/// \return the entries, each as fixed(), comma separated, in brackets; `[]` for no entry.
/// \throws InputError if \p decimals is negative.
std::string vector_text(const arma::mat& values, int decimals = 2);

/// \brief Python's `sentence.split()`: the words between runs of whitespace.
///
/// Whitespace is what Python's `str.isspace()` accepts: ASCII blanks and the separators
/// U+001C to U+001F, U+0085, U+00A0, U+1680, U+2000 to U+200A, U+2028, U+2029, U+202F, U+205F
/// and U+3000, so a sentence splits into the same tokens in C++ as in the article's Python.
/// \param sentence UTF-8 text. \return its words, in order; empty if there are none.
std::vector<std::string> split_words(const std::string& sentence);

/// \brief The row of \p token in \p tokens.
/// \param tokens a sentence's tokens. \param token the one to find (exact spelling).
/// \return its index.
/// \throws std::invalid_argument listing the valid tokens if \p token is not one of them.
arma::uword token_index(const std::vector<std::string>& tokens, const std::string& token);

}  // namespace attn::book
