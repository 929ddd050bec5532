// The GPT's checkpoints (attn/gpt/checkpoint.hpp), of a run like chapter 11's: a run stopped,
// saved, loaded and trained on ends bit for bit where the run that never stopped ends (weights,
// AdamW's moments, the curve, the random stream), and a file that is truncated, corrupted, of
// another run, empty or no checkpoint at all is refused with a message naming it and what is wrong;
// so is a whole file whose fields disagree with each other or with the run (one test a refusal,
// each file forged from a valid one with its checksum recomputed).
#include <attn/gpt/checkpoint.hpp>
#include <attn/gpt/text.hpp>
#include <attn/gpt/trainer.hpp>
#include <attn/math/validate.hpp>
#include <attn/numpy/numpy_random.hpp>
#include <attn/text/bpe.hpp>

#include "bad_input.hpp"
#include "tiny_gpt.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace gpt = attn::gpt;
using attn_bad_input::ThrowsNaming;
using gpt_test::read_file;
using gpt_test::TempDir;
using gpt_test::write_file;

const std::string kTrainingText =
    "In the beginning God created the heaven and the earth. And the earth was without form, "
    "and void; and darkness was upon the face of the deep. And the Spirit of God moved upon the "
    "face of the waters. And God said, Let there be light: and there was light. And God saw the "
    "light, that it was good: and God divided the light from the darkness. And God called the "
    "light Day, and the darkness he called Night. And the evening and the morning were the "
    "first day.\n";
const std::string kHeldOutText =
    "And God said, Let there be a firmament in the midst of the waters, and let it divide the "
    "waters from the waters.\n";

const char* const kEvaluation = "bits per byte of the first 30 held-out and training tokens";

// A run small enough to train in milliseconds, with dropout so that the random stream's
// position matters after a resume.
struct TinyRun {
  attn::text::BpeTokenizer tokenizer = attn::text::train_bpe(kTrainingText, 300);
  attn::gpt::TransformerConfig model = gpt_test::tiny_config(tokenizer.vocab_size(), 8);
  gpt::TrainingSettings settings{.steps = 7,
                                 .batch = 3,
                                 .peak_learning_rate = 1e-2,
                                 .final_learning_rate = 1e-3,
                                 .warmup_steps = 2,
                                 .weight_decay = 0.1,
                                 .clip_norm = 0.5,
                                 .evaluate_every = 2,
                                 .seed = 5};
  arma::uvec training = gpt::encode(tokenizer, kTrainingText).tokens;
  gpt::TokenText held_out = gpt::encode(tokenizer, kHeldOutText);
  std::string fingerprint =
      gpt::run_fingerprint(model, settings, tokenizer, kTrainingText, kEvaluation);
  gpt::NextBatch batches = gpt::window_batches(training, model.max_length, settings.batch);
  gpt::Evaluation bits = gpt::bits_on_both(held_out, gpt::encode(tokenizer, kTrainingText), 30);
  // Bits per byte, and two other numbers that follow the run, so that a checkpoint keeps both.
  gpt::Evaluation measure = [bits = bits](const gpt::TransformerWeights& w, gpt::Step& step) {
    gpt::Measurement m = bits(w, step);
    m.others = {arma::accu(w.embedding), -m.held_out};
    return m;
  };

  gpt::TrainingState trained_to(std::int64_t until) const {
    gpt::TrainingState state = gpt::start(model, settings);
    gpt::train(state, settings, batches, measure, until);
    return state;
  }
};

const TinyRun& run() {
  static const TinyRun tiny;
  return tiny;
}

// The same bits: shapes equal and every entry == (no tolerance), and no NaN hiding anywhere.
testing::AssertionResult same(const arma::mat& a, const arma::mat& b) {
  if (a.n_rows != b.n_rows || a.n_cols != b.n_cols)
    return testing::AssertionFailure() << "shapes differ";
  for (arma::uword i = 0; i < a.n_elem; ++i)
    if (!(a(i) == b(i)))
      return testing::AssertionFailure() << "entry " << i << ": " << a(i) << " vs " << b(i);
  return testing::AssertionSuccess();
}

