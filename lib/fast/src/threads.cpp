#include "attn/fast/threads.hpp"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <system_error>
#include <thread>
#include <vector>

namespace attn::fast {

OneThread::OneThread(Held held)
    : blas_before_(openblas_get_num_threads()),
      openmp_before_(held == Held::blas_and_openmp ? omp_get_max_threads() : 0) {
  // OpenBLAS's count is process-wide: a hold taken inside side_by_side()'s workers finds it at
  // one already and leaves it alone, so the workers never write it at the same time.
  if (blas_before_ != 1)
    openblas_set_num_threads(1);
  if (openmp_before_ > 0)
    omp_set_num_threads(1);
}

OneThread::~OneThread() {
  if (blas_before_ != 1)
    openblas_set_num_threads(blas_before_);
  if (openmp_before_ > 0)
    omp_set_num_threads(openmp_before_);
}

void side_by_side(std::size_t count, const std::function<void(std::size_t k)>& job) {
  const OneThread blas_on_one_thread(Held::blas);  // process-wide, so before any worker starts
  std::vector<std::exception_ptr> errors(count);
  std::atomic<std::size_t> next{0};
  const auto worker = [&] {
    omp_set_num_threads(1);  // a thread's own setting: the regions this worker starts
    for (std::size_t k; (k = next++) < count;) {
      try {
        job(k);
      } catch (...) {
        errors[k] = std::current_exception();
      }
    }
  };
  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t wanted = std::min(cores, count);
  {
    std::vector<std::jthread> workers;  // joined when they go out of scope, whatever happens
    workers.reserve(wanted);
    for (std::size_t w = 0; w < wanted; ++w) {
      try {
        workers.emplace_back(worker);
      } catch (const std::system_error&) {
        if (workers.empty())
          throw;  // no job has run
        break;    // the workers already started take every job
      }
    }
  }
  for (const std::exception_ptr& e : errors)
    if (e)
      std::rethrow_exception(e);
}

}  // namespace attn::fast
