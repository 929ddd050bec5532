#include "small_gpt.hpp"

#include <attn/gpt/checkpoint.hpp>
#include <attn/math/validate.hpp>

#include <fmt/format.h>

#include <filesystem>
#include <utility>
#include <vector>

namespace attn::ch11 {

Bible read_split_bible(const std::string& path) {
  const std::string bible = read_bible(path);
  const std::vector<Verse> verses = parse_verses(bible);
  return {.bytes = bible.size(), .verses = verses.size(), .corpus = split_corpus(verses)};
}

EncodedCorpus encode_corpus(Corpus corpus, std::size_t vocabulary) {
  text::BpeTokenizer tokenizer = text::train_bpe(corpus.training, vocabulary);
  gpt::TokenText training = gpt::encode(tokenizer, corpus.training);
  gpt::TokenText validation = gpt::encode(tokenizer, corpus.validation);
  gpt::TokenText test = gpt::encode(tokenizer, corpus.test);
  return {.corpus = std::move(corpus),
          .tokenizer = std::move(tokenizer),
          .training = std::move(training),
          .validation = std::move(validation),
          .test = std::move(test)};
}

std::string fingerprint(const Recipe& recipe, const EncodedCorpus& text) {
  return gpt::run_fingerprint(
      recipe.model, recipe.training, text.tokenizer, text.corpus.training,
      fmt::format("bits per byte of the first {} validation and training tokens",
                  recipe.evaluation_tokens));
}

namespace {

// A checkpoint of one of chapter 11's runs, read against its fingerprint plus `text_line` (a
// reader's text's, or nothing); `command` trains it.
TrainedModel load(const std::string& path, const Recipe& recipe, Corpus corpus,
                  const std::string& text_line, const std::string& command) {
  std::error_code error;
  if (!std::filesystem::exists(path, error))
    throw math::InputError(
        fmt::format("{}: no checkpoint of chapter 11's model is there; run {}, which trains it "
                    "(for some minutes) and writes it there",
                    path, command));
  gpt::check_checkpoint_file(path);  // before the tokenizer is learned: the file alone
  EncodedCorpus text = encode_corpus(std::move(corpus), recipe.model.vocabulary);
  gpt::TrainingState state = gpt::load_checkpoint(path, fingerprint(recipe, text) + text_line,
                                                  recipe.model, recipe.training);
  if (state.step != recipe.training.steps)
    throw math::InputError(
        fmt::format("{}: the checkpoint stops at step {} of {}; run {} to finish its training",
                    path, state.step, recipe.training.steps, command));
  return {.recipe = recipe, .text = std::move(text), .state = std::move(state)};
}

}  // namespace

TrainedModel load_trained_model(const std::string& path) {
  return load_trained_model(path, kRecipe, read_split_bible().corpus);
}

TrainedModel load_trained_model(const std::string& path, const Recipe& recipe, Corpus corpus) {
  return load(path, recipe, std::move(corpus), "", "ch11_small_gpt");
}

TrainedModel load_text_model(const std::string& path, const std::string& text_path) {
  const std::string text = read_text_file(text_path);
  return load(path, kRecipe, split_by_position(text), text_fingerprint(text),
              fmt::format("ch11_small_gpt --text {}", text_path));
}

std::string axis_label(const std::string& bytes) {
  std::string label;
  for (const char c : text::printable(bytes))
    label += c == ' ' ? std::string("␣") : std::string(1, c);
  return label;
}

}  // namespace attn::ch11
