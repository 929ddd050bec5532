/// \file
/// \brief Chapter 11's corpus: the King James Bible as Debian's `bible-kjv-text` package ships
///        it, decoded, cut into verses and split into training, validation and test parts.
///
/// The package keeps the text in `/usr/lib/bible.data`, compressed for the `bible` program's
/// random access: a header, then 68 windows of at most 65,536 bytes of text, each compressed on its
/// own with the LZW code of Unix `compress` (16-bit codes, block mode). The file is
/// byte-identical in Debian 12 (4.38) and 13 (4.39); the King James text is in the public domain.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

/// \brief Chapter 11's own material: the King James Bible, decoded from Debian's file and split.
namespace attn::ch11 {

/// Where Debian's `bible-kjv-text` installs the compressed Bible.
inline constexpr const char* kBiblePath = "/usr/lib/bible.data";

/// \brief Decodes one Unix `compress` stream (LZW) without its 3-byte header: codes start
///        9 bits wide and grow to 16, code 256 clears the dictionary (block mode), and codes
///        are read in groups of eight, a group being skipped to its end when the width changes
///        or the dictionary is cleared (as `compress` wrote them).
/// \param stream the compressed bytes. \return the decoded bytes.
/// \throws attn::math::InputError if a code refers to a dictionary entry that does not exist yet.
std::string unlzw(std::span<const unsigned char> stream);

/// \brief The whole text of `bible.data`: its header read, each window decoded, joined.
/// \param path the file (kBiblePath). \return 4,404,475 bytes of 7-bit ASCII: a title line,
///        then one verse per line such as `Ge1:1 In the beginning God created ...`.
/// \throws attn::math::InputError naming the file and the package if it cannot be read, and naming
///         what is wrong if its header or a window is malformed.
std::string read_bible(const std::string& path);

/// \brief One verse: `Ge1:1 In the beginning ...` is book `Ge`, chapter 1, verse 1.
struct Verse {
  std::string book;  ///< the book's short name (`Ge`, `1Sm`, `Rev`, ...).
  int chapter = 0;   ///< from 1.
  int verse = 0;     ///< from 1.
  std::string text;  ///< the words, without the label and the line's end.
};

/// \brief Every verse of the decoded text, in order. Lines without a verse label (the title
///        line) are skipped.
/// \param bible what read_bible() returned. \return 31,102 verses for Debian's file.
std::vector<Verse> parse_verses(const std::string& bible);

/// \brief The text a model trains on, the text that chooses its settings, and the text it is
///        judged on once at the end.
struct Corpus {
  std::string training;    ///< the training text: for the Bible, its verses' words, one a line.
  std::string validation;  ///< the validation text, the same way.
  std::string test;        ///< the test text, the same way.
  std::size_t training_lines = 0;    ///< lines in the training text (for the Bible, verses).
  std::size_t validation_lines = 0;  ///< lines in the validation text.
  std::size_t test_lines = 0;        ///< lines in the test text.
};

/// \brief The book's split, by whole chapters: chapters 10, 20, 30, ... (Genesis 10, ...,
///        Psalms 150) are the test part, chapters 5, 15, 25, ... the validation part, every other
///        chapter trains. Whole chapters are held out, so no held-out verse sits between two
///        training verses of its own chapter; a book of fewer than 5 chapters trains only, one of
///        5 to 9 chapters also validates.
/// \param verses from parse_verses(). \return the three parts, labels removed.
Corpus split_corpus(const std::vector<Verse>& verses);

}  // namespace attn::ch11
