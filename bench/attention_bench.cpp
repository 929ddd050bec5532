// Attention at scale, timed: the reference (three n × n arrays, float64) against streaming
// attention (chapter 09) in float64 and float32, causal and not, d = 64, on 1 and 2 threads;
// and the machine's own GEMM rates (dgemm and sgemm), measured in the same run.
// bench/compare.py runs this beside numpy and PyTorch (PyTorch 2's fused
// scaled_dot_product_attention among them); see the README's "Performance" section.
// Counters: GFLOPs (4 n² d flops per call, half that when causal; 2 n³ for a GEMM) and
// added_MB, the peak resident memory above what the process held before (its inputs included).
// The run's context names the kernel OpenBLAS chose (openblas_core).
#include <attn/book/resident.hpp>
#include <attn/fast/streaming.hpp>
#include <attn/math/attention.hpp>

#include <benchmark/benchmark.h>
#include <cblas.h>
#include <omp.h>

#include <cmath>

namespace {

constexpr arma::uword kWidth = 64;  // d_k = d_v
constexpr long kMostThreads = 2;    // every run is timed on 1 thread and on this many

template <typename eT>
struct Inputs {
  arma::Mat<eT> Q, K, V;
  explicit Inputs(arma::uword n) {
    arma::arma_rng::set_seed(7);
    Q.randn(n, kWidth), K.randn(n, kWidth), V.randn(n, kWidth);
  }
};

// Every contender runs on the same number of threads: OpenMP's for streaming (which holds
// OpenBLAS to one thread inside), OpenBLAS's for the reference and the GEMM.
void use_threads(int threads) {
  omp_set_num_threads(threads);
  openblas_set_num_threads(threads);
}

// Starts a new peak of resident memory and returns what is resident now.
double memory_baseline() {
  attn::book::reset_peak_resident();
  return static_cast<double>(attn::book::resident_memory().now);
}

void report(benchmark::State& state, double flops, double baseline) {
  state.counters["GFLOPs"] =
      benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["added_MB"] =
      (static_cast<double>(attn::book::resident_memory().peak) - baseline) / 1e6;
}

// 4 n² d: two GEMMs of 2 n² d each; a causal pass computes about half of the pairs.
double attention_flops(arma::uword n, bool causal) {
  return 4.0 * n * n * kWidth * (causal ? 0.5 : 1.0);
}

void Reference(benchmark::State& state) {
  const auto n = static_cast<arma::uword>(state.range(0));
  use_threads(static_cast<int>(state.range(1)));
  const Inputs<double> in(n);
  const double baseline = memory_baseline();
  for (auto _ : state)
    benchmark::DoNotOptimize(
        attn::math::scaled_dot_product_attention(in.Q, in.K, in.V).output.memptr());
  report(state, attention_flops(n, false), baseline);
}

template <typename eT>
void Streaming(benchmark::State& state) {
  const auto n = static_cast<arma::uword>(state.range(0));
  use_threads(static_cast<int>(state.range(1)));
  const bool causal = state.range(2) != 0;
  const Inputs<eT> in(n);
  const double scale = 1.0 / std::sqrt(static_cast<double>(kWidth));
  const double baseline = memory_baseline();
  for (auto _ : state)
    benchmark::DoNotOptimize(
        attn::fast::streaming_attention(in.Q, in.K, in.V, scale, {.causal = causal})
            .output.memptr());
  report(state, attention_flops(n, causal), baseline);
}

// The machine's GEMM rate: C = A B with square n × n matrices, OpenBLAS's best case
// (dgemm for double, sgemm for float).
template <typename eT>
void Gemm(benchmark::State& state) {
  use_threads(static_cast<int>(state.range(1)));
  const auto n = static_cast<arma::uword>(state.range(0));
  const arma::Mat<eT> A(n, n, arma::fill::randn), B(n, n, arma::fill::randn);
  arma::Mat<eT> C(n, n);
  const double baseline = memory_baseline();
  for (auto _ : state) {
    C = A * B;
    benchmark::DoNotOptimize(C.memptr());
  }
  report(state, 2.0 * n * n * n, baseline);
}

void Sizes(benchmark::internal::Benchmark* b, long largest) {
  for (long threads : {1, 2})
    for (long n = 256; n <= largest; n *= 2)
      b->Args({n, threads});
  b->ArgNames({"n", "threads"})->Unit(benchmark::kMillisecond)->UseRealTime();
}

void CausalSizes(benchmark::internal::Benchmark* b, long largest) {
  for (long causal : {0, 1})
    for (long threads : {1L, kMostThreads})
      for (long n = 256; n <= largest; n *= 2)
        b->Args({n, threads, causal});
  b->ArgNames({"n", "threads", "causal"})->Unit(benchmark::kMillisecond)->UseRealTime();
}

void GemmSizes(benchmark::internal::Benchmark* b) {
  b->Args({2048, 1})->Args({2048, kMostThreads})->ArgNames({"n", "threads"});
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}

BENCHMARK(Gemm<double>)->Name("Gemm")->Apply(GemmSizes);
BENCHMARK(Gemm<float>)->Name("GemmF32")->Apply(GemmSizes);
BENCHMARK(Reference)->Apply([](benchmark::internal::Benchmark* b) { Sizes(b, 16384); });
BENCHMARK(Streaming<double>)->Name("Streaming")->Apply([](benchmark::internal::Benchmark* b) {
  CausalSizes(b, 16384);
});
BENCHMARK(Streaming<float>)->Name("StreamingF32")->Apply([](benchmark::internal::Benchmark* b) {
  CausalSizes(b, 16384);
});

// Before any timing, every thread that will call OpenBLAS runs one GEMM of 512 in each
// precision, as bench/compare.py does for its Python contenders. On some machines OpenBLAS's
// small GEMMs run several times slower in a thread until that thread has run a larger one
// (seen on AMD EPYC with OpenBLAS 0.3.21 and 0.3.29: sgemm with k = 256 at 10 GFLOP/s before,
// 35 after); the streaming form calls OpenBLAS from each of its OpenMP threads.
template <typename eT>
void one_gemm() {
  const arma::Mat<eT> A(512, 512, arma::fill::ones);
  const arma::Mat<eT> C = A * A;
  benchmark::DoNotOptimize(C.memptr());
}

void warm_up_blas() {
  const int blas_threads = openblas_get_num_threads();
  openblas_set_num_threads(1);
#pragma omp parallel num_threads(kMostThreads)
  {
    one_gemm<double>();
    one_gemm<float>();
  }
  openblas_set_num_threads(blas_threads);
  one_gemm<double>();  // and OpenBLAS's own threads, as the reference and the GEMM use them
  one_gemm<float>();
}

}  // namespace

int main(int argc, char** argv) {
  warm_up_blas();
  benchmark::AddCustomContext("openblas_core", openblas_get_corename());
  benchmark::AddCustomContext("openblas_config", openblas_get_config());
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
