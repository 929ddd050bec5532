/// \file
/// \brief What every exercise shares: the exception an unsolved stub throws.
///
/// The exercises live in three places (\ref exercises tells the reader how to work through
/// them): `exercises/NN_slug.hpp` declares a chapter's functions, each with its statement,
/// parameters and hint; `exercises/stubs/NN_slug.cpp` is the file the reader edits, whose
/// functions throw NotSolved until they are written; and `exercises/solutions/NN_slug.cpp`
/// holds the reference answers. `tests/exercises/` checks both against the same tests.
#pragma once

#include <stdexcept>
#include <string>

/// \brief The exercises: functions the reader writes, one namespace for all chapters.
namespace attn::exercises {

/// \brief What an untouched stub throws, so that its tests fail with a message that says so.
class NotSolved : public std::logic_error {
 public:
  /// \brief \param id the exercise, for example `"1.1"`.
  explicit NotSolved(const std::string& id)
      : std::logic_error("exercise " + id +
                         " is not solved yet: its function in exercises/stubs/ still calls "
                         "not_solved(); replace that line with your answer") {}
};

/// \brief The body of an unsolved stub: throws NotSolved for exercise \p id.
///
/// The stub passes its own parameters along only so that it compiles without
/// unused-parameter warnings; they are not read.
/// \param id the exercise, for example `"1.1"`.
template <typename... Unused>
[[noreturn]] void not_solved(const char* id, const Unused&... /*parameters*/) {
  throw NotSolved(id);
}

}  // namespace attn::exercises
