// Chapter 12's experiment (chapters/12_todays_attention/experiment.hpp): its block and recipe are
// chapter 11's with the fields it names changed; its design's seeds and runs (92 for the book);
// each change's configuration; the seeds a reader may choose; a run trained, kept, read back and
// trained again over another run's checkpoint; and the words its tables give a comparison in.
#include <11_small_gpt/text_file.hpp>
#include <12_todays_attention/experiment.hpp>
#include <attn/book/chapter.hpp>
#include <attn/gpt/checkpoint.hpp>
#include <attn/text/bpe.hpp>

#include "bad_input.hpp"
#include "tiny_gpt.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace gpt = attn::gpt;
namespace ch11 = attn::ch11;
namespace ch12 = attn::ch12;
using attn_bad_input::ThrowsNaming;
using gpt_test::TempDir;

// The lines of two runs' fingerprints that differ, by the name of their field.
std::vector<std::string> fields_that_differ(const std::string& a, const std::string& b) {
  std::istringstream one(a), two(b);
  std::vector<std::string> fields;
  for (std::string x, y; std::getline(one, x) && std::getline(two, y);)
    if (x != y)
      fields.push_back(x.substr(0, x.find(' ')));
  return fields;
}

// A run's fingerprint with no tokenizer's merges and no text: its model's and recipe's fields.
std::string fingerprint_of(const gpt::TransformerConfig& model,
                           const gpt::TrainingSettings& training = ch12::kTraining) {
  const attn::text::BpeTokenizer bytes = attn::text::train_bpe("any text", 256);
  return gpt::run_fingerprint(model, training, bytes, "", "");
}

TEST(Settings, TheBlockAndRecipeAreChapter11sWithTheNamedFieldsChanged) {
  EXPECT_EQ(
      fields_that_differ(fingerprint_of(ch11::kModel, ch11::kTraining),
                         fingerprint_of(ch12::kGpt2Block, ch12::kTraining)),
      (std::vector<std::string>{"d_model", "layers", "d_ff", "max_length", "steps", "batch",
                                "warmup_steps", "evaluate_every", "evaluate_at_start", "seed"}));
}