void expect_same_state(gpt::TrainingState& a, gpt::TrainingState& b) {
  EXPECT_EQ(a.step, b.step);
  const std::vector<attn::gpt::Parameter> pa = attn::gpt::parameters(a.weights);
  const std::vector<attn::gpt::Parameter> pb = attn::gpt::parameters(b.weights);
  ASSERT_EQ(pa.size(), pb.size());
  for (std::size_t k = 0; k < pa.size(); ++k)
    EXPECT_TRUE(same(*pa[k].value, *pb[k].value)) << pa[k].name;
  EXPECT_EQ(a.optimizer.steps, b.optimizer.steps);
  ASSERT_EQ(a.optimizer.first.size(), b.optimizer.first.size());
  ASSERT_EQ(a.optimizer.second.size(), b.optimizer.second.size());
  for (std::size_t k = 0; k < a.optimizer.first.size(); ++k) {
    EXPECT_TRUE(same(a.optimizer.first[k], b.optimizer.first[k])) << "first moment " << k;
    EXPECT_TRUE(same(a.optimizer.second[k], b.optimizer.second[k])) << "second moment " << k;
  }
  EXPECT_EQ(a.rng_state.high, b.rng_state.high);
  EXPECT_EQ(a.rng_state.low, b.rng_state.low);
  EXPECT_EQ(a.rng_increment.high, b.rng_increment.high);
  EXPECT_EQ(a.rng_increment.low, b.rng_increment.low);
  ASSERT_EQ(a.curve.size(), b.curve.size());
  for (std::size_t k = 0; k < a.curve.size(); ++k) {
    EXPECT_EQ(a.curve[k].step, b.curve[k].step) << "point " << k;
    EXPECT_EQ(a.curve[k].learning_rate, b.curve[k].learning_rate) << "point " << k;
    EXPECT_EQ(a.curve[k].training_loss, b.curve[k].training_loss) << "point " << k;
    EXPECT_EQ(a.curve[k].measured.held_out, b.curve[k].measured.held_out) << "point " << k;
    EXPECT_EQ(a.curve[k].measured.training, b.curve[k].measured.training) << "point " << k;
    EXPECT_EQ(a.curve[k].measured.others, b.curve[k].measured.others) << "point " << k;
  }
  ASSERT_EQ(a.history.size(), b.history.size());
  for (std::size_t k = 0; k < a.history.size(); ++k) {
    EXPECT_EQ(a.history[k].loss, b.history[k].loss) << "step " << k;
    EXPECT_EQ(a.history[k].gradient_norm, b.history[k].gradient_norm) << "step " << k;
  }
  EXPECT_EQ(a.loss_sum, b.loss_sum);
  EXPECT_EQ(a.loss_count, b.loss_count);
}

// 64-bit FNV-1a, the format's checksum, written out here from its definition (offset basis
// and prime) rather than taken from the library under test.
std::uint64_t fnv1a(std::string_view bytes) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (const char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

// Loading the checkpoint at `path` into `model` is refused naming `what`.
testing::AssertionResult load_refused(const std::string& path,
                                      const attn::gpt::TransformerConfig& model,
                                      const std::string& what) {
  return ThrowsNaming<attn::math::InputError>(
      [&] { gpt::load_checkpoint(path, run().fingerprint, model, run().settings); }, what);
}

// Loading `bytes` from a file is refused naming `what` and the file, and leaves it untouched.
testing::AssertionResult refused(const std::string& path, const std::string& bytes,
                                 const std::string& what) {
  write_file(path, bytes);
  const testing::AssertionResult named = load_refused(path, run().model, what);
  if (!named)
    return named;
  const testing::AssertionResult names_file = load_refused(path, run().model, path);
  if (!names_file)
    return names_file;
  if (read_file(path) != bytes)
    return testing::AssertionFailure() << "loading changed " << path;
  return testing::AssertionSuccess();
}

// The tiny run after `steps` steps, saved as run.ckpt in `dir`: the file's path.
std::string saved_run(const TempDir& dir, std::int64_t steps) {
  const std::string path = dir.file("run.ckpt");
  gpt::save_checkpoint(path, run().fingerprint, run().trained_to(steps));
  return path;
}

TEST(Checkpoint, AResumedRunEndsBitForBitWhereAnUnbrokenRunEnds) {
  const TinyRun& r = run();
  gpt::TrainingState unbroken = r.trained_to(r.settings.steps);
  ASSERT_EQ(unbroken.step, 7);
  ASSERT_EQ(unbroken.curve.size(), 4u);  // steps 2, 4, 6 and the last, 7
  TempDir dir;
  const std::string path = dir.file("run.ckpt");
  // 0: before any step (no moments yet); 3 and 5: between two measurements (a loss sum is
  // pending); 4: just after one; 6: one step before the end.
  for (const std::int64_t k : {0, 3, 4, 5, 6}) {
    SCOPED_TRACE("stopped after step " + std::to_string(k));
    gpt::TrainingState first = r.trained_to(k);
    gpt::save_checkpoint(path, r.fingerprint, first);
    gpt::TrainingState resumed = gpt::load_checkpoint(path, r.fingerprint, r.model, r.settings);
    expect_same_state(resumed, first);  // what was saved is what is read
    gpt::train(resumed, r.settings, r.batches, r.measure, r.settings.steps);
    expect_same_state(resumed, unbroken);
  }
}

// resume_or_start(): no path or no file, a fresh run; the run's checkpoint, resumed whole; another
// run's, refused as load_checkpoint() refuses it.
TEST(ResumeOrStart, StartsAfreshWithoutACheckpointAndResumesTheRunsOwn) {
  const TinyRun& r = run();
  TempDir dir;
  gpt::TrainingState fresh = r.trained_to(0);
  gpt::TrainingState none = gpt::resume_or_start("", r.fingerprint, r.model, r.settings);
  expect_same_state(none, fresh);
  const std::string path = dir.file("run.ckpt");
  gpt::TrainingState missing = gpt::resume_or_start(path, r.fingerprint, r.model, r.settings);
  expect_same_state(missing, fresh);
  EXPECT_EQ(dir.entries(), 0u);  // nothing written
  gpt::TrainingState saved = r.trained_to(3);
  gpt::save_checkpoint(path, r.fingerprint, saved);
  gpt::TrainingState resumed = gpt::resume_or_start(path, r.fingerprint, r.model, r.settings);
  expect_same_state(resumed, saved);
}

TEST(ResumeOrStart, RefusesAnotherRunsCheckpointAsTheLoaderDoes) {
  const TinyRun& r = run();
  TempDir dir;
  const std::string path = dir.file("run.ckpt");
  gpt::save_checkpoint(path, r.fingerprint + "another run\n", r.trained_to(1));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { gpt::resume_or_start(path, r.fingerprint, r.model, r.settings); },
      path + " was made for another run"));
}

