/// \file
/// \brief Chapter 11's model as the later chapters use it: its sizes and its training recipe, its
///        text prepared as the model reads it (the King James Bible split, a BPE tokenizer learned
///        from the training part, each part encoded), the fingerprint its checkpoint carries, and
///        the trained model read back from that checkpoint in one call, load_trained_model().
///
/// Chapter 12 trains smaller models of the same kind on the same text; a later chapter that
/// looks at chapter 11's trained heads loads them:
/// \code
///   const attn::ch11::TrainedModel gpt = attn::ch11::load_trained_model();
///   gpt.state.weights      // the model, as chapter 11 trained it
///   gpt.text.tokenizer     // the tokenizer it reads with
///   gpt.text.validation    // the validation part, encoded
/// \endcode
#pragma once

#include "kjv.hpp"
#include "text_file.hpp"

#include <attn/gpt/model.hpp>
#include <attn/gpt/text.hpp>
#include <attn/gpt/trainer.hpp>
#include <attn/text/bpe.hpp>

#include <cstddef>
#include <string>

namespace attn::ch11 {

//! [settings]
/// The tokenizer: 256 bytes and 768 merges.
inline constexpr std::size_t kVocabulary = 1024;
/// The model: GPT-2's shape at a size this machine trains in minutes. Its initial weights are
/// attn::gpt::init_transformer()'s.
inline const gpt::TransformerConfig kModel{
    .vocabulary = kVocabulary,
    .d_model = 96,
    .heads = 4,
    .layers = 4,
    .d_ff = 384,        // the MLP's hidden width, 4 d_model as in GPT-2
    .max_length = 128,  // tokens of context
    .positions = gpt::Positions::learned,
    .tied_embeddings = true,
    .dropout = 0.0,
};
/// The training recipe of real models: AdamW, a warm-up and a cosine decay, gradient clipping.
inline const gpt::TrainingSettings kTraining{
    .steps = 3900,
    .batch = 16,  // windows of max_length + 1 tokens
    .peak_learning_rate = 3e-3,
    .final_learning_rate = 3e-4,
    .warmup_steps = 195,
    .weight_decay = 0.1,
    .beta1 = 0.9,    // PyTorch's default, and nanoGPT's
    .beta2 = 0.999,  // PyTorch's default, not nanoGPT's (the page says why)
    .clip_norm = 1.0,
    .evaluate_every = 300,
    .evaluate_at_start = true,  // a point before any update: the loss of a model that knows nothing
    .seed = 11,
    .precision = gpt::Precision::float32,  // the step of attn/gpt/float32_step.hpp
};
/// At each measurement: the first tokens of the validation text and of the training text, read
/// the same way.
inline constexpr std::size_t kEvaluationTokens = 8192;
//! [settings]

/// \brief What fixes one of chapter 11's runs besides its text.
struct Recipe {
  gpt::TransformerConfig model;       ///< the model's sizes.
  gpt::TrainingSettings training;     ///< how it is trained.
  std::size_t evaluation_tokens = 0;  ///< the first tokens of the validation and training texts
                                      ///< that each point of the learning curve measures.
};

/// The book's run: kModel trained with kTraining, measured on kEvaluationTokens.
inline const Recipe kRecipe{
    .model = kModel,
    .training = kTraining,
    .evaluation_tokens = kEvaluationTokens,
};

/// \brief The King James Bible as chapter 11 trains on it.
struct Bible {
  std::size_t bytes = 0;   ///< of the decoded text (read_bible()).
  std::size_t verses = 0;  ///< the verses parse_verses() found.
  Corpus corpus;           ///< its three parts, by chapter (split_corpus()).
};

/// \brief Debian's Bible read, cut into verses and split by chapter.
/// \param path the file (kBiblePath). \return the Bible's sizes and its three parts.
/// \throws attn::math::InputError as read_bible() does.
Bible read_split_bible(const std::string& path = kBiblePath);

/// \brief A corpus as chapter 11's model reads it: its three parts, the tokenizer learned from
///        the training part, and each part encoded with that tokenizer.
struct EncodedCorpus {
  Corpus corpus;                 ///< the three parts' bytes.
  text::BpeTokenizer tokenizer;  ///< learned from `corpus.training`.
  gpt::TokenText training;       ///< the training part, encoded.
  gpt::TokenText validation;     ///< the validation part.
  gpt::TokenText test;           ///< the test part.
};

/// \brief Learns a byte-level BPE of \p vocabulary tokens from the training part
///        (attn::text::train_bpe()) and encodes the three parts with it.
/// \param corpus the three parts. \param vocabulary tokens of the tokenizer, 256 or more.
/// \return the corpus, its tokenizer and its encoded parts.
/// \throws attn::math::InputError as attn::text::train_bpe() does.
EncodedCorpus encode_corpus(Corpus corpus, std::size_t vocabulary = kVocabulary);

/// \brief What a checkpoint of one of chapter 11's runs carries, and must carry to be resumed
///        or loaded: gpt::run_fingerprint() of the recipe, the tokenizer and the training part,
///        with its measurement named ("bits per byte of the first 8192 validation and training
///        tokens"), and for a run on a reader's text that text's own line.
/// \param recipe the run. \param text its corpus, as encode_corpus() returned it.
/// \param text_line for a run on a reader's `--text`, text_fingerprint() of the whole file (so a
///        checkpoint of another text, or of the file edited, is another run's); empty for the
///        King James Bible.
/// \return the fingerprint, one line a field.
std::string fingerprint(const Recipe& recipe, const EncodedCorpus& text,
                        const std::string& text_line = {});

/// \brief A token as a figure's axis shows it: attn::text::printable(), with each space drawn
///        as "␣" (U+2423), which a tick label would otherwise lose at its start (` God` would
///        read `God`). \param bytes the token's (BpeTokenizer::token_bytes()). \return the label.
std::string axis_label(const std::string& bytes);

/// \brief Chapter 11's model after its training, with what reading it takes.
struct TrainedModel {
  Recipe recipe;             ///< how it was trained.
  EncodedCorpus text;        ///< its text, tokenizer and encoded parts.
  gpt::TrainingState state;  ///< its weights, learning curve and history, at the last step.
};

/// \brief Chapter 11's trained model, read from the checkpoint its run left: the one call a later
///        chapter makes. The Bible is read and split, the tokenizer learned again (it is fixed by
///        the text), and the checkpoint read whole by gpt::load_checkpoint() against the run's
///        fingerprint.
/// \param path the checkpoint; the book's build keeps it in its build folder, where chapter 11's
///        run writes it.
/// \return the model, its text and tokenizer, and its recipe (kRecipe).
/// \throws attn::math::InputError naming the file if it is not there (run `ch11_small_gpt`, which
///         trains for some minutes and writes it), if it is not a whole checkpoint, if its
///         fingerprint is another run's (naming the first line that differs), or if its run
///         stopped before its last step.
TrainedModel load_trained_model(const std::string& path = ATTN_DEFAULT_CHECKPOINT);

/// \brief load_trained_model() for any run of chapter 11's kind: \p recipe trained on \p corpus,
///        with a tokenizer of `recipe.model.vocabulary` tokens (a test's tiny run, for one).
/// \param path the checkpoint. \param recipe the run. \param corpus its text.
/// \return the model, its text and tokenizer, and \p recipe.
/// \throws attn::math::InputError as load_trained_model() does.
TrainedModel load_trained_model(const std::string& path, const Recipe& recipe, Corpus corpus);

/// \brief A reader's text (`ch11_small_gpt --text FILE`) as chapter 11 trains on it.
struct ReaderText {
  std::string path;       ///< the file.
  EncodedCorpus encoded;  ///< split by position (split_by_position()) and encoded.
  std::string text_line;  ///< text_fingerprint() of the whole file, for fingerprint().
};

/// \brief Reads a reader's text, splits it by position and encodes it (encode_corpus()): what
///        load_text_model() reads the checkpoint against, and what a chapter can measure before
///        it looks for one. \param path the file. \return the text.
/// \throws attn::math::InputError as read_text_file() and encode_corpus() do.
ReaderText read_reader_text(const std::string& path);

/// \brief load_trained_model() for a run on a reader's text: the checkpoint read against the
///        run's fingerprint with the text's own line, so that a checkpoint of another text is
///        refused.
/// \param path the checkpoint (ch11_small_gpt writes it at text_checkpoint() of the file unless
///        given `--checkpoint`). \param text from read_reader_text().
/// \return the model, its text and tokenizer, and kRecipe.
/// \throws attn::math::InputError as load_trained_model() does; the command it suggests to train
///         the model names the text and, if it is not the default, the checkpoint.
TrainedModel load_text_model(const std::string& path, ReaderText text);

}  // namespace attn::ch11
