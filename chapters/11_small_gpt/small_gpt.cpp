#include "small_gpt.hpp"

#include <attn/gpt/checkpoint.hpp>
#include <attn/math/validate.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>
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

std::string fingerprint(const Recipe& recipe, const EncodedCorpus& text,
                        const std::string& text_line) {
  return gpt::run_fingerprint(
             recipe.model, recipe.training, text.tokenizer, text.corpus.training,
             fmt::format("bits per byte of the first {} validation and training tokens",
                         recipe.evaluation_tokens)) +
         text_line;
}

namespace {

// Refuses a checkpoint that is not there, or not a whole checkpoint file: the file alone, before
// any tokenizer is learned. `command` trains it.
void check_there(const std::string& path, const std::string& command) {
  std::error_code error;
  if (!std::filesystem::exists(path, error))
    throw math::InputError(
        fmt::format("{}: no checkpoint of chapter 11's model is there; run {}, which trains it "
                    "(for some minutes) and writes it there",
                    path, command));
  gpt::check_checkpoint_file(path);
}

// The checkpoint read against the run's fingerprint (with a reader's text's line, or none); a run
// that stopped before its last step is refused.
TrainedModel read_run(const std::string& path, const Recipe& recipe, EncodedCorpus text,
                      const std::string& text_line, const std::string& command) {
  gpt::TrainingState state = gpt::load_checkpoint(path, fingerprint(recipe, text, text_line),
                                                  recipe.model, recipe.training);
  if (state.step != recipe.training.steps)
    throw math::InputError(
        fmt::format("{}: the checkpoint stops at step {} of {}; run {} to finish its training",
                    path, state.step, recipe.training.steps, command));
  return {.recipe = recipe, .text = std::move(text), .state = std::move(state)};
}

// A path as one word of a shell command: as it is if nothing in it is special, else in quotes.
std::string shell_word(const std::string& path) {
  const bool plain = std::all_of(path.begin(), path.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           (c != '\0' && std::strchr("/._-+", c) != nullptr);
  });
  // A relative path that starts with '-' would read as an option: "./" keeps it a path.
  const std::string word = !path.empty() && path.front() == '-' ? "./" + path : path;
  if (plain && !path.empty())
    return word;
  std::string quoted = "'";
  for (const char c : word)
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace

TrainedModel load_trained_model(const std::string& path) {
  return load_trained_model(path, kRecipe, read_split_bible().corpus);
}

TrainedModel load_trained_model(const std::string& path, const Recipe& recipe, Corpus corpus) {
  const std::string command = "ch11_small_gpt";
  check_there(path, command);
  return read_run(path, recipe, encode_corpus(std::move(corpus), recipe.model.vocabulary), "",
                  command);
}

ReaderText read_reader_text(const std::string& path) {
  const std::string text = read_text_file(path);
  return {.path = path,
          .encoded = encode_corpus(split_by_position(text)),
          .text_line = text_fingerprint(text)};
}

TrainedModel load_text_model(const std::string& path, ReaderText text) {
  std::string command = "ch11_small_gpt --text " + shell_word(text.path);
  if (path != text_checkpoint(text.path))
    command += " --checkpoint " + shell_word(path);
  check_there(path, command);
  return read_run(path, kRecipe, std::move(text.encoded), text.text_line, command);
}

std::string axis_label(const std::string& bytes) {
  std::string label;
  for (const char c : text::printable(bytes))
    label += c == ' ' ? std::string("␣") : std::string(1, c);
  return label;
}

}  // namespace attn::ch11