TEST(Checkpoint, TheRandomStreamIsPartOfWhatIsResumed) {
  // Without its random stream a resumed run draws other windows and other dropout masks: the
  // test above would catch a checkpoint that forgot it.
  const TinyRun& r = run();
  gpt::TrainingState unbroken = r.trained_to(r.settings.steps);
  gpt::TrainingState resumed = r.trained_to(3);
  const attn::numpy::Generator other = attn::numpy::default_rng(r.settings.seed);
  resumed.rng_state = other.bit_generator().state();
  gpt::train(resumed, r.settings, r.batches, r.measure, r.settings.steps);
  EXPECT_FALSE(same(resumed.weights.embedding, unbroken.weights.embedding));
}

TEST(Checkpoint, ASaveReplacesTheFileWholeAndLeavesNoPartialFile) {
  const TinyRun& r = run();
  TempDir dir;
  const std::string path = dir.file("run.ckpt");
  const std::string reference = dir.file("reference.ckpt");
  gpt::TrainingState late = r.trained_to(6);  // a longer curve: a longer file
  gpt::TrainingState early = r.trained_to(1);
  gpt::save_checkpoint(reference, r.fingerprint, early);
  const std::string early_bytes = read_file(reference);
  gpt::save_checkpoint(reference, r.fingerprint, late);
  const std::string late_bytes = read_file(reference);
  ASSERT_GT(late_bytes.size(), early_bytes.size());

  gpt::save_checkpoint(path, r.fingerprint, late);
  gpt::save_checkpoint(path, r.fingerprint, early);  // shorter, over a longer file
  EXPECT_EQ(read_file(path), early_bytes);
  gpt::save_checkpoint(path, r.fingerprint, late);
  EXPECT_EQ(read_file(path), late_bytes);
  EXPECT_FALSE(std::filesystem::exists(path + ".partial"));
  EXPECT_EQ(dir.entries(), 2u);  // run.ckpt and reference.ckpt, nothing else
  gpt::TrainingState loaded = gpt::load_checkpoint(path, r.fingerprint, r.model, r.settings);
  expect_same_state(loaded, late);
}

TEST(Checkpoint, HoldsWhatTheFormatSays) {
  const TinyRun& r = run();
  TempDir dir;
  const std::string bytes = read_file(saved_run(dir, 2));
  ASSERT_GT(bytes.size(), 28u + r.fingerprint.size());
  EXPECT_EQ(bytes.substr(0, 8), "ATTN-GPT");
  std::uint32_t version = 0;
  std::memcpy(&version, bytes.data() + 8, 4);
  EXPECT_EQ(version, 3u);
  std::uint64_t length = 0;
  std::memcpy(&length, bytes.data() + 12, 8);
  EXPECT_EQ(length, r.fingerprint.size());
  EXPECT_EQ(bytes.substr(20, length), r.fingerprint);
  std::uint64_t stored = 0;
  std::memcpy(&stored, bytes.data() + bytes.size() - 8, 8);
  EXPECT_EQ(stored, fnv1a(std::string_view(bytes).substr(0, bytes.size() - 8)))
      << "the last 8 bytes are FNV-1a of every byte before them";
}

TEST(Checkpoint, RefusesATruncatedFile) {
  TempDir dir;
  const std::string good = saved_run(dir, 3);
  const std::string bytes = read_file(good);
  const std::string cut = dir.file("cut.ckpt");
  for (const std::size_t length :
       {std::size_t{8}, std::size_t{12}, std::size_t{19}, std::size_t{20}, std::size_t{21},
        std::size_t{100}, bytes.size() / 2, bytes.size() - 9, bytes.size() - 8, bytes.size() - 1})
    EXPECT_TRUE(refused(cut, bytes.substr(0, length), "truncated")) << "cut at " << length;
  EXPECT_EQ(read_file(good), bytes);
}

