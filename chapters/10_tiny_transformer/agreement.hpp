/// \file
/// \brief Chapter 10's language: short sentences in which a verb and a pronoun agree with a
///        noun several words back, past a second noun that may disagree.
///
/// Every sentence has the form
///
///     the N1 that V the N2 [ADV] was|were ADJ so it|they VERB .     (subject relative)
///     the N1 that the N2 V [ADV] was|were ADJ so it|they VERB .     (object relative)
///
/// "was" and "it" go with a singular N1, "were" and "they" with a plural one, whatever N2 is;
/// VERB is fixed by ADJ (thirsty → drank, hungry → ate, tired → slept, happy → sang). The
/// word before "was/were" is N2, V or an adverb, and the word before "it/they" is always "so",
/// so a model that looks only at the previous word cannot know either form. For "was/were" it
/// has to find N1; for "it/they", N1 or the "was/were" before it will do.
#pragma once

#include <armadillo>

#include <cstdint>
#include <string>
#include <vector>

/// \brief Chapter 10's own material: the agreement language, and the GPT trained on it.
namespace attn::ch10 {

/// \brief The 35 words, "." first. A word's id is its index here.
/// \return the vocabulary.
const std::vector<std::string>& vocabulary();

/// \brief The id of \p word.
/// \param word one word of vocabulary(). \return its index.
/// \throws std::invalid_argument listing the vocabulary if \p word is not in it.
arma::uword word_id(const std::string& word);

/// \brief Words from their ids.
/// \param tokens ids. \return one word per id. \throws std::out_of_range on an unknown id.
std::vector<std::string> words(const arma::uvec& tokens);

/// \brief Words from their ids, separated by spaces.
/// \param tokens ids. \return the text. \throws std::out_of_range on an unknown id.
std::string text(const arma::uvec& tokens);

/// \brief Ids from space-separated words.
/// \param words for example "the cat that saw the dogs". \return the ids.
/// \throws std::invalid_argument on an unknown word (listing the vocabulary) or no word.
arma::uvec parse(const std::string& words);

/// \brief One sentence and what the chapter measures in it.
struct Sentence {
  arma::uvec tokens;               ///< 12 or 13 ids, ending with ".".
  arma::uword subject = 1;         ///< the position of N1 (always 1).
  arma::uword distractor = 0;      ///< the position of N2.
  arma::uword verb_slot = 0;       ///< the position whose next word is was/were.
  arma::uword pronoun_slot = 0;    ///< the position whose next word is it/they ("so").
  bool subject_plural = false;     ///< whether N1 is plural.
  bool distractor_plural = false;  ///< whether N2 is plural.
};

/// \brief \p count sentences drawn from numpy's `default_rng(seed)`.
///
/// Each sentence takes eight `rng.random()` draws \f$u\f$, in this order: N1 (`int(6u)` of the
/// six nouns), N1 plural (\f$u < 0.5\f$), N2, N2 plural, V (`int(4u)`), object relative
/// (\f$u \ge 0.5\f$), adverb (`int(4u)`: none, today, yesterday, again), ADJ (`int(4u)`).
/// `tests/data/generate_transformer_fixtures.py` draws the same sentences in Python.
/// \param seed the generator's seed. \param count how many. \return the sentences; none for
///        \p count 0.
std::vector<Sentence> generate(std::uint64_t seed, std::size_t count);

/// \brief The lowest next-word loss any model can reach on \p sentences: that of the grammar
///        itself. Every sentence is one of \f$12 \cdot 12 \cdot 2 \cdot 4 \cdot 4 \cdot 4\f$
///        equally likely choices (N1, N2, which clause, V, adverb or none, ADJ), so the loss is
///        \f$\ln(18432)\f$ per sentence, spread over its predicted words.
/// \param sentences a set. \return nats per predicted word; 0 for a set with no predicted
///        word (no sentence, or only one-word sentences).
double loss_floor(const std::vector<Sentence>& sentences);

/// \brief How many sentences of \p test are also sentences of \p training, word for word.
/// \param training,test two sets. \return the count, over \p test; 0 if either is empty.
std::size_t repeated(const std::vector<Sentence>& training, const std::vector<Sentence>& test);

/// \brief Whether a text's verb and pronoun agree with a subject: its first "was/were" and its
///        first "it/they" are both there and are the singular forms, or both the plural ones.
/// \param text ids, for example a greedy continuation. \param plural whether the subject is.
/// \return true if they agree; false for an empty \p text (ids outside the vocabulary are
///         never a form, so they are passed over).
bool agrees(const arma::uvec& text, bool plural);

/// \brief How often a model prefers the right form at the agreement slots.
struct Accuracy {
  double all = 0.0;                   ///< over every slot: both slots of every sentence.
  double disagreeing = 0.0;           ///< over the sentences whose N1 and N2 differ in number.
  arma::uword slots = 0;              ///< the number of slots in `all`.
  arma::uword disagreeing_slots = 0;  ///< the number of slots in `disagreeing`.
};

/// \brief The share of agreement slots at which the right form scores strictly higher than
///        the wrong one ("was" against "were", "it" against "they"); a tie counts as wrong.
/// \param sentences the test set.
/// \param scores per sentence, a model's scores for the word after each of its words but the
///        last: `(n − 1 × V)`, any monotone score (logits, probabilities, counts).
/// \return the accuracies; 0 (and 0 slots) where there is no slot, as for no sentence.
/// \throws std::invalid_argument if the counts or shapes disagree (both are named).
/// \throws InputError (a std::invalid_argument) if a sentence's scores hold a NaN, which
///         would compare false both ways, or its slots are not rows of its scores. The
///         infinities are scores like any other (a log-probability of 0 is \f$-\infty\f$).
Accuracy accuracy(const std::vector<Sentence>& sentences, const std::vector<arma::mat>& scores);

/// \brief A bigram model's scores for \p sentences: row \f$i\f$ of sentence \f$s\f$ is the
///        row of \p counts of its word \f$i\f$.
/// \param counts from bigram_counts(). \param sentences the test set.
/// \return one `(n − 1 × V)` matrix per sentence, for accuracy().
/// \throws ShapeError if \p counts is not `(V × V)`.
/// \throws InputError if \p counts holds a NaN, an infinity or a negative count, or a sentence
///         has no token.
/// \throws std::out_of_range if a sentence holds an id outside the vocabulary.
std::vector<arma::mat> bigram_scores(const arma::mat& counts,
                                     const std::vector<Sentence>& sentences);

/// \brief Bigram counts: entry (a, b) is how often b follows a in \p sentences.
/// \param sentences the training set. \return `(V × V)`; all zeros for no sentence.
/// \throws std::out_of_range if a sentence holds an id outside the vocabulary.
arma::mat bigram_counts(const std::vector<Sentence>& sentences);

/// \brief The mean next-word cross-entropy of a bigram model with add-one smoothing,
///        \f$p(b \mid a) = (c_{ab} + 1) / (\sum_k c_{ak} + V)\f$.
/// \param counts from bigram_counts(). \param sentences the test set.
/// \return the loss, in nats per predicted word; 0 for a set with no predicted word.
/// \throws ShapeError, InputError, std::out_of_range as bigram_scores() does (an empty
///         sentence predicts nothing and is allowed here).
double bigram_loss(const arma::mat& counts, const std::vector<Sentence>& sentences);

}  // namespace attn::ch10
