// Fuzzes the GPT's checkpoint reader, attn::gpt::load_checkpoint() (attn/gpt/checkpoint.hpp),
// which chapter 11 hands whatever file a reader names with --checkpoint and chapter 12 the files
// it finds in its build folder. The input is the whole file, read as a checkpoint of one tiny run
// (below). A checksum guards the file, so a mutated input would almost never get past it: the
// custom mutator applies libFuzzer's own mutations and then, seven times in eight, writes the
// FNV-1a checksum of the mutated bytes over the last 8, as a forger would, so that the inputs
// reach the fields behind it; the eighth keeps the refusal of a bad checksum in play.
//
// The promises checked, besides no crash, leak or undefined behaviour:
// - load_checkpoint() returns a state or throws attn::math::InputError, nothing else, and the
//   error's message names the file;
// - a state it returns is what the file holds: save_checkpoint() writes it back byte for byte;
// - it is a state the run can go on from: one more step of train() (when a step is left) throws
//   nothing and leaves every weight finite.
//
// The seed corpus, corpus/checkpoint_reader/, is the run's checkpoints at step 0 (before its
// first step, with the point at step 0), at step 3 (a loss sum pending) and at step 5 (its end),
// and step 3 again with every weight at the loader's bound, a few kilobytes each. The harness
// writes them itself, run from tests/fuzz/ in the repository after the sanitizer build:
//   ../../build-sanitize/tests/fuzz/fuzz_checkpoint_reader -write_seeds=corpus/checkpoint_reader
// (Their bytes depend on the build's arithmetic; any build's are valid seeds.)
#include <attn/gpt/checkpoint.hpp>
#include <attn/gpt/trainer.hpp>
#include <attn/math/validate.hpp>

#include <unistd.h>

#include <armadillo>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

namespace {

namespace gpt = attn::gpt;

// The run every input is read as: chapter 11's kind of model, as small as it goes, trained as
// chapter 11 trains (float32 steps, so no dropout; the batches draw from the run's stream), with
// a point at step 0 and a last step that is no multiple of 2.
const gpt::TransformerConfig kModel{.vocabulary = 12,
                                    .d_model = 4,
                                    .heads = 2,
                                    .layers = 1,
                                    .d_ff = 8,
                                    .max_length = 4,
                                    .positions = gpt::Positions::learned,
                                    .tied_embeddings = true,
                                    .dropout = 0.0};
const gpt::TrainingSettings kSettings{.steps = 5,
                                      .batch = 2,
                                      .peak_learning_rate = 1e-2,
                                      .final_learning_rate = 1e-3,
                                      .warmup_steps = 1,
                                      .weight_decay = 0.1,
                                      .clip_norm = 1.0,
                                      .evaluate_every = 2,
                                      .evaluate_at_start = true,
                                      .seed = 7,
                                      .precision = gpt::Precision::float32};
const std::string kFingerprint = "fuzz_checkpoint_reader's tiny run\n";

gpt::NextBatch batches() {
  return gpt::window_batches(arma::regspace<arma::uvec>(0, kModel.vocabulary - 1),
                             kModel.max_length, kSettings.batch);
}

// A measurement of both kinds that costs nothing: the embedding's size and its square.
gpt::Measurement measure(const gpt::TransformerWeights& w, gpt::Step&) {
  const double size = arma::accu(arma::abs(w.embedding));
  return {.held_out = size, .training = size * size};
}

[[noreturn]] void fail(const char* promise, const std::string& detail = "") {
  std::fprintf(stderr, "checkpoint reader: %s %s\n", promise, detail.c_str());
  std::abort();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// This process's own files, in the system's temporary folder: the input, and the state read
// from it saved again. Removed when the process ends.
struct Scratch {
  std::string input = named(".ckpt");
  std::string saved = named("-saved.ckpt");
  Scratch() = default;
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() {
    std::error_code ignored;
    std::filesystem::remove(input, ignored);
    std::filesystem::remove(saved, ignored);
  }
  static std::string named(const char* what) {
    return (std::filesystem::temp_directory_path() /
            ("attn_fuzz_checkpoint_" + std::to_string(::getpid()) + what))
        .string();
  }
};

// The seed corpus: the run saved at steps 0, 3 and 5, and its step 3 with every weight as
// large as the loader allows, alternately ±kLargestCheckpointWeight (a file no run writes, which
// the loader cannot tell from one; the next step must still be finite).
void write_seeds(const std::string& folder) {
  gpt::TrainingState state = gpt::start(kModel, kSettings);
  const gpt::NextBatch next = batches();
  for (const auto& [step, name] : {std::pair{0, "step-0-start"}, std::pair{3, "step-3-midway"},
                                   std::pair{5, "step-5-finished"}}) {
    gpt::train(state, kSettings, next, measure, step);
    gpt::save_checkpoint(folder + "/" + name, kFingerprint, state);
    if (step == 3) {
      gpt::TrainingState largest = state;
      for (const gpt::Parameter& p : gpt::parameters(largest.weights))
        for (arma::uword k = 0; k < p.value->n_elem; ++k)
          (*p.value)(k) = (k % 2 == 0 ? 1 : -1) * gpt::kLargestCheckpointWeight;
      gpt::save_checkpoint(folder + "/step-3-largest-weights", kFingerprint, largest);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  constexpr std::string_view kFlag = "-write_seeds=";
  for (int k = 1; k < *argc; ++k)
    if (std::string_view((*argv)[k]).starts_with(kFlag)) {
      write_seeds(std::string((*argv)[k] + kFlag.size()));
      std::exit(0);
    }
  return 0;
}

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size);

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size,
                                               std::size_t max_size, unsigned int seed) {
  size = LLVMFuzzerMutate(data, size, max_size);
  constexpr std::size_t kChecksum = sizeof(std::uint64_t);
  if (size >= kChecksum && seed % 8 != 0) {
    const std::uint64_t hash =
        gpt::fnv1a(std::string_view(reinterpret_cast<const char*>(data), size - kChecksum));
    std::memcpy(data + size - kChecksum, &hash, kChecksum);
  }
  return size;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Scratch files;
  const std::string& input = files.input;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  write_file(input, bytes);
  gpt::TrainingState state;
  try {
    state = gpt::load_checkpoint(input, kFingerprint, kModel, kSettings);
  } catch (const attn::math::InputError& e) {
    const std::string message = e.what();
    if (message.find(input) == std::string::npos)
      fail("a refusal does not name the file:", message);
    return 0;
  }
  gpt::save_checkpoint(files.saved, kFingerprint, state);
  if (read_file(files.saved) != bytes)
    fail("the state read, saved again, is not the file's bytes");
  if (state.step < kSettings.steps) {
    try {
      gpt::train(state, kSettings, batches(), measure, state.step + 1);
    } catch (const std::exception& e) {
      fail("an accepted checkpoint cannot be trained on:", e.what());
    }
    for (const gpt::ConstParameter& p : gpt::parameters(std::as_const(state.weights)))
      if (!p.value->is_finite())
        fail("one step from an accepted checkpoint leaves a weight that is not finite:", p.name);
  }
  return 0;
}