TEST(Checkpoint, RefusesAFlippedByte) {
  const TinyRun& r = run();
  TempDir dir;
  const std::string good = saved_run(dir, 3);
  const std::string bytes = read_file(good);
  const std::string bad = dir.file("flipped.ckpt");
  // In the fingerprint, the step, a weight near the middle, the last moment, the checksum.
  for (const std::size_t at : {std::size_t{25}, 20 + r.fingerprint.size() + 3, bytes.size() / 2,
                               bytes.size() - 9, bytes.size() - 1}) {
    std::string flipped = bytes;
    flipped[at] = static_cast<char>(flipped[at] ^ 0x10);
    EXPECT_TRUE(refused(bad, flipped, "corrupted")) << "byte " << at;
  }
  std::string version = bytes;
  version[9] = 1;  // format 259
  EXPECT_TRUE(refused(bad, version, "checkpoint format 259, where this book reads 3"));
  std::string magic = bytes;
  magic[0] = 'a';
  EXPECT_TRUE(refused(bad, magic, "is not a checkpoint of this book's GPT"));
  EXPECT_EQ(read_file(good), bytes);
}

// `bytes` with the field at `at` replaced by `value`, and the checksum recomputed over the
// result, as a damaged file that still passes the checksum would be.
template <typename Field>
std::string rewritten(std::string bytes, std::size_t at, Field value) {
  std::memcpy(bytes.data() + at, &value, sizeof(value));
  const std::uint64_t hash = fnv1a(std::string_view(bytes).substr(0, bytes.size() - 8));
  std::memcpy(bytes.data() + bytes.size() - 8, &hash, sizeof(hash));
  return bytes;
}

// Where a checkpoint of the run `fingerprint` names holds its number of curve points: after the
// magic 8, the version 4, the fingerprint 8 + n, six 8-byte numbers (step, AdamW's steps, the
// stream's state and increment), the loss sum and count.
std::size_t curve_count_at(const std::string& fingerprint) {
  return 8 + 4 + 8 + fingerprint.size() + 48 + 16;
}

TEST(Checkpoint, RefusesACountTheFileCannotHoldBeforeAllocatingForIt) {
  const TinyRun& r = run();
  TempDir dir;
  const std::string bytes = read_file(saved_run(dir, 3));
  const std::size_t curve_count = curve_count_at(r.fingerprint);
  std::uint64_t points = 0;
  std::memcpy(&points, bytes.data() + curve_count, sizeof(points));
  ASSERT_EQ(points, 1u) << "the field read is not the curve's count";  // step 2's point
  const std::string bad = dir.file("damaged.ckpt");
  // 2^40 points would be a std::bad_alloc, 2^26 two gigabytes allocated before the end of the
  // file showed; each is refused from the count and the bytes left, naming both.
  for (const std::uint64_t count : {std::uint64_t{1} << 40, std::uint64_t{1} << 26})
    EXPECT_TRUE(refused(bad, rewritten(bytes, curve_count, count),
                        fmt::format("it announces {} curve points, of 49 bytes each", count)));
  // The point's step, rate, batch loss and held-out number, then its flag: 0 or 1 only.
  const std::size_t flag = curve_count + 8 + 4 * 8;
  ASSERT_EQ(bytes[flag], 1) << "the field read is not the flag of a training measurement";
  EXPECT_TRUE(refused(bad, rewritten(bytes, flag, std::uint8_t{2}),
                      "the checkpoint is damaged: a curve point's flag is 2, not 0 or 1"));
}

TEST(Checkpoint, RefusesNaNOrInfiniteNumbersNamingWhere) {
  const TinyRun& r = run();
  TempDir dir;
  const std::string path = dir.file("run.ckpt");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double infinity = std::numeric_limits<double>::infinity();

  gpt::TrainingState weight = r.trained_to(3);
  weight.weights.blocks[0].mlp.W1(2, 1) = nan;
  gpt::save_checkpoint(path, r.fingerprint, weight);
  EXPECT_TRUE(refused(path, read_file(path), "blocks.0.mlp.W1 holds nan at row 2, column 1"));

  gpt::TrainingState moment = r.trained_to(3);
  moment.optimizer.second.back()(0) = infinity;
  gpt::save_checkpoint(path, r.fingerprint, moment);
  EXPECT_TRUE(refused(path, read_file(path), "(second moment) holds inf at row 0, column 0"));

  gpt::TrainingState curve = r.trained_to(3);
  curve.curve.front().measured.held_out = nan;
  gpt::save_checkpoint(path, r.fingerprint, curve);
  EXPECT_TRUE(refused(path, read_file(path), "a curve point's held-out measurement is nan"));

  gpt::TrainingState other = r.trained_to(3);
  other.curve.back().measured.others.back() = -infinity;
  gpt::save_checkpoint(path, r.fingerprint, other);
  EXPECT_TRUE(refused(path, read_file(path), "a curve point's other measurement is -inf"));

  gpt::TrainingState history = r.trained_to(3);
  history.history[1].gradient_norm = infinity;
  gpt::save_checkpoint(path, r.fingerprint, history);
  EXPECT_TRUE(refused(path, read_file(path), "a step's gradient norm is inf"));
}