TEST(SeedsFor, TheBaselineTakesThreeTimesAsManyAndTheRateCheckTheFirstThree) {
  const ch12::Seeds book = ch12::seeds_for(ch12::kSeeds);
  EXPECT_EQ(book.changes, ch12::kSeeds);
  ASSERT_EQ(book.baseline.size(), 21u);
  EXPECT_EQ(book.baseline.front(), 11u);
  EXPECT_EQ(book.baseline.back(), 31u);
  EXPECT_EQ(book.rate, (std::vector<std::uint64_t>{11, 12, 13}));
  const ch12::Seeds reader = ch12::seeds_for({5, 9, 2});
  EXPECT_EQ(reader.baseline, (std::vector<std::uint64_t>{5, 9, 2, 10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(reader.rate, (std::vector<std::uint64_t>{5, 9, 2}));
  EXPECT_EQ(ch12::seeds_for({5, 6}).rate, (std::vector<std::uint64_t>{5, 6}));
}

TEST(RunsFor, TheBooksDesignIsNinetyTwoRuns) {
  const std::vector<ch12::Run> runs =
      ch12::runs_for(ch12::seeds_for(ch12::kSeeds), ch12::kTraining);
  ASSERT_EQ(runs.size(), 92u);  // 21 of the baseline, 8 x 7 changes, 5 x 3 at the second rate
  std::size_t second = 0;
  for (const ch12::Run& run : runs) {
    const double factor = run.second_rate ? ch12::kRateFactor : 1.0;
    EXPECT_EQ(run.settings.peak_learning_rate, factor * ch12::kTraining.peak_learning_rate);
    EXPECT_EQ(run.settings.final_learning_rate, factor * ch12::kTraining.final_learning_rate);
    EXPECT_EQ(run.settings.steps, ch12::kTraining.steps);
    if (run.second_rate) {
      ++second;
      EXPECT_TRUE(ch12::kChanges[run.change].rate_checked) << ch12::kChanges[run.change].name;
    }
  }
  EXPECT_EQ(second, 15u);
  EXPECT_EQ(runs.front().settings.seed, 11u);
}

TEST(AtSecondRate, MultipliesBothRatesByTheFactorAndNothingElse) {
  const gpt::TrainingSettings second = ch12::at_second_rate(ch12::kTraining);
  EXPECT_EQ(second.peak_learning_rate, ch12::kRateFactor * ch12::kTraining.peak_learning_rate);
  EXPECT_EQ(second.final_learning_rate, ch12::kRateFactor * ch12::kTraining.final_learning_rate);
  EXPECT_EQ(second.warmup_steps, ch12::kTraining.warmup_steps);
  EXPECT_EQ(second.steps, ch12::kTraining.steps);
}

TEST(CheckSeeds, RefusesFewerThanTwoARepeatedSeedAndOneTooLarge) {
  using attn::book::CommandLineError;
  EXPECT_NO_THROW(ch12::check_seeds({5, 6}));
  EXPECT_TRUE(ThrowsNaming<CommandLineError>([] { ch12::check_seeds({5}); },
                                             "--seeds: needs at least two seeds"));
  EXPECT_TRUE(ThrowsNaming<CommandLineError>(
      [] {
        ch12::check_seeds({5, 6, 5});
      },
      "names a seed twice"));
  EXPECT_TRUE(ThrowsNaming<CommandLineError>(
      [] {
        ch12::check_seeds({5, 2000000000});
      },
      "takes seeds from 0 to 1000000000, not 2000000000"));
}

TEST(Changes, TheFirstChangesNothingAndTodaysBlockMakesEveryMarkedChangeTogether) {
  ASSERT_GE(ch12::kChanges.size(), 2u);
  const gpt::TransformerConfig first = ch12::changed(ch12::kChanges.front().variants);
  EXPECT_EQ(first, ch12::kGpt2Block);
  gpt::TransformerConfig together = ch12::kGpt2Block;
  std::size_t alone = 0;  // rows that are one of today's changes alone
  for (const ch12::Change& change : ch12::kChanges)
    if (ch12::in_todays_block(change)) {
      together = gpt::with(change.variants, together, ch12::variant_sizes());
      ++alone;
    }
  EXPECT_EQ(alone, ch12::kChanges.back().variants.size());
  const gpt::TransformerConfig today = ch12::changed(ch12::kChanges.back().variants);
  EXPECT_EQ(today, together);
  EXPECT_EQ(
      fields_that_differ(fingerprint_of(ch12::kGpt2Block), fingerprint_of(today)),
      (std::vector<std::string>{"d_ff", "positions", "kv_heads", "sliding_window", "norm", "mlp"}));
  EXPECT_EQ(ch12::every_change().size(), ch12::kChanges.size() - 1);
  EXPECT_EQ(ch12::every_change().front(), 1u);
}

TEST(MatchedSwigluWidth, ComesClosestToTheBlocksParameterCount) {
  const auto gap = [](arma::uword h) {
    gpt::TransformerConfig c = ch12::kGpt2Block;
    c.mlp = gpt::Mlp::swiglu;
    c.d_ff = h;
    return std::abs(static_cast<double>(gpt::parameter_count(c)) -
                    static_cast<double>(gpt::parameter_count(ch12::kGpt2Block)));
  };
  const arma::uword h = ch12::matched_swiglu_width();
  EXPECT_LE(gap(h), gap(h - 1));
  EXPECT_LE(gap(h), gap(h + 1));
  EXPECT_LT(h, ch12::kGpt2Block.d_ff);  // three matrices, not two: narrower
}

// A run of the experiment on the book's own short text (the one chapter 11's --text test reads),
// at --quick's settings: trained and kept, read back, and trained again over another run's file.
TEST(Trained, KeepsARunReadsItBackAndTrainsAgainOverAnotherRunsCheckpoint) {
  std::ifstream in(std::string(ATTN_TEST_DATA_DIR) + "/ch11_garden_notes.txt");
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  ASSERT_FALSE(text.empty());
  const ch11::EncodedCorpus data = ch11::encode_corpus(ch11::split_by_position(text));
  const ch12::Run run = ch12::runs_for(ch12::seeds_for({11, 12}), ch12::quick(ch12::kTraining))[0];
  const TempDir dir;
  std::ostringstream first;
  const gpt::TrainingState trained =
      ch12::trained(first, data, run, ch12::kQuickScoredTokens, dir.file(""));
  EXPECT_EQ(trained.step, run.settings.steps);
  EXPECT_NE(first.str().find("steps took"), std::string::npos) << first.str();
  ASSERT_EQ(dir.entries(), 1u);
  const std::string path = dir.file("gpt2-rate0.003-seed11.checkpoint");
  std::ostringstream second;
  const gpt::TrainingState read =
      ch12::trained(second, data, run, ch12::kQuickScoredTokens, dir.file(""));
  EXPECT_EQ(second.str(), "");  // read back, not trained
  EXPECT_TRUE(
      arma::approx_equal(read.weights.embedding, trained.weights.embedding, "absdiff", 0.0));
  gpt::save_checkpoint(path, "another run\n", trained);
  std::ostringstream third;
  ch12::trained(third, data, run, ch12::kQuickScoredTokens, dir.file(""));
  EXPECT_NE(third.str().find(path + " was made for another run"), std::string::npos) << third.str();
  EXPECT_NE(third.str().find("training it again"), std::string::npos) << third.str();
}

TEST(FinalBitsAndCurves, TakeAChangesRunsAtOneRateInTheOrderOfTheirSeeds) {
  const auto result = [](std::size_t change, bool second_rate, double last) {
    return ch12::Result{.run = {.change = change, .second_rate = second_rate, .settings = {}},
                        .steps = {200, 400},
                        .bits = {2.0, last}};
  };
  const std::vector<ch12::Result> results = {result(0, false, 1.5), result(1, false, 1.4),
                                             result(0, true, 1.7), result(0, false, 1.6)};
  EXPECT_TRUE(
      arma::approx_equal(ch12::final_bits(results, 0, false), arma::vec{1.5, 1.6}, "absdiff", 0.0));
  EXPECT_TRUE(
      arma::approx_equal(ch12::final_bits(results, 0, true), arma::vec{1.7}, "absdiff", 0.0));
  EXPECT_TRUE(arma::approx_equal(ch12::curves(results, 0), arma::mat{{2.0, 1.5}, {2.0, 1.6}},
                                 "absdiff", 0.0));
}

TEST(SeedList, CountsUpWhereItCanAndListsOtherwise) {
  EXPECT_EQ(ch12::seed_list({11, 12, 13, 14, 15, 16}), "11 to 16");
  EXPECT_EQ(ch12::seed_list({5, 9, 2}), "5, 9 and 2");
  EXPECT_EQ(ch12::seed_list({5, 6}), "5 and 6");  // two seeds are listed, not counted
}

TEST(Verdict, ReadsTheIntervalLowerIsBetter) {
  const attn::stats::Difference better{.estimate = -0.02, .low = -0.03, .high = -0.01};
  const attn::stats::Difference worse{.estimate = 0.02, .low = 0.01, .high = 0.03};
  const attn::stats::Difference either{.estimate = 0.001, .low = -0.004, .high = 0.006};
  EXPECT_EQ(ch12::verdict(better), "better");
  EXPECT_EQ(ch12::verdict(worse), "worse");
  EXPECT_EQ(ch12::verdict(either), "not detectable at this size");
  EXPECT_EQ(ch12::interval(either), "[-0.004, +0.006]");
}

}  // namespace
