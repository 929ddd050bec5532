#include "attn/book/resident.hpp"

#include <fmt/format.h>

#include <fstream>
#include <stdexcept>
#include <string>

namespace attn::book {

Resident resident_memory() {
  std::ifstream status("/proc/self/status");
  if (!status)
    throw std::runtime_error("cannot read /proc/self/status (resident memory)");
  Resident r;
  bool now = false, peak = false;
  for (std::string line; std::getline(status, line);) {
    // "VmRSS:	  123456 kB"
    if (line.rfind("VmRSS:", 0) == 0)
      now = true, r.now = std::stoull(line.substr(6)) * 1024;
    if (line.rfind("VmHWM:", 0) == 0)
      peak = true, r.peak = std::stoull(line.substr(6)) * 1024;
  }
  if (!now || !peak)
    throw std::runtime_error("/proc/self/status has no VmRSS or VmHWM line");
  return r;
}

void reset_peak_resident() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  clear.flush();
  if (!clear)
    throw std::runtime_error(
        fmt::format("cannot reset the peak resident memory: writing 5 to "
                    "/proc/self/clear_refs failed (Linux 4.0 or later needed)"));
}

}  // namespace attn::book
