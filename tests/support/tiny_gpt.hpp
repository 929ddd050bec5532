// What the GPT layer's tests share (and chapter 11's, whose kind of model it is): the tiny
// model they train or sample from, and a folder of a test's own for the files it writes and reads.
#pragma once

#include <attn/gpt/forward.hpp>

#include <gtest/gtest.h>

#include <unistd.h>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace gpt_test {

/// Chapter 11's kind of model, tiny: d_model 8, 2 heads, d_ff 16, learned positions, dropout
/// 0.1, tied embeddings unless `tied` is false.
inline attn::gpt::TransformerConfig tiny_config(arma::uword vocabulary, arma::uword max_length,
                                                arma::uword layers = 1, bool tied = true) {
  return {.vocabulary = vocabulary,
          .d_model = 8,
          .heads = 2,
          .layers = layers,
          .d_ff = 16,
          .max_length = max_length,
          .positions = attn::gpt::Positions::learned,
          .tied_embeddings = tied,
          .dropout = 0.1};
}

/// A folder of the running test's own (attn_gpt_<test>_<pid> in the system's temporary
/// folder), empty at the start and removed with it.
class TempDir {
 public:
  TempDir() {
    const testing::TestInfo* test = testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            (std::string("attn_gpt_") + test->name() + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::size_t entries() const {
    return static_cast<std::size_t>(std::distance(std::filesystem::directory_iterator(path_),
                                                  std::filesystem::directory_iterator()));
  }

 private:
  std::filesystem::path path_;
};

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// The file's bytes, or "" if it cannot be read.
inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace gpt_test
