// Jobs side by side (attn::fast::side_by_side): every job runs once, each writes its own slot,
// each runs with OpenBLAS and its OpenMP regions held to one thread, the caller's thread counts
// come back after, and the first failing job's exception (in job order) is the one thrown, once
// every other job has run.
#include <attn/fast/threads.hpp>

#include <gtest/gtest.h>

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

constexpr std::size_t kJobs = 7;  // more than the cores of most machines that run the tests

TEST(SideBySide, RunsEveryJobOnceIntoItsOwnSlot) {
  std::vector<std::size_t> ran(kJobs, 0);
  attn::fast::side_by_side(kJobs, [&](std::size_t k) { ran[k] += k + 1; });
  std::vector<std::size_t> expected(kJobs);
  std::iota(expected.begin(), expected.end(), 1);
  EXPECT_EQ(ran, expected);
}

TEST(SideBySide, EachJobOnOneThreadAndTheCallersCountsComeBack) {
  const int blas_before = openblas_get_num_threads();
  const int openmp_before = omp_get_max_threads();
  std::vector<int> blas(kJobs, 0), openmp(kJobs, 0), team(kJobs, 0);
  attn::fast::side_by_side(kJobs, [&](std::size_t k) {
    blas[k] = openblas_get_num_threads();
    openmp[k] = omp_get_max_threads();
#pragma omp parallel
    {
#pragma omp single
      team[k] = omp_get_num_threads();
    }
  });
  EXPECT_EQ(blas, std::vector<int>(kJobs, 1));
  EXPECT_EQ(openmp, std::vector<int>(kJobs, 1));
  EXPECT_EQ(team, std::vector<int>(kJobs, 1));
  EXPECT_EQ(openblas_get_num_threads(), blas_before);
  EXPECT_EQ(omp_get_max_threads(), openmp_before);
}

TEST(SideBySide, ThrowsTheFirstFailingJobsErrorAfterEveryJobRan) {
  std::vector<int> ran(kJobs, 0);
  try {
    attn::fast::side_by_side(kJobs, [&](std::size_t k) {
      ran[k] = 1;
      if (k == 3 || k == 5)
        throw std::runtime_error("job " + std::to_string(k) + " failed");
    });
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "job 3 failed");
  }
  EXPECT_EQ(std::count(ran.begin(), ran.end(), 1), static_cast<std::ptrdiff_t>(kJobs));
}

TEST(SideBySide, NoJobsNothingRuns) {
  bool ran = false;
  attn::fast::side_by_side(0, [&](std::size_t) { ran = true; });
  EXPECT_FALSE(ran);
}

}  // namespace
