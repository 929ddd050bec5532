/// \file
/// \brief How much memory this process holds: its resident set now and at its peak, as Linux
///        reports them in `/proc/self/status` (VmRSS, VmHWM). Chapter 09 checks a bound with it.
#pragma once

#include <cstdint>

namespace attn::book {

/// \brief Resident memory, in bytes.
struct Resident {
  std::uint64_t now = 0;   ///< VmRSS: pages in RAM now.
  std::uint64_t peak = 0;  ///< VmHWM: the most there have been since the start or the last reset.
};

/// \brief Reads VmRSS and VmHWM from `/proc/self/status`.
/// \return both, in bytes.
/// \throws std::runtime_error if the file cannot be read or lacks either line.
Resident resident_memory();

/// \brief Starts a new peak: writes `5` to `/proc/self/clear_refs` (Linux 4.0 and later), after
///        which VmHWM counts from the current resident set, so a peak measures one computation.
/// \throws std::runtime_error if the kernel refuses (the peak would then count from the start).
void reset_peak_resident();

}  // namespace attn::book
