// Chapter 11's model as the later chapters read it (chapters/11_small_gpt/small_gpt.hpp), on a
// tiny run of its kind trained here: the checkpoint such a run leaves is loaded in one call, with
// its text, tokenizer and recipe; a missing file, another run's, a file that is not a checkpoint
// and an unfinished run are refused, naming the file and what to do.
#include <11_small_gpt/small_gpt.hpp>
#include <attn/gpt/checkpoint.hpp>
#include <attn/math/validate.hpp>

#include "bad_input.hpp"
#include "tiny_gpt.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace gpt = attn::gpt;
namespace ch11 = attn::ch11;
using attn_bad_input::ThrowsNaming;

// Three parts of a few verses each, as split_corpus() would return them.
ch11::Corpus tiny_corpus() {
  return {.training =
              "In the beginning God created the heaven and the earth.\n"
              "And the earth was without form, and void; and darkness was upon the face of the "
              "deep.\n"
              "And the Spirit of God moved upon the face of the waters.\n"
              "And God said, Let there be light: and there was light.\n"
              "And God saw the light, that it was good: and God divided the light from the "
              "darkness.\n",
          .validation = "And God called the light Day, and the darkness he called Night.\n",
          .test = "And the evening and the morning were the first day.\n",
          .training_lines = 5,
          .validation_lines = 1,
          .test_lines = 1};
}

// Chapter 11's recipe (kRecipe) for a model of a few hundred weights, four steps, measured on
// 20 tokens.
ch11::Recipe tiny_recipe() {
  ch11::Recipe recipe = ch11::kRecipe;
  recipe.evaluation_tokens = 20;
  recipe.model = gpt_test::tiny_config(300, 8);
  recipe.model.dropout = 0.0;  // as chapter 11's model: the float32 step drops nothing
  gpt::TrainingSettings& training = recipe.training;
  training.steps = 4;
  training.batch = 2;
  training.warmup_steps = 1;
  training.evaluate_every = 2;
  return recipe;
}

// The tiny run trained as chapter 11 trains, until step `until`, and saved at `path` with the
// fingerprint of `recipe` (the run's own unless another is given).
gpt::TrainingState train_and_save(const std::string& path, std::int64_t until,
                                  const ch11::Recipe& recipe = tiny_recipe()) {
  const ch11::Recipe run = tiny_recipe();
  const ch11::EncodedCorpus text = ch11::encode_corpus(tiny_corpus(), run.model.vocabulary);
  gpt::TrainingState state = gpt::start(run.model, run.training);
  gpt::train(state, run.training,
             gpt::window_batches(text.training.tokens, run.model.max_length, run.training.batch),
             gpt::bits_on_both(text.validation, text.training, run.evaluation_tokens), until);
  gpt::save_checkpoint(path, ch11::fingerprint(recipe, text), state);
  return state;
}

TEST(LoadTrainedModel, ReadsTheTrainedModelItsTextAndItsRecipeInOneCall) {
  const gpt_test::TempDir dir;
  const std::string path = dir.file("tiny.checkpoint");
  const gpt::TrainingState saved = train_and_save(path, tiny_recipe().training.steps);
  const ch11::TrainedModel loaded = ch11::load_trained_model(path, tiny_recipe(), tiny_corpus());
  EXPECT_EQ(loaded.state.step, 4);
  EXPECT_EQ(loaded.recipe.model.d_model, tiny_recipe().model.d_model);
  EXPECT_EQ(loaded.recipe.training.seed, 11u);
  EXPECT_EQ(loaded.recipe.evaluation_tokens, 20u);
  const std::vector<gpt::ConstParameter> a = gpt::parameters(loaded.state.weights);
  const std::vector<gpt::ConstParameter> b = gpt::parameters(saved.weights);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t k = 0; k < a.size(); ++k)
    EXPECT_TRUE(arma::approx_equal(*a[k].value, *b[k].value, "absdiff", 0.0)) << a[k].name;
  EXPECT_EQ(loaded.text.tokenizer.vocab_size(), 300u);
  EXPECT_EQ(loaded.text.corpus.validation, tiny_corpus().validation);
  const std::vector<attn::text::TokenId> test(loaded.text.test.tokens.begin(),
                                              loaded.text.test.tokens.end());
  EXPECT_EQ(loaded.text.tokenizer.decode(test), tiny_corpus().test);
}

TEST(LoadTrainedModel, RefusesAMissingFileSayingWhichProgramWritesIt) {
  const gpt_test::TempDir dir;
  const std::string path = dir.file("not-trained-yet.checkpoint");
  EXPECT_TRUE(
      ThrowsNaming<attn::math::InputError>([&] { ch11::load_trained_model(path); },
                                           path + ": no checkpoint of chapter 11's model is there; "
                                                  "run ch11_small_gpt"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { ch11::load_trained_model(path, tiny_recipe(), tiny_corpus()); }, path));
}

TEST(LoadTrainedModel, RefusesAnotherRunsCheckpointNamingTheFirstDifference) {
  const gpt_test::TempDir dir;
  const std::string path = dir.file("tiny.checkpoint");
  ch11::Recipe other = tiny_recipe();
  other.evaluation_tokens = 30;
  train_and_save(path, tiny_recipe().training.steps, other);
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { ch11::load_trained_model(path, tiny_recipe(), tiny_corpus()); },
      path + " was made for another run: it has \"evaluation bits per byte of the first 30 "
             "validation and training tokens\""));
}