// trained_once(): a run trained and saved once, then read back without training; a file of a run
// that stopped early, or of another run, trained again from the start, with a line that says why.
TEST(TrainedOnce, TrainsOnceThenReadsTheWholeRunBack) {
  const TinyRun& r = run();
  TempDir dir;
  const std::string path = dir.file("run.ckpt");
  int trainings = 0;
  const auto train = [&](gpt::TrainingState& state) {
    ++trainings;
    EXPECT_EQ(state.step, 0);
    gpt::train(state, r.settings, r.batches, r.measure, r.settings.steps);
  };
  gpt::TrainingState unbroken = r.trained_to(r.settings.steps);
  std::ostringstream log;
  gpt::TrainingState first =
      gpt::trained_once(log, path, r.fingerprint, r.model, r.settings, train);
  expect_same_state(first, unbroken);
  gpt::TrainingState again =
      gpt::trained_once(log, path, r.fingerprint, r.model, r.settings, train);
  expect_same_state(again, first);
  EXPECT_EQ(trainings, 1);
  EXPECT_EQ(log.str(), "");

  gpt::save_checkpoint(path, r.fingerprint, r.trained_to(3));
  gpt::TrainingState whole =
      gpt::trained_once(log, path, r.fingerprint, r.model, r.settings, train);
  expect_same_state(whole, first);
  EXPECT_EQ(trainings, 2);
  EXPECT_NE(log.str().find("the checkpoint stops at step 3 of 7; training it again"),
            std::string::npos)
      << log.str();

  gpt::TrainingSettings other_seed = r.settings;
  other_seed.seed = 6;
  gpt::save_checkpoint(
      path, gpt::run_fingerprint(r.model, other_seed, r.tokenizer, kTrainingText, kEvaluation),
      r.trained_to(1));
  log.str("");
  gpt::trained_once(log, path, r.fingerprint, r.model, r.settings, train);
  EXPECT_EQ(trainings, 3);
  EXPECT_NE(log.str().find("was made for another run"), std::string::npos) << log.str();
  EXPECT_NE(log.str().find("; training it again"), std::string::npos) << log.str();

  gpt::trained_once(log, "", r.fingerprint, r.model, r.settings, train);  // no file: none kept
  EXPECT_EQ(trainings, 4);
}

TEST(Checkpoint, RefusesAnotherRunsFileNamingTheFirstDifference) {
  const TinyRun& r = run();
  TempDir dir;
  const std::string path = dir.file("run.ckpt");
  gpt::TrainingSettings other_seed = r.settings;
  other_seed.seed = 6;
  const std::string seed_6 =
      gpt::run_fingerprint(r.model, other_seed, r.tokenizer, kTrainingText, kEvaluation);
  gpt::save_checkpoint(path, seed_6, r.trained_to(1));
  const std::string bytes = read_file(path);
  EXPECT_TRUE(refused(path, bytes,
                      "was made for another run: it has \"seed 6\", this run "
                      "\"seed 5\""));

  const std::string other_text = gpt::run_fingerprint(r.model, r.settings, r.tokenizer,
                                                      kTrainingText + "Amen.\n", kEvaluation);
  gpt::save_checkpoint(path, other_text, r.trained_to(1));
  EXPECT_TRUE(refused(path, read_file(path), "this run \"training_text "));

  attn::gpt::TransformerConfig wider = r.model;
  wider.d_ff = 32;
  const std::string wider_run =
      gpt::run_fingerprint(wider, r.settings, r.tokenizer, kTrainingText, kEvaluation);
  gpt::save_checkpoint(path, wider_run, r.trained_to(1));
  EXPECT_TRUE(refused(path, read_file(path), "it has \"d_ff 32\", this run \"d_ff 16\""));
}

TEST(Checkpoint, RefusesAnEmptyFileAndAFileThatIsNoCheckpoint) {
  TempDir dir;
  const std::string path = dir.file("run.ckpt");
  EXPECT_TRUE(
      refused(path, "", "is not a checkpoint of this book's GPT (no ATTN-GPT at its start)"));
  EXPECT_TRUE(refused(path, "step 3 of 7\nloss 4.2\n", "is not a checkpoint of this book's GPT"));
  EXPECT_TRUE(refused(path, "ATTN-GP", "is not a checkpoint"));
  const std::string missing = dir.file("missing.ckpt");
  EXPECT_TRUE(load_refused(missing, run().model, "cannot read the checkpoint " + missing));
}

TEST(Checkpoint, RefusesAModelOfAnotherShapeUnderTheSameFingerprint) {
  // The fingerprint names the sizes, so only a caller passing another model than its run's
  // gets here; the first parameter of another shape is named.
  TempDir dir;
  attn::gpt::TransformerConfig wider = run().model;
  wider.d_ff = 32;
  EXPECT_TRUE(
      load_refused(saved_run(dir, 1), wider,
                   "blocks.0.mlp.W1 is (8 × 16) in the checkpoint, (8 × 32) in this model"));
}

