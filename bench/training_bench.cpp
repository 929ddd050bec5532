// Chapter 11's training step, timed: one whole step as attn::gpt::train() takes it (a batch,
// forward, cross-entropy, backward, gradient clipping, AdamW) on chapter 11's model and batch
// (16 windows of 128 tokens), on 1 and 2 threads; and the machine's GEMM rates at the step's
// typical shape, measured in the same run, for the model-FLOPs utilisation (MFU).
// bench/compare_training.py runs it beside PyTorch 2 (eager and torch.compile) on the same model;
// see the README's "Performance" section and bench/results/training-tables.md.
// Counters: tokens_per_s, flops_per_step (the model FLOPs of one step, model_flops_per_step())
// and GFLOPs (those per second; for a GEMM, 2 m k n per call). The run's context names the
// kernel OpenBLAS chose (openblas_core) and the model.
//
// Two options of its own, besides Google Benchmark's: --timed_steps=N times exactly N steps per
// run (default: as many as Google Benchmark chooses) and --warmup_steps=N takes N untimed steps
// first (default 3).
#include <attn/gpt/batch.hpp>
#include <attn/gpt/model.hpp>
#include <attn/gpt/trainer.hpp>

#include <benchmark/benchmark.h>
#include <cblas.h>
#include <fmt/format.h>
#include <malloc.h>
#include <omp.h>

#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

