/// \file
/// \brief Holding OpenBLAS, and OpenMP, to one thread for a while; jobs run side by side,
///        one thread each.
#pragma once

#include <cstddef>
#include <functional>

namespace attn::fast {

/// \brief What a OneThread holds to one thread.
enum class Held {
  blas,             ///< OpenBLAS only (its setting is process-wide).
  blas_and_openmp,  ///< OpenBLAS, and the OpenMP regions the calling thread starts.
};

/// \brief While alive, OpenBLAS (process-wide) and, if asked, the OpenMP regions started by the
///        calling thread (Armadillo's element-wise loops among them) run on one thread each;
///        the previous thread counts come back after.
///
/// Streaming attention (chapter 09) holds OpenBLAS to one thread while its query blocks run in
/// parallel, so that each thread runs its own GEMMs instead of two threads' GEMMs fighting over
/// two cores. For chapter 10's 16-wide model every matrix is small, and a team of threads costs
/// more to start and join than it saves; runs that train several models at once, one per
/// thread, would also have each caller's BLAS threads compete for the same cores. A thread
/// that starts others should hold both before it does; each of them may hold its own.
class OneThread {
 public:
  /// \brief Holds \p held to one thread. \param held OpenBLAS alone, or OpenBLAS and OpenMP.
  explicit OneThread(Held held = Held::blas_and_openmp);
  ~OneThread();
  OneThread(const OneThread&) = delete;
  OneThread& operator=(const OneThread&) = delete;

 private:
  int blas_before_;
  int openmp_before_;  // 0: OpenMP was left alone
};

/// \brief Runs job(0), job(1), ..., job(count − 1) side by side on the machine's cores, one
///        thread each: OpenBLAS is held to one thread (process-wide) before the workers start,
///        and each worker holds the OpenMP regions it starts to one thread. A worker takes the
///        next job as soon as it is free, so the jobs must not depend on one another, and each
///        must write only what is its own (its slot of a vector).
///
/// For models too small for a team of threads to pay (chapter 10's, chapter 12's): two runs
/// on one core each end sooner than the same runs one after the other on two cores each. A job
/// computes what it would compute alone on one thread; only the wall time changes.
/// \param count how many jobs (0: none, and no thread is started).
/// \param job what job k does, for k from 0.
/// \throws the exception of the first job in job order that threw, once every job has ended;
///         std::system_error if not even one worker thread can be started (then no job has run;
///         if only some can, they run every job).
void side_by_side(std::size_t count, const std::function<void(std::size_t k)>& job);

}  // namespace attn::fast
