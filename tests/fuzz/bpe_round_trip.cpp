// Fuzzes the byte-level BPE tokenizer (attn/text/bpe.hpp), which chapter 11 trains on a text
// and then feeds the reader's prompt: a tokenizer is trained on the first part of the input
// and encodes the rest, with arbitrary bytes in both (NUL, control bytes, invalid UTF-8, long
// runs of one byte or of whitespace).
//
// The input: byte 0 is the number of merges asked for (vocab_size = 256 + byte 0), byte 1 where
// the training text ends (that fraction of the remaining bytes), the remaining bytes the two
// texts. The promises checked, besides no crash, leak or undefined behaviour:
// - an empty training text is an InputError, any other trains; the vocabulary is at most what
//   was asked for, one token per byte and one per merge, each merge's token its two tokens'
//   bytes end to end;
// - decode(encode(s)) == s for both texts, every id below the vocabulary's size, no more ids
//   than bytes;
// - the pieces are the text, none empty, and encoding piece by piece gives the same ids;
// - the tokenizer rebuilt from its merges encodes the same; decode refuses the first id past
//   the vocabulary with an InputError.
#include <attn/math/validate.hpp>
#include <attn/text/bpe.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace {

using attn::text::BpeTokenizer;
using attn::text::TokenId;

[[noreturn]] void fail(const char* promise, std::string_view text) {
  std::fprintf(stderr, "bpe: %s (text of %zu bytes)\n", promise, text.size());
  std::abort();
}

void check_round_trip(const BpeTokenizer& bpe, const BpeTokenizer& rebuilt, std::string_view s) {
  const std::vector<TokenId> ids = bpe.encode(s);
  if (ids.size() > s.size())
    fail("more ids than bytes", s);
  for (const TokenId id : ids) {
    if (id >= bpe.vocab_size())
      fail("an id outside the vocabulary", s);
  }
  if (bpe.decode(ids) != s)
    fail("decode(encode(s)) is not s", s);
  if (rebuilt.encode(s) != ids)
    fail("the tokenizer rebuilt from its merges encodes differently", s);

  std::string joined;
  std::vector<TokenId> piece_by_piece;
  for (const std::string_view piece : attn::text::pretokenize(s)) {
    if (piece.empty())
      fail("an empty piece", s);
    joined += piece;
    const std::vector<TokenId> piece_ids = bpe.encode(piece);
    piece_by_piece.insert(piece_by_piece.end(), piece_ids.begin(), piece_ids.end());
  }
  if (joined != s)
    fail("the pieces, end to end, are not the text", s);
  if (piece_by_piece != ids)
    fail("encoding piece by piece differs: a merge crossed a piece boundary", s);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2)
    return 0;
  const std::size_t vocab_size = attn::text::kByteTokens + data[0];
  const std::string_view rest(reinterpret_cast<const char*>(data + 2), size - 2);
  const std::string_view training = rest.substr(0, rest.size() * data[1] / 255);
  const std::string_view text = rest.substr(training.size());

  if (training.empty()) {
    try {
      attn::text::train_bpe(training, vocab_size);
    } catch (const attn::math::InputError&) {
      return 0;
    }
    fail("trained on an empty text", training);
  }
  const BpeTokenizer bpe = attn::text::train_bpe(training, vocab_size);
  if (bpe.vocab_size() > vocab_size ||
      bpe.vocab_size() != attn::text::kByteTokens + bpe.merges().size()) {
    fail("the vocabulary is not one token per byte and per merge, within the size asked", training);
  }
  for (std::size_t k = 0; k < bpe.merges().size(); ++k) {
    const attn::text::Merge m = bpe.merges()[k];
    const auto id = static_cast<TokenId>(attn::text::kByteTokens + k);
    if (bpe.token_bytes(id) != bpe.token_bytes(m.left) + bpe.token_bytes(m.right))
      fail("a merge's token is not its two tokens end to end", training);
  }
  const BpeTokenizer rebuilt(bpe.merges());
  check_round_trip(bpe, rebuilt, training);
  check_round_trip(bpe, rebuilt, text);

  try {
    const std::vector<TokenId> past_the_end{static_cast<TokenId>(bpe.vocab_size())};
    bpe.decode(past_the_end);
  } catch (const attn::math::InputError&) {
    return 0;
  }
  fail("decoded an id outside the vocabulary", text);
}