TEST(Checkpoint, RefusesAModelWithMoreParametersNamingBothCounts) {
  TempDir dir;
  // Two more parameters, W_U and b_U: the file says how many parameters it holds, so the
  // loader names both counts instead of reading the bytes that follow as if they were a name.
  attn::gpt::TransformerConfig untied = run().model;
  untied.tied_embeddings = false;
  EXPECT_TRUE(
      load_refused(saved_run(dir, 1), untied, "the checkpoint has 20 parameters, this model 22"));
}

TEST(Checkpoint, SaveNamesAFileItCannotWrite) {
  const TinyRun& r = run();
  TempDir dir;
  const std::string path = dir.file("no_such_folder/run.ckpt");
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { gpt::save_checkpoint(path, r.fingerprint, r.trained_to(0)); },
      "cannot write the checkpoint " + path + ".partial"));
}

// The checkpoint at `valid` as a forger would change it: read, one field changed by `edit`, and
// written again beside it as forged.ckpt, with its checksum recomputed over the changed bytes
// (save_checkpoint() writes each field as it is given and hashes what it wrote). Its path.
std::string forged(const std::string& valid, const std::function<void(gpt::TrainingState&)>& edit) {
  const TinyRun& r = run();
  gpt::TrainingState state = gpt::load_checkpoint(valid, r.fingerprint, r.model, r.settings);
  edit(state);
  const std::string path = (std::filesystem::path(valid).parent_path() / "forged.ckpt").string();
  gpt::save_checkpoint(path, r.fingerprint, state);
  return path;
}

// The file at `path` is refused naming `what` and the file, and left as it was.
testing::AssertionResult refused(const std::string& path, const std::string& what) {
  return refused(path, read_file(path), what);
}

TEST(Checkpoint, AcceptsEveryStepOfARunWithOrWithoutAPointAtStepZero) {
  // What the loader checks a whole file against is what train() leaves at each step: a point
  // at step 0 or not, a loss sum pending or not, the last point at step 7 (no multiple of 2).
  TinyRun from_start;
  from_start.settings.evaluate_at_start = true;
  from_start.fingerprint = gpt::run_fingerprint(from_start.model, from_start.settings,
                                                from_start.tokenizer, kTrainingText, kEvaluation);
  TempDir dir;
  const std::string path = dir.file("run.ckpt");
  for (const TinyRun* r : {&run(), static_cast<const TinyRun*>(&from_start)}) {
    const std::vector<gpt::TrainingState> states = {gpt::start(r->model, r->settings),
                                                    r->trained_to(0),
                                                    r->trained_to(1),
                                                    r->trained_to(4),
                                                    r->trained_to(5),
                                                    r->trained_to(7)};
    for (gpt::TrainingState state : states) {
      SCOPED_TRACE(fmt::format("step {}, {} points, a point at step 0: {}", state.step,
                               state.curve.size(), r->settings.evaluate_at_start));
      gpt::save_checkpoint(path, r->fingerprint, state);
      gpt::TrainingState loaded = gpt::load_checkpoint(path, r->fingerprint, r->model, r->settings);
      expect_same_state(loaded, state);
    }
  }
}

TEST(Checkpoint, RefusesAStepOutsideTheRun) {
  TempDir dir;
  const std::string valid = saved_run(dir, 3);
  for (const std::int64_t step : {std::int64_t{-1}, std::int64_t{8}, std::int64_t{1} << 62})
    EXPECT_TRUE(
        refused(forged(valid, [&](gpt::TrainingState& s) { s.step = step; }),
                fmt::format("the checkpoint's step is {}, outside this run's 0 to 7 steps", step)));
}

TEST(Checkpoint, RefusesAHistoryThatIsNotOneRecordAStep) {
  // Emptied behind step 3, it had chapter 11 read a first record that was not there.
  TempDir dir;
  const std::string valid = saved_run(dir, 3);
  EXPECT_TRUE(refused(forged(valid, [](gpt::TrainingState& s) { s.history.clear(); }),
                      "the checkpoint is at step 3 but its history holds 0 steps"));
  EXPECT_TRUE(
      refused(forged(valid, [](gpt::TrainingState& s) { s.history.push_back(s.history.back()); }),
              "the checkpoint is at step 3 but its history holds 4 steps"));
}

TEST(Checkpoint, RefusesAnAdamWStepCountOtherThanTheStep) {
  TempDir dir;
  const std::string valid = saved_run(dir, 3);
  for (const std::int64_t steps : {-1, 0, 4})
    EXPECT_TRUE(
        refused(forged(valid, [&](gpt::TrainingState& s) { s.optimizer.steps = steps; }),
                fmt::format("the checkpoint's AdamW step count is {} but its step is 3", steps)));
}

