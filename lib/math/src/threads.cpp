#include "attn/threads.hpp"

#include <cblas.h>
#include <omp.h>

namespace attn {

OneBlasThread::OneBlasThread() : before_(openblas_get_num_threads()) { openblas_set_num_threads(1); }

OneBlasThread::~OneBlasThread() { openblas_set_num_threads(before_); }

OneThread::OneThread() : openmp_before_(omp_get_max_threads()) { omp_set_num_threads(1); }

OneThread::~OneThread() { omp_set_num_threads(openmp_before_); }

}  // namespace attn
