/// \file
/// \brief Chapter 11 on a reader's own text (`--text FILE`): the file checked and read, and split
///        into training, validation and test parts by position.
#pragma once

#include "kjv.hpp"

#include <cstddef>
#include <string>

namespace attn::ch11 {

/// A reader's text is split in tenths of its bytes.
inline constexpr std::size_t kTenths = 10;
/// The training part's share of a reader's text, in tenths: the first eight.
inline constexpr std::size_t kTrainingTenths = 8;
/// The validation part's share: the ninth tenth.
inline constexpr std::size_t kValidationTenths = 1;
/// The test part's share: the rest, the last tenth.
inline constexpr std::size_t kTestTenths = kTenths - kTrainingTenths - kValidationTenths;

/// \brief What keeps \p path from being a text to train on, in words, or nothing.
/// \param path the file a reader named. \return empty if it is a readable file with at least one
///        byte; otherwise what is wrong, naming the file: no path is given, it does not exist,
///        it is a folder (or another thing that is not a file), it cannot be opened, or it is
///        empty.
std::string text_file_problem(const std::string& path);

/// \brief Every byte of the file \p path, as it is (any bytes: no encoding is assumed).
/// \param path the file. \return its bytes.
/// \throws attn::math::InputError with text_file_problem()'s words if it has one.
std::string read_text_file(const std::string& path);

/// \brief The number of lines of \p text: its line ends, plus one for a last line without one.
/// \param text any bytes. \return 0 for an empty text.
std::size_t count_lines(const std::string& text);

/// \brief How long a reader's text should be for one of its parts to encode to some number of
///        tokens: what a refusal of a short text tells the reader.
struct TextNeeded {
  double bytes_per_token = 1.0;  ///< the part's bytes over its tokens (1 if it has no token).
  double text_bytes = 0.0;       ///< the whole text's bytes, at that rate, rounded up.
};

/// \brief The text a part of \p tenths tenths needs to hold \p tokens tokens, at the rate the
///        part has now: \f$\lceil \text{tokens} \cdot (B / T) \cdot 10 / \text{tenths} \rceil\f$,
///        \f$B\f$ the part's bytes and \f$T\f$ its tokens (1 byte a token if \f$T = 0\f$).
/// \param tokens how many the part should hold. \param part_bytes \f$B\f$.
/// \param part_tokens \f$T\f$. \param tenths the part's share of the text (kTrainingTenths, ...).
/// \return the rate and the text's bytes.
TextNeeded text_needed(std::size_t tokens, std::size_t part_bytes, std::size_t part_tokens,
                       std::size_t tenths);

/// \brief The first line of \p text that is not empty, without its line end.
/// \param text any bytes. \return the line; empty if \p text holds nothing but line ends.
std::string first_line(const std::string& text);

/// \brief A reader's text split by position into three contiguous parts: training, the first
///        kTrainingTenths tenths of its bytes; validation, the next kValidationTenths; test,
///        the rest (the last tenth).
///
/// Each cut, at byte \f$\lfloor B \cdot k / 10 \rfloor\f$ of \f$B\f$, moves forward to the
/// start of the next line, so that no line is cut in two, unless no line starts within the
/// next tenth of the text; then it falls at that byte, inside a line. Contiguous parts keep
/// every held-out line away from training lines on both sides (only the two cuts touch): a
/// text of unknown structure has no chapters to hold out, as the Bible has.
/// \param text any bytes. \return the three parts, their bytes end to end being \p text, and
///        their line counts (count_lines()).
Corpus split_by_position(const std::string& text);

/// \brief The line a run on a reader's text adds to its checkpoint's fingerprint: the text's
///        size and FNV-1a hash (gpt::fnv1a()), so that a checkpoint of another text, or of this
///        file after an edit, is another run's.
/// \param text the whole text, as read_text_file() read it. \return one line, its end included.
std::string text_fingerprint(const std::string& text);

/// \brief Where chapter 11 keeps the checkpoint of a run on the reader's text at \p path when no
///        `--checkpoint` is named: beside the King James Bible's (ATTN_DEFAULT_CHECKPOINT),
///        named after the file, every byte of its name but letters, digits, `.` and `-` turned
///        into `_` (`ch11_small_gpt.text-notes.txt.checkpoint` for `notes.txt`).
/// \param path the reader's text. \return the checkpoint's path.
std::string text_checkpoint(const std::string& path);

}  // namespace attn::ch11
