/// \file
/// \brief A byte-level byte-pair-encoding (BPE) tokenizer of the kind GPT-2 and Stanford
///        CS336 (assignment 1) use: text in, token ids out, and back (chapter 11).
///
/// The vocabulary starts as the 256 bytes: token ids 0 to 255 are the bytes 0x00 to 0xFF, so
/// any byte string can be encoded, invalid UTF-8, NUL and control bytes included. Training adds
/// one token per merge: the \f$k\f$-th merge learned (its rank, from 0) joins two adjacent tokens
/// into the new token \f$256 + k\f$, whose bytes are theirs end to end. Merges never cross a
/// piece boundary of pretokenize().
///
/// For every byte string \f$s\f$ and every tokenizer, `decode(encode(s)) == s`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

/// \brief The text layer: real text as a model reads it (a byte-level BPE tokenizer, byte n-grams).
namespace attn::text {

/// A token's id: 0 to 255 are the bytes, 256 onwards the merges in the order they were learned.
using TokenId = std::uint32_t;

/// The tokens every vocabulary starts with: one per byte value, id = the byte.
inline constexpr std::size_t kByteTokens = 256;

/// \brief Splits text into the pieces BPE works inside; a merge never joins two pieces.
///
/// Each byte is in one class, by its value alone (no UTF-8 decoding):
/// - whitespace: space, `\t`, `\n`, `\v`, `\f`, `\r` (Python's `bytes.isspace()`);
/// - letter: `A`-`Z`, `a`-`z` and every byte from 0x80 to 0xFF, so that the bytes of a UTF-8
///   letter (and any invalid byte) stay inside their word;
/// - digit: `0`-`9`;
/// - other: every other byte (punctuation, symbols, NUL, the control bytes, DEL).
///
/// From the start of the text, each piece is
/// 1. an optional single space, then a run of letters, or a run of digits, or a run of others;
///    or else
/// 2. a run of whitespace; when the run is longer than one byte, ends with a space and is
///    followed by a non-whitespace byte, that last space is left to start the next piece.
///
/// This is GPT-2's rule with three differences: its classes are ASCII over bytes (bytes from
/// 0x80 count as letters) where GPT-2's are Unicode's over code points; it has no English
/// contractions (GPT-2 makes `'s`, `'t`, `'re`, ... pieces of their own); and only a trailing
/// space is left to the next piece, where GPT-2 leaves any whitespace character. The regular
/// expression `[ ]?[A-Za-z\x80-\xff]+|[ ]?[0-9]+|[ ]?[^\sA-Za-z0-9\x80-\xff]+|\s+(?= \S)|\s+`
/// over bytes. `"Hello, world!"` gives `"Hello"`, `","`, `" world"`, `"!"`; `"a  b\n\nc"` gives
/// `"a"`, `" "`, `" b"`, `"\n\n"`, `"c"`. The pieces, end to end, are the text; none is empty.
/// Linear in the length of the text.
/// \param text any bytes.
/// \return the pieces in order, each a view into \p text (empty for an empty text).
std::vector<std::string_view> pretokenize(std::string_view text);

/// \brief One merge: two adjacent tokens that become one.
struct Merge {
  TokenId left = 0;   ///< the token on the left.
  TokenId right = 0;  ///< the token on the right.

  /// \brief Same tokens, same order. \return whether they are the same merge.
  friend bool operator==(const Merge&, const Merge&) = default;
};

/// \brief A byte-level BPE tokenizer: the 256 byte tokens and a list of merges in rank order.
///
/// Made by train_bpe(), or from a list of merges (a tokenizer is its merges).
class BpeTokenizer {
 public:
  /// \brief The tokenizer of \p merges: merge \f$k\f$ makes token \f$256 + k\f$.
  /// \param merges the merges in rank order; none by default (the bytes alone).
  /// \throws InputError if merge \f$k\f$ uses a token not yet made (an id of \f$256 + k\f$ or
  ///         more), or repeats an earlier merge; the message names the merge and its ids.
  explicit BpeTokenizer(std::vector<Merge> merges = {});