TEST(LoadTrainedModel, RefusesAFileThatIsNoCheckpoint) {
  const gpt_test::TempDir dir;
  const std::string path = dir.file("tiny.checkpoint");
  gpt_test::write_file(path, "And God said\n");
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { ch11::load_trained_model(path, tiny_recipe(), tiny_corpus()); }, path));
}

TEST(LoadTrainedModel, RefusesARunThatStoppedBeforeItsLastStep) {
  const gpt_test::TempDir dir;
  const std::string path = dir.file("tiny.checkpoint");
  train_and_save(path, 2);
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { ch11::load_trained_model(path, tiny_recipe(), tiny_corpus()); },
      path + ": the checkpoint stops at step 2 of 4; run ch11_small_gpt to finish its training"));
}

// A run on a reader's text: some twenty lines of it, and chapter 11's own recipe (load_text_model()
// reads no other).
std::string reader_text() {
  std::string text;
  for (int k = 0; k < 20; ++k)
    text += fmt::format("Line {} of a reader's notes, with words enough to learn from.\n", k);
  return text;
}

// A checkpoint of chapter 11's recipe at step 0 (an untrained model), as a run on `text` writes it.
void save_untrained(const std::string& path, const std::string& text) {
  const ch11::EncodedCorpus encoded = ch11::encode_corpus(ch11::split_by_position(text));
  const gpt::TrainingState state = gpt::start(ch11::kModel, ch11::kTraining);
  gpt::save_checkpoint(
      path, ch11::fingerprint(ch11::kRecipe, encoded, ch11::text_fingerprint(text)), state);
}

TEST(LoadTextModel, RefusesAMissingFileSayingHowToTrainIt) {
  const gpt_test::TempDir dir;
  const std::string text = dir.file("notes.txt");
  gpt_test::write_file(text, reader_text());
  const std::string path = dir.file("notes.checkpoint");
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { ch11::load_text_model(path, ch11::read_reader_text(text)); },
      path + ": no checkpoint of chapter 11's model is there; run ch11_small_gpt --text " + text +
          " --checkpoint " + path + ", which trains it"));
}

// The command that trains the model names the text as a shell reads it, and the checkpoint only
// where it is not the text's own (text_checkpoint()).
TEST(LoadTextModel, SaysHowToTrainItInACommandThatRuns) {
  const gpt_test::TempDir dir;
  const std::string text = dir.file("it's my notes.txt");
  gpt_test::write_file(text, reader_text());
  const std::string own = ch11::text_checkpoint(text);
  ASSERT_FALSE(std::filesystem::exists(own)) << own;
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { ch11::load_text_model(own, ch11::read_reader_text(text)); },
      fmt::format("{}: no checkpoint of chapter 11's model is there; run ch11_small_gpt --text "
                  "'{}', which trains it",
                  own, dir.file("it'\\''s my notes.txt"))));
}

// The text's own line in the fingerprint: the run on this text is accepted (and refused only
// because it has not trained yet); a run on the file with one byte of its test part changed,
// which the recipe's fingerprint does not read, is another run's.
TEST(LoadTextModel, ReadsOnlyTheCheckpointOfItsOwnText) {
  const gpt_test::TempDir dir;
  const std::string text = dir.file("notes.txt");
  gpt_test::write_file(text, reader_text());
  const std::string path = dir.file("notes.checkpoint");
  save_untrained(path, reader_text());
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { ch11::load_text_model(path, ch11::read_reader_text(text)); },
      fmt::format("{}: the checkpoint stops at step 0 of {}; run ch11_small_gpt --text {} "
                  "--checkpoint {} to finish its training",
                  path, ch11::kRecipe.training.steps, text, path)));
  std::string edited = reader_text();  // one byte of the test part: the training part is the same
  edited[edited.size() - 2] = '!';
  gpt_test::write_file(text, edited);
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { ch11::load_text_model(path, ch11::read_reader_text(text)); },
      path + " was made for another run"));
}

// The fingerprint names the recipe, the tokenizer, the training text and the measurement, so a
// run differing in any of them cannot resume or load another's checkpoint.
TEST(Fingerprint, NamesTheRecipeTheTextAndTheMeasurement) {
  const ch11::EncodedCorpus text = ch11::encode_corpus(tiny_corpus(), 300);
  const std::string fingerprint = ch11::fingerprint(tiny_recipe(), text);
  EXPECT_NE(fingerprint.find("d_model 8\n"), std::string::npos) << fingerprint;
  EXPECT_NE(fingerprint.find("seed 11\n"), std::string::npos) << fingerprint;
  EXPECT_NE(
      fingerprint.find(fmt::format("training_text {:016x}\n", gpt::fnv1a(tiny_corpus().training))),
      std::string::npos)
      << fingerprint;
  EXPECT_NE(fingerprint.find("evaluation bits per byte of the first 20 validation and training "
                             "tokens\n"),
            std::string::npos)
      << fingerprint;
}

TEST(EncodeCorpus, LearnsTheTokenizerFromTheTrainingPartAndEncodesEachPart) {
  const ch11::EncodedCorpus text = ch11::encode_corpus(tiny_corpus(), 300);
  EXPECT_EQ(text.tokenizer.vocab_size(), 300u);
  EXPECT_EQ(text.tokenizer.merges().size(), 44u);
  for (const auto& [part, bytes] : {std::pair{&text.training, &text.corpus.training},
                                    std::pair{&text.validation, &text.corpus.validation},
                                    std::pair{&text.test, &text.corpus.test}}) {
    EXPECT_EQ(arma::accu(part->lengths), bytes->size());
    EXPECT_EQ(part->tokens.n_elem, part->lengths.n_elem);
  }
}

}  // namespace
