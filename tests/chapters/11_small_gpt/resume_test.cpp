// Chapter 11's run started or resumed (chapters/11_small_gpt/resume.hpp), on a tiny model of its
// kind: no file, a fresh run; a valid checkpoint, resumed; a checkpoint the loader refuses, or one
// without the training measurements the chapter prints, a bad command line that names the file
// and the field, so that the chapter exits with 2 and its usage instead of crashing later on it.
#include <11_small_gpt/resume.hpp>
#include <attn/book/chapter.hpp>
#include <attn/gpt/checkpoint.hpp>

#include "bad_input.hpp"
#include "tiny_gpt.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

namespace gpt = attn::gpt;
namespace ch11 = attn::ch11;
using attn::book::CommandLineError;
using attn_bad_input::ThrowsNaming;
using gpt_test::TempDir;

const std::string kFingerprint = "chapter 11's kind of run, tiny\n";

// A tiny run measured from step 0, as the chapter's is: a training measurement at every point,
// or, with `training` false, the held-out one alone.
struct TinyRun {
  gpt::TransformerConfig model = gpt_test::tiny_config(20, 4);
  gpt::TrainingSettings settings{.steps = 4,
                                 .batch = 2,
                                 .peak_learning_rate = 1e-2,
                                 .final_learning_rate = 1e-3,
                                 .warmup_steps = 1,
                                 .evaluate_every = 2,
                                 .evaluate_at_start = true,
                                 .seed = 3};

  gpt::TrainingState trained_to(std::int64_t until, bool training = true) const {
    const arma::uvec tokens = arma::regspace<arma::uvec>(0, 19);
    const gpt::Evaluation measure = [training](const gpt::TransformerWeights& w, gpt::Step&) {
      const double size = arma::accu(arma::abs(w.embedding));
      return gpt::Measurement{.held_out = size,
                              .training = training ? std::optional(2 * size) : std::nullopt};
    };
    gpt::TrainingState state = gpt::start(model, settings);
    gpt::train(state, settings, gpt::window_batches(tokens, model.max_length, settings.batch),
               measure, until);
    return state;
  }
};

// `state`, with `edit` applied first, saved at `path` for the tiny run.
void save(const std::string& path, gpt::TrainingState state,
          void (*edit)(gpt::TrainingState&) = nullptr) {
  if (edit != nullptr)
    edit(state);
  gpt::save_checkpoint(path, kFingerprint, state);
}

gpt::TrainingState opening(const std::string& path) {
  const TinyRun run;
  return ch11::opening_state(path, kFingerprint, run.model, run.settings);
}

TEST(OpeningState, StartsAfreshWithoutACheckpoint) {
  const TempDir dir;
  EXPECT_EQ(opening("").step, 0);
  const gpt::TrainingState fresh = opening(dir.file("not-yet.ckpt"));
  EXPECT_EQ(fresh.step, 0);
  EXPECT_TRUE(fresh.history.empty());
  EXPECT_EQ(dir.entries(), 0u);
}

TEST(OpeningState, ResumesAValidCheckpoint) {
  const TempDir dir;
  const std::string path = dir.file("run.ckpt");
  save(path, TinyRun().trained_to(3));
  const gpt::TrainingState resumed = opening(path);
  EXPECT_EQ(resumed.step, 3);
  EXPECT_EQ(resumed.history.size(), 3u);
  EXPECT_EQ(resumed.curve.size(), 2u);  // steps 0 and 2
}

TEST(OpeningState, RefusesAHistoryEmptiedBehindItsStepAsABadCommandLine) {
  // The file a reviewer forged: chapter 11 read its history's first record, which was not there.
  const TempDir dir;
  const std::string path = dir.file("run.ckpt");
  save(path, TinyRun().trained_to(3), [](gpt::TrainingState& s) { s.history.clear(); });
  EXPECT_TRUE(ThrowsNaming<CommandLineError>(
      [&] { opening(path); },
      "--checkpoint: " + path + ": the checkpoint is at step 3 but its history holds 0 steps"));
  EXPECT_TRUE(
      ThrowsNaming<CommandLineError>([&] { opening(path); }, "nothing was trained or written"));
}

TEST(OpeningState, RefusesACurveWithoutTheTrainingMeasurementsTheChapterPrints) {
  // A valid checkpoint of a run that measured held-out text only: the loader cannot know what the
  // run's Evaluation takes, the chapter can.
  const TempDir dir;
  const std::string path = dir.file("run.ckpt");
  save(path, TinyRun().trained_to(3, false));
  EXPECT_TRUE(ThrowsNaming<CommandLineError>(
      [&] { opening(path); }, path + ": the checkpoint's curve point 0 (step 0) has no "
                                     "training-text measurement"));
}

TEST(OpeningState, AChapterGivenSuchACheckpointExitsWith2AndItsUsage) {
  const TempDir dir;
  const std::string path = dir.file("run.ckpt");
  save(path, TinyRun().trained_to(3), [](gpt::TrainingState& s) { s.step = -1; });
  std::vector<std::string> words = {"ch11_small_gpt", "--no-plots"};
  std::vector<char*> argv;
  for (std::string& word : words)
    argv.push_back(word.data());
  testing::internal::CaptureStderr();
  const int code = attn::book::run_chapter(static_cast<int>(argv.size()), argv.data(),
                                           {.executable = "ch11_small_gpt", .summary = ""},
                                           [&](attn::book::Chapter&) { opening(path); });
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(code, 2);
  EXPECT_NE(err.find("ch11_small_gpt: --checkpoint: " + path +
                     ": the checkpoint's step is -1, outside this run's 0 to 4 steps"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("Usage: ch11_small_gpt"), std::string::npos) << err;
}

}  // namespace
