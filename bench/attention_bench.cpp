// Attention at scale, timed: the reference (three n × n arrays) against streaming attention
// (chapter 09), d = 64, float64, on 1 and 2 threads; and the machine's own GEMM rate, measured
// in the same run. bench/compare.py runs this beside numpy and PyTorch; see the README's
// "Performance" section. Counters: GFLOPs (4 n² d flops per call, 2 n³ for the GEMM) and
// added_MB, the peak resident memory above what the process held before (its inputs included).
#include <attn/book/resident.hpp>
#include <attn/fast/streaming.hpp>
#include <attn/math/attention.hpp>

#include <benchmark/benchmark.h>
#include <cblas.h>
#include <omp.h>

#include <cmath>

namespace {

constexpr arma::uword kWidth = 64;  // d_k = d_v

struct Inputs {
  arma::mat Q, K, V;
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
  attn::reset_peak_resident();
  return static_cast<double>(attn::resident_memory().now);
}

void report(benchmark::State& state, double flops, double baseline) {
  state.counters["GFLOPs"] =
      benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["added_MB"] = (static_cast<double>(attn::resident_memory().peak) - baseline) / 1e6;
}

double attention_flops(arma::uword n) {
  return 4.0 * n * n * kWidth;
}

void Reference(benchmark::State& state) {
  const auto n = static_cast<arma::uword>(state.range(0));
  use_threads(static_cast<int>(state.range(1)));
  const Inputs in(n);
  const double baseline = memory_baseline();
  for (auto _ : state)
    benchmark::DoNotOptimize(attn::scaled_dot_product_attention(in.Q, in.K, in.V).output.memptr());
  report(state, attention_flops(n), baseline);
}

void Streaming(benchmark::State& state) {
  const auto n = static_cast<arma::uword>(state.range(0));
  use_threads(static_cast<int>(state.range(1)));
  const Inputs in(n);
  const double scale = 1.0 / std::sqrt(static_cast<double>(kWidth));
  const double baseline = memory_baseline();
  for (auto _ : state)
    benchmark::DoNotOptimize(
        attn::fast::streaming_attention(in.Q, in.K, in.V, scale).output.memptr());
  report(state, attention_flops(n), baseline);
}

// The machine's GEMM rate: C = A B with square n × n matrices, OpenBLAS's best case.
void Gemm(benchmark::State& state) {
  use_threads(static_cast<int>(state.range(1)));
  const auto n = static_cast<arma::uword>(state.range(0));
  const arma::mat A(n, n, arma::fill::randn), B(n, n, arma::fill::randn);
  arma::mat C(n, n);
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

BENCHMARK(Gemm)
    ->Args({2048, 1})
    ->Args({2048, 2})
    ->ArgNames({"n", "threads"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(Reference)->Apply([](benchmark::internal::Benchmark* b) { Sizes(b, 16384); });
BENCHMARK(Streaming)->Apply([](benchmark::internal::Benchmark* b) { Sizes(b, 16384); });

}  // namespace

BENCHMARK_MAIN();
