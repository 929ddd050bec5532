/// \file
/// \brief The bridge from real text to the model (chapter 11): a text's tokens with the bytes
///        each stands for, and the model's cost on it in bits per byte.
#pragma once

#include <attn/gpt/head_mask.hpp>
#include <attn/gpt/model.hpp>
#include <attn/gpt/step.hpp>
#include <attn/gpt/trainer.hpp>
#include <attn/text/bpe.hpp>

#include <armadillo>

#include <cstddef>
#include <string>
#include <vector>

namespace attn::gpt {

/// \brief Tokens of a text with how many bytes they stand for, for bits per byte.
struct TokenText {
  arma::uvec tokens;   ///< the text, encoded.
  arma::uvec lengths;  ///< how many bytes each token stands for.
};

/// \brief Encodes \p text. \param tokenizer the BPE. \param text any bytes.
/// \return the tokens and their lengths in bytes.
TokenText encode(const text::BpeTokenizer& tokenizer, const std::string& text);

/// \brief The model's cost in bits per byte: \f$\frac{1}{B \ln 2}\sum_i -\ln
///        p(t_i \mid t_{<i})\f$ over tokens 1 ... n − 1, \f$B\f$ the bytes they stand for.
///
/// The text is read as kept_context() says: windows of max_length tokens start every
/// kept_context() tokens and score the tokens no earlier window scored (all of the first
/// window, the second half of each later one), so past the first window every token is
/// predicted from at least half a context.
/// \param weights the model. \param text from encode(); \param tokens how much of the text to
///        read: its first \p tokens tokens, of which tokens 1 ... \p tokens − 1 are scored (all
///        of the text if 0 or more than it has).
/// \param precision the readable forward pass in double (sentence_logits()), or Float32Step's
///        in `float`, several windows at a time: the same windows, the same tokens scored.
/// \return bits per byte.
/// \throws InputError if fewer than 2 tokens would be scored, or as sentence_logits() (or
///         Float32Step) does.
double bits_per_byte(const TransformerWeights& weights, const TokenText& text,
                     std::size_t tokens = 0, Precision precision = Precision::float64);

/// \brief The same, with a run's Step: in float32, its Float32Step scores the windows in the
///        working memory the run's training steps use, so a measurement sizes no new one.
/// \param weights the model. \param text from encode(). \param tokens as above.
/// \param step the run's, made for \p weights' configuration. \return bits per byte.
/// \throws InputError naming the field if \p step was made for another configuration, and as
///         above.
double bits_per_byte(const TransformerWeights& weights, const TokenText& text, std::size_t tokens,
                     Step& step);

/// \brief Bits per byte of each of several windows of a text, each scored alone, with heads
///        switched off (an ablation) or not. Window \f$k\f$ reads tokens \f$s_k \dots s_k + L -
///        1\f$ and predicts tokens \f$s_k + 1 \dots s_k + L\f$, each from the window's tokens
///        before it: \f$\frac{1}{B_k \ln 2}\sum_{i=s_k+1}^{s_k+L} -\ln p(t_i \mid t_{s_k} \dots
///        t_{i-1})\f$, \f$B_k\f$ the bytes those tokens stand for.
/// \param weights the model. \param text from encode().
/// \param starts \f$s_k\f$, each window's first token (at least one window).
/// \param length \f$L\f$, 1 ... max_length. \param mask the heads switched off (none by default).
/// \return `(starts.size())`: window \f$k\f$'s bits per byte.
/// \throws InputError if there is no window, \p length is 0 or above max_length, or a window
///         has no token after it in \p text; as sentence_logits() does.
arma::vec window_bits(const TransformerWeights& weights, const TokenText& text,
                      const std::vector<arma::uword>& starts, arma::uword length,
                      const HeadMask& mask = {});

/// \brief A measurement for the trainer: bits_per_byte() of the first \p tokens of
///        \p held_out (the Measurement's training number is not taken), with the run's Step,
///        so in the run's precision.
/// \param held_out the held-out text, encoded (copied into the measurement).
/// \param tokens how much of it to read, as bits_per_byte() takes it (all if 0).
/// \return the Evaluation.
Evaluation held_out_bits(const TokenText& held_out, std::size_t tokens);

/// \brief Chapter 11's measurement for the trainer: bits_per_byte() of the first \p tokens of
///        \p held_out and of the first \p tokens of \p training, read the same way (the same
///        windows, the same contexts), so that the two numbers differ only by the text.
/// \param held_out,training the two texts, encoded (copied into the measurement).
/// \param tokens how much of each to read, as bits_per_byte() takes it (all if 0).
/// \return the Evaluation, which scores with the run's Step.
Evaluation bits_on_both(const TokenText& held_out, const TokenText& training, std::size_t tokens);

}  // namespace attn::gpt
