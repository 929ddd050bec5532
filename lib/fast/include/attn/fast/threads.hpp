/// \file
/// \brief Holding OpenBLAS, and OpenMP, to one thread for a while.
#pragma once

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

}  // namespace attn::fast
