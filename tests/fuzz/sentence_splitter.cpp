// Fuzzes attn::book::split_words(), Python's `str.split()` over UTF-8 text, which every sentence a
// reader types goes through (chapter 04's --sentence, chapter 10's --prompt), with arbitrary
// bytes: valid UTF-8 with every kind of whitespace, and also truncated, overlong and stray
// sequences.
//
// The promises checked, besides no crash, leak or undefined behaviour:
// - no word is empty, and no word contains an ASCII whitespace byte;
// - the words appear in the input in order, each one a run of its bytes;
// - splitting the words joined by single spaces gives the same words.
#include <attn/book/grid_text.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

[[noreturn]] void fail(const char* promise, const std::string& word) {
  std::fprintf(stderr, "split_words: %s (word of %zu bytes)\n", promise, word.size());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string sentence(reinterpret_cast<const char*>(data), size);
  const std::vector<std::string> words = attn::book::split_words(sentence);

  std::size_t from = 0;
  std::string joined;
  for (const std::string& word : words) {
    if (word.empty())
      fail("an empty word", word);
    if (word.find_first_of(" \t\n\v\f\r") != std::string::npos)
      fail("a word holds whitespace", word);
    const std::size_t at = sentence.find(word, from);
    if (at == std::string::npos)
      fail("a word is not in the sentence, in order", word);
    from = at + word.size();
    if (!joined.empty())
      joined += ' ';
    joined += word;
  }
  if (attn::book::split_words(joined) != words)
    fail("joined and split again, the words change", joined);
  return 0;
}