TEST(Checkpoint, RefusesAdamWMomentsThatDoNotMatchTheStep) {
  TempDir dir;
  EXPECT_TRUE(refused(forged(saved_run(dir, 3),
                             [](gpt::TrainingState& s) {
                               s.optimizer.first.clear();
                               s.optimizer.second.clear();
                             }),
                      "the checkpoint holds 0 pairs of AdamW moments at step 3, where a run "
                      "holds 20"));
}

TEST(Checkpoint, RefusesANegativeLossOrGradientNormInTheHistory) {
  TempDir dir;
  const std::string valid = saved_run(dir, 3);
  EXPECT_TRUE(refused(forged(valid, [](gpt::TrainingState& s) { s.history[1].loss = -0.5; }),
                      "the checkpoint's history has loss -0.5 at step 2; a cross-entropy is "
                      "never negative"));
  EXPECT_TRUE(refused(forged(valid, [](gpt::TrainingState& s) { s.history[2].gradient_norm = -1; }),
                      "the checkpoint's history has gradient norm -1 at step 3"));
}

TEST(Checkpoint, RefusesACurveWhosePointsAreNotWhereTheRunMeasures) {
  TempDir dir;
  const std::string valid = saved_run(dir, 3);
  EXPECT_TRUE(refused(forged(valid, [](gpt::TrainingState& s) { s.curve.clear(); }),
                      "the checkpoint's curve has 0 points at step 3, where this run has 1 "
                      "(a point every 2 steps of 7)"));
  EXPECT_TRUE(refused(forged(valid, [](gpt::TrainingState& s) { s.curve[0].step = 3; }),
                      "the checkpoint's curve point 0 is at step 3, where this run measures at "
                      "step 2"));
}

TEST(Checkpoint, RefusesACurvePointOffTheSchedule) {
  TempDir dir;
  const std::string valid = saved_run(dir, 3);
  const double rate = run().trained_to(3).curve[0].learning_rate;
  EXPECT_TRUE(
      refused(forged(valid, [](gpt::TrainingState& s) { s.curve[0].learning_rate *= 2; }),
              fmt::format("the checkpoint's curve point 0 (step 2) has learning rate {}, where "
                          "this run's schedule has {}",
                          2 * rate, rate)));
}

TEST(Checkpoint, RefusesACurvePointWhoseTrainingLossIsNotItsHistorys) {
  TempDir dir;
  const std::string valid = saved_run(dir, 3);
  const gpt::TrainingState state = run().trained_to(3);
  const double mean = (state.history[0].loss + state.history[1].loss) / 2;
  EXPECT_TRUE(
      refused(forged(valid, [](gpt::TrainingState& s) { s.curve[0].training_loss += 0.25; }),
              fmt::format("the checkpoint's curve point 0 (step 2) has training loss {}, where "
                          "its history's losses give {}",
                          mean + 0.25, mean)));
}

TEST(Checkpoint, RefusesAMeasurementNotTakenThatHoldsAValue) {
  // save_checkpoint() writes 0 where the flag is 0, so this one is forged byte by byte.
  const TinyRun& r = run();
  TempDir dir;
  const std::string bytes = read_file(saved_run(dir, 3));
  const std::size_t flag = curve_count_at(r.fingerprint) + 8 + 4 * 8;  // point 0's
  ASSERT_EQ(bytes[flag], 1) << "the field read is not the flag of a training measurement";
  double taken = 0;
  std::memcpy(&taken, bytes.data() + flag + 1, sizeof(taken));
  EXPECT_TRUE(refused(dir.file("forged.ckpt"), rewritten(bytes, flag, std::uint8_t{0}),
                      fmt::format("the checkpoint's curve point 0 holds {} for its training "
                                  "measurement, which its flag says was not taken",
                                  taken)));
}

TEST(Checkpoint, RefusesACountOfBatchLossesOtherThanTheStepsSinceTheLastPoint) {
  TempDir dir;
  const std::string valid = saved_run(dir, 3);
  for (const std::int64_t count : {-1, 0, 3})
    EXPECT_TRUE(refused(forged(valid, [&](gpt::TrainingState& s) { s.loss_count = count; }),
                        fmt::format("the checkpoint's count of the batch losses is {}; its step "
                                    "is 3 and its curve's last point is at step 2, so the count "
                                    "is 1",
                                    count)));
}

TEST(Checkpoint, RefusesASumOfBatchLossesOtherThanTheHistorys) {
  TempDir dir;
  const std::string valid = saved_run(dir, 3);
  const double loss = run().trained_to(3).history[2].loss;
  EXPECT_TRUE(refused(forged(valid, [](gpt::TrainingState& s) { s.loss_sum += 1; }),
                      fmt::format("the checkpoint's sum of the batch losses is {}, where its "
                                  "history's losses after step 2 sum to {}",
                                  loss + 1, loss)));
}

TEST(Checkpoint, RefusesARandomStreamOfAnotherSeed) {
  TempDir dir;
  EXPECT_TRUE(refused(forged(saved_run(dir, 3),
                             [](gpt::TrainingState& s) {
                               s.rng_increment =
                                   attn::numpy::default_rng(6).bit_generator().increment();
                             }),
                      "the checkpoint's random stream has increment "));
}

