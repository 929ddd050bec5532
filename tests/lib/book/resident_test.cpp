// Resident memory (attn::book::resident_memory, attn::book::reset_peak_resident): the peak follows
// what the process touches, and a reset starts it again from what is resident now.
#include <attn/book/resident.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <memory>

namespace {

TEST(ResidentMemory, ThePeakFollowsWhatIsTouchedAndAResetStartsItAgain) {
  attn::book::reset_peak_resident();
  const attn::book::Resident start = attn::book::resident_memory();
  EXPECT_GT(start.now, 0u);
  EXPECT_GE(start.peak, start.now);
  constexpr std::size_t kBytes = 64u << 20;  // 64 MiB, every page written
  {
    const auto block = std::make_unique<char[]>(kBytes);
    std::memset(block.get(), 1, kBytes);
    EXPECT_GE(attn::book::resident_memory().peak, start.now + kBytes * 9 / 10);
  }
  // The block is freed (AddressSanitizer may still hold its pages): after a reset the peak is
  // what is resident now, not what it was while the block was in use.
  attn::book::reset_peak_resident();
  const attn::book::Resident after = attn::book::resident_memory();
  EXPECT_LE(after.peak, after.now + (1u << 20));
}

}  // namespace
