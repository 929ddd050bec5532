#include "attn/fast/threads.hpp"

#include <cblas.h>
#include <omp.h>

namespace attn::fast {

OneThread::OneThread(Held held)
    : blas_before_(openblas_get_num_threads()),
      openmp_before_(held == Held::blas_and_openmp ? omp_get_max_threads() : 0) {
  openblas_set_num_threads(1);
  if (openmp_before_ > 0)
    omp_set_num_threads(1);
}

OneThread::~OneThread() {
  openblas_set_num_threads(blas_before_);
  if (openmp_before_ > 0)
    omp_set_num_threads(openmp_before_);
}

}  // namespace attn::fast