TEST(Checkpoint, RefusesANegativeSecondMoment) {
  TempDir dir;
  EXPECT_TRUE(refused(
      forged(saved_run(dir, 3), [](gpt::TrainingState& s) { s.optimizer.second[0](1, 0) = -1e-9; }),
      "the checkpoint's second moment of embedding holds -1e-09 at row 1, column 0; a mean of "
      "squared gradients is never negative"));
}

TEST(Checkpoint, RefusesAFirstMomentLargerThanItsSecondMomentAllows) {
  // After t steps |m| ≤ √((1 − β1)²/(1 − β2) Σ_{k<t} (β1²/β2)^k) √v: at t = 3, with PyTorch's
  // betas, √(10 (1 + 0.81/0.999 + (0.81/0.999)²)) √v = 4.968 √v. A first moment beside a second
  // moment of 0 would make AdamW's next update m / 10⁻⁸.
  TempDir dir;
  const std::string valid = saved_run(dir, 3);
  EXPECT_TRUE(refused(forged(valid,
                             [](gpt::TrainingState& s) {
                               s.optimizer.first[0](0, 0) = 1e-3;
                               s.optimizer.second[0](0, 0) = 0;
                             }),
                      "the checkpoint's first moment of embedding holds 0.001 at row 0, column 0, "
                      "where its second moment holds 0: after 3 AdamW steps with betas 0.9 and "
                      "0.999, |m| is at most 4.968 √v"));
}

TEST(Checkpoint, RefusesAWeightBeyondTheLargestItAllows) {
  // A finite 1e300 once ended later, in a NaN that did not name the file; 10⁴ itself is read.
  TempDir dir;
  const std::string valid = saved_run(dir, 3);
  EXPECT_TRUE(refused(
      forged(valid, [](gpt::TrainingState& s) { s.weights.blocks[0].mlp.W1(2, 1) = 1e300; }),
      "blocks.0.mlp.W1 holds 1e+300 at row 2, column 1 in the checkpoint, beyond the ±10000 a "
      "checkpoint's weights may reach"));
  const std::string edge = forged(valid, [](gpt::TrainingState& s) {
    s.weights.embedding(0, 0) = -gpt::kLargestCheckpointWeight;
  });
  EXPECT_EQ(gpt::load_checkpoint(edge, run().fingerprint, run().model, run().settings)
                .weights.embedding(0, 0),
            -1e4);
}

TEST(RunFingerprint, NamesEverySettingOnItsOwnLine) {
  const TinyRun& r = run();
  const std::string& f = r.fingerprint;
  for (const char* line :
       {"vocabulary 300\n",
        "d_model 8\n",
        "heads 2\n",
        "layers 1\n",
        "d_ff 16\n",
        "max_length 8\n",
        "positions learned\n",
        "tied_embeddings true\n",
        "dropout 0.1\n",
        "kv_heads 0\n",
        "sliding_window 0\n",
        "norm layer_norm\n",
        "mlp gelu\n",
        "attention_biases true\n",
        "steps 7\n",
        "batch 3\n",
        "peak_learning_rate 0.01\n",
        "final_learning_rate 0.001\n",
        "warmup_steps 2\n",
        "weight_decay 0.1\n",
        "betas 0.9 0.999\n",
        "clip_norm 0.5\n",
        "evaluate_every 2\n",
        "evaluate_at_start false\n",
        "seed 5\n",
        "parameter_groups 0\n",
        "evaluation bits per byte of the first 30 held-out and training tokens\n"})
    EXPECT_NE(f.find(line), std::string::npos) << line;
  // The tokenizer and the text enter as hashes: another merge list, another line.
  const attn::text::BpeTokenizer smaller = attn::text::train_bpe(kTrainingText, 290);
  const std::string other =
      gpt::run_fingerprint(r.model, r.settings, smaller, kTrainingText, kEvaluation);
  EXPECT_NE(other, f);
  EXPECT_EQ(other.substr(0, other.find("merges ")), f.substr(0, f.find("merges ")));
  EXPECT_EQ(gpt::run_fingerprint(r.model, r.settings, r.tokenizer, kTrainingText, kEvaluation), f);
}

// A run whose data a program draws names the data in words, where a text's run has its hashes:
// the same model and settings lines, then the data's own line.
TEST(RunFingerprint, NamesDrawnDataInWords) {
  const TinyRun& r = run();
  const std::string drawn =
      gpt::run_fingerprint(r.model, r.settings, "random segments repeated", kEvaluation);
  const std::string& text = r.fingerprint;
  EXPECT_EQ(drawn.substr(0, drawn.find("data ")), text.substr(0, text.find("merges ")));
  EXPECT_NE(drawn.find("\ndata random segments repeated\nevaluation "), std::string::npos) << drawn;
  EXPECT_NE(gpt::run_fingerprint(r.model, r.settings, "random segments", kEvaluation), drawn);
}

}  // namespace
