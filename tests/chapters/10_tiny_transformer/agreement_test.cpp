// Chapter 10's language (chapters/10_tiny_transformer/agreement.hpp): the sentences equal numpy's
// draw of them (tests/data/agreement_sentences.txt, from generate_transformer_fixtures.py), the
// slots are where the agreeing words are, and the accuracy and bigram measures count what they say.
#include <10_tiny_transformer/agreement.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>

namespace {

namespace ch10 = attn::ch10;

TEST(Agreement, SentencesEqualNumpysDraw) {
  std::ifstream in(std::string(ATTN_TEST_DATA_DIR) + "/agreement_sentences.txt");
  ASSERT_TRUE(in) << "cannot read agreement_sentences.txt";
  std::map<std::uint64_t, std::vector<std::string>> expected;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#')
      expected[std::stoull(line.substr(0, line.find(' ')))].push_back(
          line.substr(line.find(' ') + 1));
  ASSERT_EQ(expected.size(), 2u);
  for (const auto& [seed, lines] : expected) {
    const std::vector<ch10::Sentence> ours = ch10::generate(seed, lines.size());
    for (std::size_t s = 0; s < lines.size(); ++s)
      EXPECT_EQ(ch10::text(ours[s].tokens), lines[s]) << "seed " << seed << ", sentence " << s;
  }
}

TEST(Agreement, SlotsPointAtTheAgreeingWords) {
  const std::vector<std::string>& v = ch10::vocabulary();
  for (const ch10::Sentence& s : ch10::generate(7, 200)) {
    const std::string n1 = v[s.tokens(s.subject)], n2 = v[s.tokens(s.distractor)];
    const std::string verb = v[s.tokens(s.verb_slot + 1)],
                      pronoun = v[s.tokens(s.pronoun_slot + 1)];
    EXPECT_EQ(verb, s.subject_plural ? "were" : "was") << ch10::text(s.tokens);
    EXPECT_EQ(pronoun, s.subject_plural ? "they" : "it") << ch10::text(s.tokens);
    EXPECT_EQ(v[s.tokens(s.pronoun_slot)], "so");
    EXPECT_EQ(v[s.tokens(s.distractor - 1)], "the");
    const auto id = [](const std::string& w) {
      return ch10::word_id(w);
    };
    EXPECT_EQ((id(n1) - id("cat")) % 2 == 1, s.subject_plural) << n1;  // plural nouns are odd
    EXPECT_EQ((id(n2) - id("cat")) % 2 == 1, s.distractor_plural) << n2;
    EXPECT_EQ(v[s.tokens(s.tokens.n_elem - 1)], ".");
  }
}

TEST(Agreement, VocabularyIsUnder40WordsAndParsesBack) {
  EXPECT_EQ(ch10::vocabulary().size(), 35u);
  const arma::uvec ids = ch10::parse("the mice that saw the cat were");
  EXPECT_EQ(ch10::text(ids), "the mice that saw the cat were");
  try {
    ch10::parse("the unicorn");
    FAIL() << "an unknown word was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("unknown word \"unicorn\""), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("the that was were"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ch10::parse("   "), std::invalid_argument);
}

TEST(Agreement, RepeatedCountsSentencesOfTheTestSetSeenInTraining) {
  const std::vector<ch10::Sentence> a = ch10::generate(10, 5), b = ch10::generate(11, 3);
  std::vector<ch10::Sentence> mixed{a[1], b[0], a[4], a[1]};
  EXPECT_EQ(ch10::repeated(a, mixed), 3u);
  EXPECT_EQ(ch10::repeated(a, {}), 0u);
  EXPECT_EQ(ch10::words(ch10::parse("so it")), (std::vector<std::string>{"so", "it"}));
}

TEST(Agreement, LossFloorIsTheGrammarsOwnEntropy) {
  // Three 13-word sentences (12 predictions each) and one 12-word one (11).
  std::vector<ch10::Sentence> s = ch10::generate(12, 40);
  std::vector<ch10::Sentence> four;
  for (const ch10::Sentence& x : s)
    if (four.size() < 3 ? x.tokens.n_elem == 13 : four.size() < 4 && x.tokens.n_elem == 12)
      four.push_back(x);
  ASSERT_EQ(four.size(), 4u);
  EXPECT_NEAR(ch10::loss_floor(four), 4 * std::log(12.0 * 12 * 2 * 4 * 4 * 4) / 47.0, 1e-15);
  EXPECT_EQ(ch10::loss_floor({}), 0.0);
}

TEST(Agreement, AgreesLooksAtTheFirstVerbAndPronoun) {
  EXPECT_TRUE(
      ch10::agrees(ch10::parse("the cat that saw the dogs today was happy so it sang ."), false));
  EXPECT_TRUE(ch10::agrees(ch10::parse("were hungry so they ate"), true));
  EXPECT_FALSE(ch10::agrees(ch10::parse("were hungry so they ate"), false));
  EXPECT_FALSE(ch10::agrees(ch10::parse("was hungry so they ate"), false));
  EXPECT_FALSE(ch10::agrees(ch10::parse("was hungry so"), false));  // no pronoun yet
  EXPECT_FALSE(ch10::agrees(ch10::parse("it was"), true));
}

TEST(Agreement, AccuracyCountsStrictWinsOnly) {
  const std::vector<ch10::Sentence> sentences = ch10::generate(8, 50);
  // An oracle that scores the true next word highest gets every slot.
  std::vector<arma::mat> oracle, flat_scores;
  for (const ch10::Sentence& s : sentences) {
    const arma::uword n = s.tokens.n_elem - 1;
    arma::mat z(n, ch10::vocabulary().size(), arma::fill::zeros);
    for (arma::uword i = 0; i < n; ++i)
      z(i, s.tokens(i + 1)) = 1.0;
    oracle.push_back(z);
    flat_scores.emplace_back(n, ch10::vocabulary().size(), arma::fill::zeros);
  }
  const ch10::Accuracy perfect = ch10::accuracy(sentences, oracle);
  EXPECT_EQ(perfect.all, 1.0);
  EXPECT_EQ(perfect.slots, 100u);
  EXPECT_EQ(perfect.disagreeing, 1.0);
  // Equal scores are ties, and a tie is wrong.
  const ch10::Accuracy flat = ch10::accuracy(sentences, flat_scores);
  EXPECT_EQ(flat.all, 0.0);
  arma::uword disagreeing = 0;
  for (const ch10::Sentence& s : sentences)
    disagreeing += 2 * (s.subject_plural != s.distractor_plural);
  EXPECT_EQ(flat.disagreeing_slots, disagreeing);
  flat_scores.pop_back();
  EXPECT_THROW(ch10::accuracy(sentences, flat_scores), std::invalid_argument);
  oracle.front().shed_row(0);
  EXPECT_THROW(ch10::accuracy(sentences, oracle), std::invalid_argument);
}

TEST(Agreement, BigramCountsAndLoss) {
  const std::vector<ch10::Sentence> sentences = ch10::generate(9, 30);
  const arma::mat counts = ch10::bigram_counts(sentences);
  double pairs = 0;
  for (const ch10::Sentence& s : sentences)
    pairs += s.tokens.n_elem - 1;
  EXPECT_EQ(arma::accu(counts), pairs);
  EXPECT_EQ(counts(ch10::word_id("so"), ch10::word_id("it")) +
                counts(ch10::word_id("so"), ch10::word_id("they")),
            30.0);
  // With no counts at all, add-one smoothing is uniform: ln V per word.
  EXPECT_NEAR(ch10::bigram_loss(arma::mat(35, 35, arma::fill::zeros), sentences), std::log(35.0),
              1e-12);
}

}  // namespace
