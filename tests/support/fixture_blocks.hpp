// Reads the fixtures the Python scripts in tests/data write: blocks of "case NAME ROWS COLS"
// followed by ROWS lines of exact hexadecimal doubles ("0x1.8p+1"). Lines starting with '#'
// are comments. The C++ tests read the numbers; they never run Python.
#pragma once

#include <armadillo>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace attn_test {

/// Every block of a fixture file in tests/data, by name. Throws if the file cannot be read.
inline std::map<std::string, arma::mat> fixture_blocks(const std::string& file) {
  // Appended piece by piece: `std::string(...) + "/" + file` draws a false -Warray-bounds
  // from GCC 14 where this is inlined.
  std::string path = ATTN_TEST_DATA_DIR;
  path += '/';
  path += file;
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error("cannot read the fixture " + path);
  std::map<std::string, arma::mat> blocks;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("case ", 0) != 0)
      continue;
    std::istringstream header(line.substr(5));
    std::vector<std::string> words;
    for (std::string word; header >> word;)
      words.push_back(word);
    const arma::uword rows = std::stoul(words[words.size() - 2]), cols = std::stoul(words.back());
    std::string name;
    for (std::size_t i = 0; i + 2 < words.size(); ++i)
      name += (i ? " " : "") + words[i];
    arma::mat m(rows, cols);
    for (arma::uword r = 0; r < rows && std::getline(in, line); ++r) {
      std::istringstream values(line);
      std::string word;
      for (arma::uword c = 0; c < cols && values >> word; ++c)
        m(r, c) = std::strtod(word.c_str(), nullptr);
    }
    blocks[name] = m;
  }
  return blocks;
}

/// The block \p name of the fixture file \p file, which is read once and kept. Throws naming
/// both if the file has no such block. (A copy, not a reference: a reference into the kept
/// file, bound to a caller's temporary string, is what GCC 14's -Wdangling-reference flags.)
inline arma::mat fixture_block(const std::string& file, const std::string& name) {
  static std::map<std::string, std::map<std::string, arma::mat>> files;
  auto read = files.find(file);
  if (read == files.end())
    read = files.emplace(file, fixture_blocks(file)).first;
  const auto found = read->second.find(name);
  if (found == read->second.end()) {
    std::string message = file;  // appended, for GCC 14 as above
    message += " has no case ";
    message += name;
    throw std::runtime_error(message);
  }
  return found->second;
}

}  // namespace attn_test
