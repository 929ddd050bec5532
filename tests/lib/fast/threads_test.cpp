// Jobs side by side (attn::fast::side_by_side): every job runs once, each writes its own slot;
// jobs run at the same time, each with OpenBLAS and its OpenMP regions held to one thread; the
// caller's thread counts come back after; and the first failing job's exception in job order
// (not in time) is the one thrown, once every other job has run. The cases that need two jobs
// at once are skipped on a one-core machine, where side_by_side starts a single worker.
#include <attn/fast/threads.hpp>

#include <gtest/gtest.h>

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr std::size_t kJobs = 7;  // more than the cores of most machines that run the tests
constexpr auto kPatience = std::chrono::seconds(20);  // how long a job waits for another

bool one_core() {
  return std::thread::hardware_concurrency() < 2;
}

// Waits until `flag` is set or kPatience has passed; says whether it was set.
bool wait_for(const std::atomic<bool>& flag) {
  const auto until = std::chrono::steady_clock::now() + kPatience;
  while (!flag && std::chrono::steady_clock::now() < until)
    std::this_thread::yield();
  return flag;
}

TEST(SideBySide, RunsEveryJobOnceIntoItsOwnSlot) {
  std::vector<std::size_t> ran(kJobs, 0);
  attn::fast::side_by_side(kJobs, [&](std::size_t k) { ran[k] += k + 1; });
  std::vector<std::size_t> expected(kJobs);
  std::iota(expected.begin(), expected.end(), 1);
  EXPECT_EQ(ran, expected);
}

TEST(SideBySide, RunsTwoJobsAtOnce) {
  if (one_core())
    GTEST_SKIP() << "one core: one worker";
  std::atomic<bool> first_started{false}, second_started{false};
  std::array<bool, 2> saw_the_other{false, false};  // (not vector<bool>: its bits share bytes)
  attn::fast::side_by_side(2, [&](std::size_t k) {
    (k == 0 ? first_started : second_started) = true;
    saw_the_other[k] = wait_for(k == 0 ? second_started : first_started);
  });
  EXPECT_TRUE(saw_the_other[0]);
  EXPECT_TRUE(saw_the_other[1]);
}

TEST(SideBySide, EachJobOnOneThreadAndTheCallersCountsComeBack) {
  // Counts above one to begin with (CI holds OpenBLAS to one thread, and a machine may have one
  // core), so that a job's count of one shows the hold, and the counts after show it let go.
  const int blas_outside = openblas_get_num_threads();
  const int openmp_outside = omp_get_max_threads();
  const int blas_before = 2;
  const int openmp_before = 3;
  openblas_set_num_threads(blas_before);
  omp_set_num_threads(openmp_before);
  std::vector<int> blas(kJobs, 0);
  std::vector<int> openmp(kJobs, 0);
  std::vector<int> team(kJobs, 0);
  attn::fast::side_by_side(kJobs, [&](std::size_t k) {
    blas[k] = openblas_get_num_threads();
    openmp[k] = omp_get_max_threads();
#pragma omp parallel
    {
#pragma omp single
      team[k] = omp_get_num_threads();
    }
  });
  const int blas_after = openblas_get_num_threads();
  const int openmp_after = omp_get_max_threads();
  openblas_set_num_threads(blas_outside);
  omp_set_num_threads(openmp_outside);
  EXPECT_EQ(blas, std::vector<int>(kJobs, 1));
  EXPECT_EQ(openmp, std::vector<int>(kJobs, 1));
  EXPECT_EQ(team, std::vector<int>(kJobs, 1));
  EXPECT_EQ(blas_after, blas_before);
  EXPECT_EQ(openmp_after, openmp_before);
}

TEST(SideBySide, ThrowsTheFirstFailingJobInJobOrderAfterEveryJobRan) {
  if (one_core())
    GTEST_SKIP() << "one core: one worker, so job 3 could not wait for job 5";
  // Job 5 throws first in time: job 3 waits for it before it throws.
  std::atomic<bool> fifth_threw{false};
  std::vector<int> ran(kJobs, 0);
  try {
    attn::fast::side_by_side(kJobs, [&](std::size_t k) {
      ran[k] = 1;
      if (k == 5) {
        fifth_threw = true;
        throw std::runtime_error("job 5 failed");
      }
      if (k == 3) {
        wait_for(fifth_threw);
        throw std::runtime_error("job 3 failed");
      }
    });
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "job 3 failed");
  }
  EXPECT_TRUE(fifth_threw);
  EXPECT_EQ(std::count(ran.begin(), ran.end(), 1), static_cast<std::ptrdiff_t>(kJobs));
}

TEST(SideBySide, NoJobsNothingRuns) {
  bool ran = false;
  attn::fast::side_by_side(0, [&](std::size_t) { ran = true; });
  EXPECT_FALSE(ran);
}

}  // namespace