namespace {
namespace gpt = attn::gpt;

// Chapter 11's model (chapters/11_small_gpt/main.cpp, kModel).
const gpt::TransformerConfig kModel{
    .vocabulary = 1024,
    .d_model = 96,
    .heads = 4,
    .layers = 4,
    .d_ff = 384,
    .max_length = 128,
    .positions = attn::gpt::Positions::learned,
    .tied_embeddings = true,
    .dropout = 0.0,
};

// Chapter 11's recipe (kTraining) at a constant learning rate, which costs the same per step
// as its schedule: AdamW (β 0.9 and 0.999, ε 1e-8) with weight decay 0.1 on the block
// matrices, clipping to a global norm of 1. The run is far longer than any benchmark takes, so
// no step is its last, and it never measures (an Evaluation is called only every
// evaluate_every steps and at the last).
constexpr std::int64_t kNeverReached = 1'000'000'000;
gpt::TrainingSettings settings() {
  return {.steps = kNeverReached,
          .batch = 16,  // windows of max_length + 1 tokens: 16 × 128 = 2048 tokens a step
          .peak_learning_rate = 3e-4,
          .final_learning_rate = 3e-4,
          .warmup_steps = 0,
          .weight_decay = 0.1,
          .clip_norm = 1.0,
          .evaluate_every = kNeverReached,
          .seed = 11};
}
constexpr arma::uword kTextTokens = 1 << 16;  // random token ids, seeded: the text windows are
                                              // drawn from (a step's cost does not depend on it)
constexpr long kMostThreads = 2;              // every run is timed on 1 thread and on this many

// The options of main() (--timed_steps, --warmup_steps).
std::int64_t timed_steps = 0;  // 0: Google Benchmark chooses
std::int64_t warmup_steps = 3;

// The precisions a step is timed in, one line each: a name and what it changes in the settings.
using Precision = void (*)(gpt::TrainingSettings&);
void float64(gpt::TrainingSettings& s) {  // the readable reference step
  s.precision = gpt::Precision::float64;
}
void float32(gpt::TrainingSettings& s) {  // the step chapter 11 trains with
  s.precision = gpt::Precision::float32;
}
struct Registered {
  const char* name;
  Precision precision;
};
const Registered kPrecisions[] = {
    {"f64", float64},
    {"f32", float32},
};

// The same threads for every run: OpenBLAS's, where the float64 step's GEMMs run; OpenMP's,
// where the float32 step's loops and products run (each thread its own sgemm, OpenBLAS held to
// one thread meanwhile).
void use_threads(int threads) {
  omp_set_num_threads(threads);
  openblas_set_num_threads(threads);
}

// The model FLOPs of one training step (PaLM's appendix B, as nanoGPT's estimate_mfu counts
// them), with N the parameters without the position embeddings and T = max_length:
//
//     6 N tokens + 12 L d T tokens
//
// 6 N per token: every weight takes part in one multiply-add in the forward pass (2 FLOPs)
// and two in the backward pass (4). The tied embedding counts, as the output layer it is; the
// position table is only looked up. 12 L d T per token: attention's two products, Q Kᵀ and
// A V, 2 T d FLOPs each per token in each of the L layers, forward (4 L d T) and backward
// (8 L d T), over the full T × T square, although a causal step needs only half of it.
// Biases, layer norms, GELU, softmax and AdamW are left out. N is counted here from the
// weights themselves and checked against attn::gpt::parameter_count().
double model_flops_per_step(const gpt::TransformerWeights& weights, double tokens) {
  const gpt::TransformerConfig& c = weights.config;
  double N = 0;
  for (const gpt::ConstParameter& p : gpt::parameters(weights))
    if (p.role != gpt::Role::position_embedding)
      N += static_cast<double>(p.value->n_elem);
  const double positions =
      gpt::learns_positions(c.positions) ? static_cast<double>(c.max_length * c.d_model) : 0;
  if (N + positions != static_cast<double>(gpt::parameter_count(c)))
    throw std::logic_error(
        fmt::format("training_bench: {} weights besides the positions, but "
                    "parameter_count() says {} with {} positions",
                    N, gpt::parameter_count(c), positions));
  return 6 * N * tokens + 12.0 * static_cast<double>(c.layers * c.d_model * c.max_length) * tokens;
}

// One whole training step, as train() takes it: after warmup_steps untimed steps, each
// iteration is one call of train() that takes one step, all with one Step (make_step()), whose
// float32 working memory is sized by the first step and reused by the rest. (Each call also builds
// its AdamW from the state's moments and hands them back, copies of 1.9 million doubles that a run
// taking all its steps in one call makes once: about 3 ms a call on the machine of the README's
// table, measured by calling train() for no step, under 0.5% of a step there.)
void TrainStep(benchmark::State& state, Precision precision) {
  use_threads(static_cast<int>(state.range(0)));
  gpt::TrainingSettings run = settings();
  precision(run);
  arma::arma_rng::set_seed(run.seed);
  const arma::uvec text = arma::randi<arma::uvec>(
      kTextTokens, arma::distr_param(0, static_cast<int>(kModel.vocabulary) - 1));
  const gpt::NextBatch batches = gpt::window_batches(text, kModel.max_length, run.batch);
  const gpt::Evaluation none = [](const gpt::TransformerWeights&, gpt::Step&) {
    return gpt::Measurement{};  // never called: no step is a multiple of evaluate_every
  };
  gpt::TrainingState at = gpt::start(kModel, run);
  gpt::Step step = gpt::make_step(kModel, run.precision);  // one, as a chapter's run keeps
  gpt::train(step, at, run, batches, none, warmup_steps);
  for (auto _ : state)
    gpt::train(step, at, run, batches, none, at.step + 1);
  if (at.step != warmup_steps + static_cast<std::int64_t>(state.iterations()))
    state.SkipWithError("train() did not take one step per iteration");
  const double tokens = static_cast<double>(run.batch * kModel.max_length);
  const double flops = model_flops_per_step(at.weights, tokens);
  state.counters["tokens_per_s"] =
      benchmark::Counter(tokens, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["flops_per_step"] = flops;
  state.counters["GFLOPs"] =
      benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["loss"] = at.history.back().loss;  // a finite loss: the step did train
}

// The machine's GEMM rate at the step's typical shape: the batch's 2048 rows times a
// (96 × 384) matrix, as the MLP's first layer multiplies them (sgemm for float, dgemm for
// double). compare_training.py divides each contender's model FLOPs per second by sgemm's rate
// at the same thread count: that is the MFU of its tables.
constexpr long kRows = 2048, kInner = 96, kColumns = 384;
template <typename eT>
void Gemm(benchmark::State& state) {
  const auto m = static_cast<arma::uword>(state.range(0));
  const auto k = static_cast<arma::uword>(state.range(1));
  const auto n = static_cast<arma::uword>(state.range(2));
  use_threads(static_cast<int>(state.range(3)));
  arma::arma_rng::set_seed(7);
  const arma::Mat<eT> A(m, k, arma::fill::randn), B(k, n, arma::fill::randn);
  arma::Mat<eT> C(m, n);
  C = A * B;  // untimed: the first call in a thread may be slow (bench/attention_bench.cpp)
  for (auto _ : state) {
    C = A * B;
    benchmark::DoNotOptimize(C.memptr());
  }
  state.counters["GFLOPs"] = benchmark::Counter(2.0 * double(m) * double(k) * double(n) * 1e-9,
                                                benchmark::Counter::kIsIterationInvariantRate);
}

void Threads(benchmark::internal::Benchmark* b) {
  b->Arg(1)->Arg(kMostThreads)->ArgName("threads")->Unit(benchmark::kMillisecond)->UseRealTime();
  if (timed_steps > 0)
    b->Iterations(timed_steps);
}

void GemmShape(benchmark::internal::Benchmark* b) {
  for (long threads : {1L, kMostThreads})
    b->Args({kRows, kInner, kColumns, threads});
  b->ArgNames({"m", "k", "n", "threads"})->Unit(benchmark::kMillisecond)->UseRealTime();
}

// Takes --name=N out of argv (after Google Benchmark has taken its own); false if absent.
bool take_option(int& argc, char** argv, std::string_view name, std::int64_t& value) {
  const std::string prefix = fmt::format("--{}=", name);
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.substr(0, prefix.size()) != prefix)
      continue;
    const std::string number(arg.substr(prefix.size()));
    char* end = nullptr;
    value = std::strtoll(number.c_str(), &end, 10);
    if (number.empty() || *end != '\0' || value < 0)
      throw std::invalid_argument(fmt::format("training_bench: {} is not a count", arg));
    for (int j = i; j + 1 < argc; ++j)
      argv[j] = argv[j + 1];
    --argc;
    return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  // The readable float64 step (the reference) allocates its activations and gradients anew at
  // every step, some hundred megabytes; by default glibc hands such blocks back to the system
  // and faults them in again at the next step, which made that step 2.2 times slower here
  // (661 ms against 305). Keeping freed memory for reuse measures its arithmetic, as the
  // README's table did. The float32 step needs it no longer: one Step per run sizes its working
  // memory once (73 ms either way), and chapter 11, which trains with it, does not call this.
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  benchmark::Initialize(&argc, argv);
  try {
    take_option(argc, argv, "timed_steps", timed_steps);
    take_option(argc, argv, "warmup_steps", warmup_steps);
  } catch (const std::invalid_argument& e) {
    fmt::print(stderr, "{}\n", e.what());
    return 1;
  }
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 1;
  benchmark::RegisterBenchmark("Gemm", Gemm<double>)->Apply(GemmShape);
  benchmark::RegisterBenchmark("GemmF32", Gemm<float>)->Apply(GemmShape);
  for (const Registered& p : kPrecisions)
    benchmark::RegisterBenchmark(fmt::format("TrainStep/{}", p.name).c_str(), TrainStep,
                                 p.precision)
        ->Apply(Threads);
  benchmark::AddCustomContext("openblas_core", openblas_get_corename());
  benchmark::AddCustomContext("openblas_config", openblas_get_config());
  benchmark::AddCustomContext(
      "model", fmt::format("V {} d {} heads {} layers {} d_ff {} T {}, {} parameters, {} tokens "
                           "a step, {} warm-up steps",
                           kModel.vocabulary, kModel.d_model, kModel.heads, kModel.layers,
                           kModel.d_ff, kModel.max_length, gpt::parameter_count(kModel),
                           settings().batch * kModel.max_length, warmup_steps));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