  /// \brief The token ids of \p text.
  ///
  /// The text is split by pretokenize(); each piece starts as its bytes, and the merge of
  /// lowest rank among its adjacent pairs is applied to every occurrence, left to right, again
  /// and again until no adjacent pair is a merge (GPT-2's rule). That is the same as applying
  /// every merge in rank order, so a training text encodes as training left it. A piece of
  /// \f$m\f$ bytes costs \f$O(m \cdot k)\f$ for the \f$k\f$ merges it takes; each distinct piece
  /// is encoded once per call.
  /// \param text any bytes.
  /// \return one id per token, each below vocab_size(); as many as the bytes of \p text at most.
  std::vector<TokenId> encode(std::string_view text) const;

  /// \brief The bytes of \p ids, each token's bytes end to end: the inverse of encode().
  /// \param ids token ids, each below vocab_size().
  /// \return the bytes.
  /// \throws InputError on an id outside the vocabulary (the id, its position and the size of
  ///         the vocabulary are named).
  std::string decode(std::span<const TokenId> ids) const;

  /// \brief The bytes token \p id stands for, for printing a token (see printable()).
  /// \param id a token id below vocab_size().
  /// \return its bytes: one byte for ids 0 to 255, its merge's two tokens' bytes end to end
  ///         for the others.
  /// \throws InputError if \p id is outside the vocabulary (it and the size are named).
  const std::string& token_bytes(TokenId id) const;

  /// \brief The number of tokens: \f$256 +\f$ the number of merges.
  /// \return the vocabulary's size; every id is below it.
  std::size_t vocab_size() const { return bytes_.size(); }

  /// \brief The merges in rank order: merges()[k] makes token \f$256 + k\f$.
  /// \return the merges.
  const std::vector<Merge>& merges() const { return merges_; }

 private:
  std::vector<TokenId> encode_piece(std::string_view piece) const;

  std::vector<Merge> merges_;
  std::vector<std::string> bytes_;                      // bytes_[id]: token id's bytes
  std::unordered_map<std::uint64_t, TokenId> made_by_;  // (left, right) → the token it makes
};

/// \brief Learns the merges of a byte-level BPE tokenizer from \p text.
///
/// The text is split by pretokenize() and each distinct piece counted. Every piece starts as
/// its bytes; then, until the vocabulary has \p vocab_size tokens:
/// 1. every adjacent pair of tokens in every piece is counted, times the piece's count (every
///    position: `aaa` holds the pair (a, a) twice);
/// 2. the most frequent pair is the next merge; of pairs equally frequent, the one whose left
///    id is smallest, then whose right id is smallest;
/// 3. the pair becomes the new token \f$256 + k\f$ everywhere it occurs, left to right.
///
/// Training stops early, with a smaller vocabulary, when no piece has two tokens left.
/// The counts are kept up to date rather than recounted: a merge recounts only the distinct
/// pieces that hold its pair, and the most frequent pair comes from a heap. Training on a few
/// megabytes of English to a vocabulary of a few thousand takes under a second (Release build).
/// \param text the training text: any bytes, at least one.
/// \param vocab_size the vocabulary wanted, bytes included: 256 (no merges) up to \f$2^{32} - 1\f$.
/// \return the tokenizer of the merges learned, in the order learned.
/// \throws InputError if \p text is empty, or \p vocab_size is below 256 or above
///         \f$2^{32} - 1\f$ (it is named).
BpeTokenizer train_bpe(std::string_view text, std::size_t vocab_size);

/// \brief Bytes as text to print, as Python writes a `bytes` object between its quotes:
///        printable ASCII (0x20 to 0x7E) as itself, a backslash as `\\`, tab, newline and
///        carriage return as `\t`, `\n`, `\r`, and every other byte as `\x` and two lowercase
///        hexadecimal digits (quotes are left as they are).
/// \param bytes any bytes, such as token_bytes().
/// \return printable ASCII text, from which \p bytes can be read back.
std::string printable(std::string_view bytes);

}  // namespace attn::text
