#include "kjv.hpp"

#include <attn/math/validate.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <regex>

namespace attn::ch11 {

namespace {

constexpr unsigned kFirstWidth = 9;       // bits per code at the start
constexpr unsigned kLastWidth = 16;       // bible.data's streams were written with -b 16
constexpr unsigned kClear = 256;          // block mode: this code empties the dictionary
constexpr unsigned kFirstFree = 257;      // the first code a new string gets
constexpr std::size_t kHeaderBytes = 84;  // "EC02" and a text description
constexpr unsigned kWindows = 68;

// A big-endian 32-bit number at byte `at` of `file`.
std::uint32_t big_endian(const std::string& file, std::size_t at) {
  std::uint32_t value = 0;
  for (std::size_t i = 0; i < 4; ++i)
    value = (value << 8) | static_cast<unsigned char>(file[at + i]);
  return value;
}

}  // namespace

//! [unlzw]
std::string unlzw(std::span<const unsigned char> stream) {
  std::vector<std::uint32_t> prefix(1u << kLastWidth);  // entry = prefix entry + one byte
  std::vector<unsigned char> suffix(1u << kLastWidth);
  for (unsigned byte = 0; byte < 256; ++byte)
    suffix[byte] = static_cast<unsigned char>(byte);
  unsigned width = kFirstWidth;
  unsigned next_free = kFirstFree;
  const std::size_t total_bits = stream.size() * 8;
  std::size_t bit = 0;          // where the next code starts
  std::size_t group_start = 0;  // where codes of the current width began
  // compress writes codes in groups of eight; a new width or a clear skips to the group's end.
  const auto skip_to_group_end = [&] {
    const std::size_t group_bits = 8 * width;
    bit = group_start + (bit - group_start + group_bits - 1) / group_bits * group_bits;
    group_start = bit;
  };
  std::string out;
  std::string entry;   // the bytes of the code just decoded
  long previous = -1;  // the code before it, or -1 at the start and after a clear
  while (bit + width <= total_bits) {
    if (next_free > (1u << width) - 1 && width < kLastWidth) {
      skip_to_group_end();
      ++width;
      continue;
    }
    std::uint32_t code = 0;  // `width` bits from `bit`, least significant bit first
    for (unsigned k = 0; k < width; ++k, ++bit)
      code |= static_cast<std::uint32_t>((stream[bit / 8] >> (bit % 8)) & 1u) << k;
    if (code == kClear) {
      skip_to_group_end();
      width = kFirstWidth;
      next_free = kFirstFree - 1;  // the code after a clear adds no entry
      previous = -1;
      continue;
    }
    if (code > next_free || (code == next_free && previous < 0))
      throw math::InputError(
          fmt::format("unlzw: code {} at bit {} is past the dictionary's {} entries", code,
                      bit - width, next_free));
    // Decode `code`, or, for the one code not yet in the dictionary, the previous string
    // followed by its own first byte.
    std::uint32_t walk = code == next_free ? static_cast<std::uint32_t>(previous) : code;
    entry.clear();
    while (walk >= 256) {
      entry.push_back(static_cast<char>(suffix[walk]));
      walk = prefix[walk];
    }
    entry.push_back(static_cast<char>(walk));
    std::reverse(entry.begin(), entry.end());
    if (code == next_free)
      entry.push_back(entry.front());
    out += entry;
    if (previous >= 0 && next_free < (1u << kLastWidth)) {
      prefix[next_free] = static_cast<std::uint32_t>(previous);
      suffix[next_free] = static_cast<unsigned char>(entry.front());
      ++next_free;
    } else if (previous < 0 && next_free == kFirstFree - 1) {
      next_free = kFirstFree;  // the first code after a clear is a byte; entries resume
    }
    previous = code;
  }
  return out;
}
//! [unlzw]

std::string read_bible(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw math::InputError(fmt::format(
        "cannot read {}: chapter 11's corpus is the King James Bible of Debian's bible-kjv-text "
        "package (./scripts/install-deps installs it)",
        path));
  const std::string file{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const std::size_t table = kHeaderBytes + 8;
  if (file.size() < table || file.compare(0, 4, "EC02") != 0)
    throw math::InputError(
        fmt::format("{} does not start as bible-kjv-text's data file does", path));
  const std::uint32_t windows = big_endian(file, kHeaderBytes + 4);
  if (windows != kWindows || file.size() < table + 4 * (windows + 1))
    throw math::InputError(
        fmt::format("{}: {} windows, where bible-kjv-text has {}", path, windows, kWindows));
  std::string text;
  for (std::uint32_t w = 0; w < windows; ++w) {
    const std::uint32_t begin = big_endian(file, table + 4 * w);
    const std::uint32_t end = big_endian(file, table + 4 * (w + 1));
    if (begin > end || end > file.size())
      throw math::InputError(fmt::format("{}: window {} runs from byte {} to {} of {}", path, w,
                                         begin, end, file.size()));
    const auto* bytes = reinterpret_cast<const unsigned char*>(file.data());
    text += unlzw({bytes + begin, bytes + end});
  }
  return text;
}

std::vector<Verse> parse_verses(const std::string& bible) {
  static const std::regex label(R"(^([1-3]?[A-Za-z]+)([0-9]+):([0-9]+) (.*)$)");
  std::vector<Verse> verses;
  std::size_t start = 0;
  while (start < bible.size()) {
    std::size_t end = bible.find('\n', start);
    if (end == std::string::npos)
      end = bible.size();
    const std::string line = bible.substr(start, end - start);
    std::smatch m;
    if (std::regex_match(line, m, label))
      verses.push_back({m[1], std::stoi(m[2]), std::stoi(m[3]), m[4]});
    start = end + 1;
  }
  return verses;
}

Corpus split_corpus(const std::vector<Verse>& verses) {
  constexpr int kEvery = 10;      // one chapter in ten to each held-out part:
  constexpr int kTest = 0;        // chapters 10, 20, 30, ... test
  constexpr int kValidation = 5;  // chapters 5, 15, 25, ... validate
  Corpus corpus;
  for (const Verse& v : verses) {
    const int place = v.chapter % kEvery;
    std::string& part = place == kTest         ? corpus.test
                        : place == kValidation ? corpus.validation
                                               : corpus.training;
    std::size_t& count = place == kTest         ? corpus.test_lines
                         : place == kValidation ? corpus.validation_lines
                                                : corpus.training_lines;
    part += v.text + '\n';
    ++count;
  }
  return corpus;
}

}  // namespace attn::ch11
