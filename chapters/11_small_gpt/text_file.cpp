#include "text_file.hpp"

#include <attn/gpt/checkpoint.hpp>
#include <attn/math/validate.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace attn::ch11 {

namespace {

// Where the cut after `tenths` tenths of `text` falls: at byte ⌊B · tenths / 10⌋, moved forward
// to the next line's start if one starts within the next tenth.
std::size_t cut_at(const std::string& text, std::size_t tenths) {
  const std::size_t at = text.size() * tenths / kTenths;
  if (at == 0 || text[at - 1] == '\n')
    return at;
  const std::size_t reach = text.size() / kTenths;  // how far a cut may move
  const std::size_t line_end = text.find('\n', at);
  if (line_end == std::string::npos || line_end + 1 - at > reach)
    return at;
  return line_end + 1;
}

}  // namespace

std::string text_file_problem(const std::string& path) {
  if (path.empty())
    return "no file named: give the text's path";
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(path, error);
  if (!std::filesystem::exists(status))
    return fmt::format("there is no file {}", path);
  if (std::filesystem::is_directory(status))
    return fmt::format("{} is a folder, not a text file", path);
  if (!std::filesystem::is_regular_file(status))
    return fmt::format("{} is not a regular file", path);
  if (!std::ifstream(path, std::ios::binary))
    return fmt::format("cannot read {}", path);
  if (std::filesystem::file_size(path, error) == 0 && !error)
    return fmt::format("{} is empty: there is nothing to learn from", path);
  return {};
}

std::string read_text_file(const std::string& path) {
  const std::string problem = text_file_problem(path);
  if (!problem.empty())
    throw math::InputError(problem);
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::size_t count_lines(const std::string& text) {
  const auto ends = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
  return ends + (!text.empty() && text.back() != '\n' ? 1 : 0);
}

TextNeeded text_needed(std::size_t tokens, std::size_t part_bytes, std::size_t part_tokens,
                       std::size_t tenths) {
  TextNeeded needed;
  if (part_tokens > 0)
    needed.bytes_per_token = static_cast<double>(part_bytes) / static_cast<double>(part_tokens);
  needed.text_bytes = std::ceil(static_cast<double>(tokens) * needed.bytes_per_token *
                                static_cast<double>(kTenths) / static_cast<double>(tenths));
  return needed;
}

std::string first_line(const std::string& text) {
  const std::size_t start = std::min(text.find_first_not_of('\n'), text.size());
  const std::size_t end = std::min(text.find('\n', start), text.size());
  return text.substr(start, end - start);
}

Corpus split_by_position(const std::string& text) {
  const std::size_t first = cut_at(text, kTrainingTenths);
  const std::size_t second = std::max(first, cut_at(text, kTrainingTenths + kValidationTenths));
  Corpus corpus;
  corpus.training = text.substr(0, first);
  corpus.validation = text.substr(first, second - first);
  corpus.test = text.substr(second);
  corpus.training_lines = count_lines(corpus.training);
  corpus.validation_lines = count_lines(corpus.validation);
  corpus.test_lines = count_lines(corpus.test);
  return corpus;
}

std::string text_fingerprint(const std::string& text) {
  return fmt::format("text {} bytes, FNV-1a {:016x}, split by position\n", text.size(),
                     gpt::fnv1a(text));
}

std::string text_checkpoint(const std::string& path) {
  std::string name;
  for (const char c : std::filesystem::path(path).filename().string())
    name += std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' ? c : '_';
  const std::filesystem::path kjv = ATTN_DEFAULT_CHECKPOINT;
  return (kjv.parent_path() /
          fmt::format("{}.text-{}{}", kjv.stem().string(), name, kjv.extension().string()))
      .string();
}

}  // namespace attn::ch11
