/// \file
/// \brief Chapter 11's second yardstick: general-purpose compressors (xz, bzip2, zstd, 7-Zip's
///        PPMd, zpaq), run as the programs Debian installs, on the test text after the training
///        text, so that each learns from the training text before it reads the test text.
///
/// A compressor's bits per byte on the test text, given the training text, are
/// \f$8\,(C(\text{training} + \text{test}) - C(\text{training})) / |\text{test}|\f$, with
/// \f$C\f$ the compressed size in bytes. Each program is started with an argument vector
/// (posix_spawn(), no shell) and an environment of PATH alone (so that XZ_OPT, ZSTD_CLEVEL and
/// the like cannot change its settings), in a scratch folder of its own that is removed
/// afterwards.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace attn::ch11 {

/// In a Compressor's arguments: the file holding the bytes to compress (the program then reads
/// no standard input).
inline constexpr const char* kInputFile = "{input}";
/// In a Compressor's arguments: the file the program writes (its size is the compressed size;
/// what it prints is ignored).
inline constexpr const char* kOutputFile = "{output}";

/// \brief A general-purpose compressor, as a program and its arguments.
///
/// Without kInputFile among its arguments, the program reads the bytes from its standard input,
/// a pipe, so that it cannot learn their size before it has read them (7-Zip would size PPMd's
/// memory from it). Without kOutputFile, the compressed size is the number of bytes it writes to
/// its standard output.
struct Compressor {
  std::string label = {};                   ///< how the chapter names it, e.g. `xz -9e`.
  std::vector<std::string> programs = {};   ///< its names, tried in order on PATH (`7zz`, `7z`).
  std::vector<std::string> arguments = {};  ///< its arguments after the program's name.
  std::string output_name = {};  ///< the file kOutputFile names (`text.zpaq`: zpaq adds `.zpaq`).
  std::string package = {};      ///< the Debian package that installs it, for the skip message.
};

/// A compressor that could not start, or that exited with an error or on a signal.
class CompressorError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// \brief Where \p names' first program is: a name with a `/` is taken as a path, any other is
///        looked up in the folders of PATH (or `/usr/bin:/bin` when PATH is not set).
/// \param names the program's names, in order. \return its path, or empty if none is found.
std::string find_program(const std::vector<std::string>& names);

/// \brief The size, in bytes, of \p bytes compressed by \p compressor, run as \p program.
/// \param compressor the arguments, and where the input and output go.
/// \param program the program's path (find_program()). \param bytes what to compress.
/// \return the bytes written to standard output, or to the kOutputFile file.
/// \throws CompressorError naming the program and what went wrong: it cannot start, it exits
///         with a status other than 0 (with the end of what it wrote to standard error), it is
///         stopped by a signal, it stopped reading its input before the end (and so measured
///         part of it), or it wrote no kOutputFile file.
std::size_t compressed_size(const Compressor& compressor, const std::string& program,
                            std::string_view bytes);

/// What one compressor made of the test text, given the training text.
struct CompressorRun {
  std::string program;             ///< the program run, or empty if none was found.
  std::string problem;             ///< why there are no bits per byte: not installed, or its error.
  std::size_t training_bytes = 0;  ///< C(training): the training text alone, compressed.
  std::size_t both_bytes = 0;      ///< C(training + test): the training text, then the test text.
  double bits_per_byte = 0.0;      ///< 8 (both_bytes − training_bytes) / test bytes.
  double seconds = 0.0;            ///< wall-clock time of both compressions (measured).
  /// \return whether it ran, so that bits_per_byte holds a measurement.
  bool ran() const { return problem.empty(); }
};

/// \brief \p compressor's bits per byte on \p test after \p training:
///        \f$8\,(C(\text{training} + \text{test}) - C(\text{training})) / |\text{test}|\f$.
///
/// The two compressions run side by side, each a program of its own. Nothing is thrown: a
/// program that is not installed, or that fails, is reported in CompressorRun::problem.
/// \param compressor what to run. \param training the text it reads first.
/// \param test the text it is scored on; not empty.
/// \return the program run, both sizes, the bits per byte and the time taken; or why not.
CompressorRun bits_per_byte(const Compressor& compressor, const std::string& training,
                            const std::string& test);

}  // namespace attn::ch11
