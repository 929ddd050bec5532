/// \file
/// \brief Holding OpenBLAS, and OpenMP, to one thread for a while.
#pragma once

namespace attn {

/// \brief While alive, OpenBLAS runs every call on one thread; its previous thread count comes
///        back after.
///
/// OpenBLAS's setting is process-wide. Streaming attention (chapter 09) holds one while its
/// query blocks run in parallel, so that each thread runs its own GEMMs instead of two threads'
/// GEMMs fighting over two cores.
class OneBlasThread {
 public:
  OneBlasThread();
  ~OneBlasThread();
  OneBlasThread(const OneBlasThread&) = delete;
  OneBlasThread& operator=(const OneBlasThread&) = delete;

 private:
  int before_;
};

/// \brief While alive, OpenBLAS (process-wide) and the OpenMP regions started by the calling
///        thread (Armadillo's element-wise loops among them) run on one thread each.
///
/// For chapter 10's 16-wide model every matrix is small, and a team of threads costs more
/// than it saves: the chapter's `--quick` run took 2.8 s with OpenMP's team and 2.5 s with one
/// thread. Its nine comparison runs, two at a time, took about three times longer while
/// OpenBLAS kept its own threads, because the two callers' BLAS threads competed for the same
/// two cores. A thread that starts others should hold one before it does; each of them may
/// hold its own.
class OneThread {
 public:
  OneThread();
  ~OneThread();
  OneThread(const OneThread&) = delete;
  OneThread& operator=(const OneThread&) = delete;

 private:
  OneBlasThread blas_;
  int openmp_before_;
};

}  // namespace attn
