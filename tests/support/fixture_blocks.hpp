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
  const std::string path = std::string(ATTN_TEST_DATA_DIR) + "/" + file;
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

}  // namespace attn_test
