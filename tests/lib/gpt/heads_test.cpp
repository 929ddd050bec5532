// Looking inside the model (attn/gpt/heads.hpp, attn/gpt/head_mask.hpp): the attention weights
// read from a forward pass are the ones it used, and a head mask changes exactly what it says:
// none masked is the plain pass to the bit, a zeroed head is one whose rows of W_O are zero, a
// head replaced by its own mean keeps the attention layer's mean output.
#include <attn/gpt/forward.hpp>
#include <attn/gpt/head_mask.hpp>
#include <attn/gpt/heads.hpp>
#include <attn/gpt/text.hpp>
#include <attn/gpt/variants.hpp>
#include <attn/math/layers.hpp>
#include <attn/math/mask.hpp>
#include <attn/math/validate.hpp>

#include <gtest/gtest.h>

#include "bad_input.hpp"
#include "random_gpt.hpp"

#include <cmath>
#include <functional>
#include <numbers>
#include <string>
#include <vector>

namespace {

namespace gpt = attn::gpt;
using arma::uword;
using attn_bad_input::ThrowsNaming;

// GPT-2's block and each variant of the library's list, by name.
std::vector<std::pair<std::string, gpt::TransformerConfig>> every_choice() {
  std::vector<std::pair<std::string, gpt::TransformerConfig>> list{
      {"gpt2", attn_test::small_gpt()}};
  for (const gpt::Variant v : gpt::kEveryVariant)
    list.emplace_back(std::string(gpt::to_string(v)), gpt::with(v, attn_test::small_gpt()));
  return list;
}

const arma::uvec kSentence{1, 4, 2, 6, 0, 3};
const arma::uvec kPacked{1, 4, 2, 6, 0, 3, 3, 3, 5, 6, 1};
const arma::uvec kStarts{0, 6, 9};

// A mask that masks nothing gives the plain pass, every logit to the bit, for every choice.
TEST(HeadMask, MaskingNothingIsThePlainPassExactly) {
  for (const auto& [name, config] : every_choice()) {
    const gpt::TransformerWeights w = attn_test::random_model(config, 17);
    const arma::mat plain = gpt::transformer_forward(w, kPacked, kStarts).logits;
    const arma::mat masked = gpt::transformer_forward(w, kPacked, kStarts, gpt::HeadMask{}).logits;
    EXPECT_TRUE(arma::all(arma::vectorise(plain == masked))) << name;
  }
}

// Zeroing head k of block l is the model whose rows k·d_k .. (k+1)·d_k − 1 of that block's W_O
// are zero: the head's output is there, but nothing of it reaches the residual stream.
TEST(HeadMask, AZeroedHeadIsAHeadWhoseOutputProjectionIsZero) {
  for (const auto& [name, config] : every_choice()) {
    const gpt::TransformerWeights w = attn_test::random_model(config, 19);
    const uword d_k = config.d_model / config.heads;
    const arma::mat plain = gpt::transformer_forward(w, kPacked, kStarts).logits;
    for (uword l = 0; l < config.layers; ++l)
      for (uword k = 0; k < config.heads; ++k) {
        gpt::TransformerWeights cut = w;
        cut.blocks[l].attention.W_O.rows(k * d_k, (k + 1) * d_k - 1).zeros();
        const arma::mat expected = gpt::transformer_forward(cut, kPacked, kStarts).logits;
        const arma::mat masked =
            gpt::transformer_forward(w, kPacked, kStarts, gpt::HeadMask{}.zero(l, k)).logits;
        EXPECT_LT(arma::abs(masked - expected).max(), 1e-12)
            << name << " block " << l << " head " << k;
        EXPECT_GT(arma::abs(masked - plain).max(), 1e-6) << name << ": the head did something";
      }
  }
}

// A head replaced by its own mean over the same sentences: the attention layer's output
// (MultiHead's, before the residual), averaged over those tokens, is unchanged (the projection
// is linear), while its rows change.
TEST(HeadMask, AHeadReplacedByItsMeanKeepsTheLayersMeanOutput) {
  const gpt::TransformerWeights w = attn_test::random_model(attn_test::small_gpt(), 23);
  const std::vector<std::vector<arma::rowvec>> means = gpt::head_means(w, kPacked, kStarts);
  ASSERT_EQ(means.size(), 2u);
  ASSERT_EQ(means[0].size(), 4u);
  const gpt::TransformerForward plain = gpt::transformer_forward(w, kPacked, kStarts);
  const gpt::TransformerForward masked =
      gpt::transformer_forward(w, kPacked, kStarts, gpt::HeadMask{}.replace(0, 2, means[0][2]));
  arma::mat before, after;
  for (uword s = 0; s < kStarts.n_elem; ++s) {
    before = arma::join_cols(before, plain.blocks[0].attention[s].output);
    after = arma::join_cols(after, masked.blocks[0].attention[s].output);
    const arma::mat& replaced = masked.blocks[0].attention[s].heads[2].output;
    for (uword i = 0; i < replaced.n_rows; ++i)
      EXPECT_LT(arma::abs(replaced.row(i) - means[0][2]).max(), 1e-15);
  }
  EXPECT_LT(arma::abs(arma::mean(after, 0) - arma::mean(before, 0)).max(), 1e-12);
  EXPECT_GT(arma::abs(after - before).max(), 1e-3);
  EXPECT_TRUE(masked.blocks[0].heads_masked);
  EXPECT_FALSE(plain.blocks[0].heads_masked);
}

// head_means() is each head's output averaged over every token.
TEST(HeadMeans, AreTheHeadsOutputsAveragedOverEveryToken) {
  const gpt::TransformerWeights w = attn_test::random_model(attn_test::small_gpt(), 29);
  const std::vector<std::vector<arma::rowvec>> means = gpt::head_means(w, kPacked, kStarts);
  const gpt::TransformerForward f = gpt::transformer_forward(w, kPacked, kStarts);
  for (uword l = 0; l < 2; ++l)
    for (uword k = 0; k < 4; ++k) {
      arma::mat rows;
      for (const attn::math::MultiHead& sentence : f.blocks[l].attention)
        rows = arma::join_cols(rows, sentence.heads[k].output);
      EXPECT_LT(arma::abs(means[l][k] - arma::mean(rows, 0)).max(), 1e-14);
    }
}

// The weights read are the pass's: for the first block, recomputed here from the embeddings
// (layer norm, the head's columns of W_Q and W_K, the causal mask, softmax) within 1e-12; in
// every block and every choice, zero above the diagonal (and before the window), rows summing
// to 1.
TEST(AttentionWeights, AreTheWeightsTheForwardPassUses) {
  const gpt::TransformerWeights w = attn_test::random_model(attn_test::small_gpt(), 31);
  const gpt::HeadWeights weights = gpt::attention_weights(w, kSentence);
  const uword n = kSentence.n_elem, d_k = 2;
  arma::mat x = w.embedding.rows(kSentence) + w.position_embedding.rows(0, n - 1);
  const arma::mat a = attn::math::layer_norm(x, w.blocks[0].ln1_gamma, w.blocks[0].ln1_beta).y;
  const attn::math::MultiHeadWeights& W = w.blocks[0].attention;
  for (uword k = 0; k < 4; ++k) {
    const arma::mat Q = (a * W.W_Q).eval().each_row() + W.b_Q;
    const arma::mat K = (a * W.W_K).eval().each_row() + W.b_K;
    const arma::mat scores = Q.cols(k * d_k, (k + 1) * d_k - 1) *
                             K.cols(k * d_k, (k + 1) * d_k - 1).t() /
                             std::sqrt(static_cast<double>(d_k));
    const arma::mat expected = attn::math::masked_softmax_rows(scores, attn::math::Mask::causal(n));
    EXPECT_LT(arma::abs(weights[0][k] - expected).max(), 1e-12) << "head " << k;
  }
  for (const auto& [name, config] : every_choice()) {
    const gpt::HeadWeights all =
        gpt::attention_weights(attn_test::random_model(config, 37), kSentence);
    ASSERT_EQ(all.size(), config.layers) << name;
    for (const std::vector<arma::mat>& layer : all) {
      ASSERT_EQ(layer.size(), config.heads) << name;
      for (const arma::mat& head : layer) {
        ASSERT_EQ(head.n_rows, n);
        ASSERT_EQ(head.n_cols, n);
        EXPECT_LT(arma::abs(arma::sum(head, 1) - 1.0).max(), 1e-12) << name;
        for (uword i = 0; i < n; ++i)
          for (uword j = 0; j < n; ++j) {
            const bool visible =
                j <= i && (config.sliding_window == 0 || i - j < config.sliding_window);
            if (!visible) {
              EXPECT_EQ(head(i, j), 0.0) << name << " (" << i << ", " << j << ")";
            }
          }
      }
    }
  }
}

// The weights of a packed pass's second sentence are the weights of that sentence alone.
TEST(AttentionWeights, OfAPackedSentenceAreThoseOfTheSentenceAlone) {
  const gpt::TransformerWeights w = attn_test::random_model(attn_test::small_gpt(), 41);
  const gpt::HeadWeights packed =
      gpt::attention_weights(gpt::transformer_forward(w, kPacked, kStarts), 1);
  const gpt::HeadWeights alone = gpt::attention_weights(w, arma::uvec{3, 3, 5});
  for (uword l = 0; l < 2; ++l)
    for (uword k = 0; k < 4; ++k)
      EXPECT_LT(arma::abs(packed[l][k] - alone[l][k]).max(), 1e-14);
}

TEST(HeadMask, RefusesHeadsTheModelDoesNotHaveAndRowsOfTheWrongWidth) {
  const gpt::TransformerWeights w = attn_test::random_model(attn_test::small_gpt(), 43);
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { gpt::transformer_forward(w, kSentence, {0}, gpt::HeadMask{}.zero(2, 0)); },
      "HeadMask: head 0 of block 2 is not one of the model's 2 blocks of 4 heads"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { gpt::transformer_forward(w, kSentence, {0}, gpt::HeadMask{}.zero(0, 4)); },
      "head 4 of block 0 is not one of"));
  EXPECT_TRUE(ThrowsNaming<attn::math::ShapeError>(
      [&] {
        gpt::transformer_forward(w, kSentence, {0},
                                 gpt::HeadMask{}.replace(1, 1, arma::rowvec{1.0, 2.0, 3.0}));
      },
      "HeadMask: the row for head 1 of block 1 has 3 entries; the heads are 2 wide"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] { gpt::HeadMask{}.replace(0, 0, arma::rowvec{}); }, "is empty; zero() masks"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] {
        gpt::HeadMask{}.replace(0, 0, arma::rowvec{1.0, arma::datum::nan});
      },
      "HeadMask's row has a non-finite entry nan"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { (void)gpt::attention_weights(gpt::transformer_forward(w, kSentence, {0}), 1); },
      "attention_weights: sentence 1 of a pass over 1"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { (void)gpt::attention_weights(w, arma::uvec(7, arma::fill::ones)); },
      "attention_weights: 7 tokens; the model reads 1 to 6"));
}

// An ablation is for measuring: its forward pass has no backward pass.
TEST(HeadMask, AMaskedPassHasNoBackwardPass) {
  const gpt::TransformerWeights w = attn_test::random_model(attn_test::small_gpt(), 47);
  const gpt::TransformerForward f =
      gpt::transformer_forward(w, kSentence, {0}, gpt::HeadMask{}.zero(1, 3));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] {
        gpt::transformer_backward(w, kSentence, {0}, f, arma::mat(arma::size(f.logits)).ones());
      },
      "the forward pass masked heads; an ablation has no backward pass"));
  EXPECT_EQ(gpt::HeadMask{}.zero(1, 3).zero(0, 1).masked(),
            (std::vector<std::pair<uword, uword>>{{0, 1}, {1, 3}}));
}

// Patterns made by hand, n = 5: each profile figure is what its definition gives.
arma::mat pattern(const std::function<double(uword, uword)>& weight, uword n = 5) {
  arma::mat A(n, n, arma::fill::zeros);
  for (uword i = 0; i < n; ++i)
    for (uword j = 0; j <= i; ++j)
      A(i, j) = weight(i, j);
  return A;
}

// A text of 14 tokens, each standing for 1 to 3 bytes.
const attn::gpt::TokenText kText{.tokens = {1, 4, 2, 6, 0, 3, 3, 3, 5, 6, 1, 9, 10, 7},
                                 .lengths = {1, 2, 3, 1, 1, 2, 3, 1, 2, 1, 3, 2, 1, 1}};

// The definition, window by window: its tokens' cost predicted from the window's tokens before
// each (sentence_logits() of the window alone), over the bytes they stand for.
double bits_of_window(const gpt::TransformerWeights& w, uword start, uword length,
                      const gpt::HeadMask& mask) {
  const arma::mat logits =
      gpt::sentence_logits(w, kText.tokens.subvec(start, start + length - 1), mask);
  const arma::uvec targets = kText.tokens.subvec(start + 1, start + length);
  const double nats = attn::math::cross_entropy(logits, targets).loss * static_cast<double>(length);
  const double bytes =
      static_cast<double>(arma::accu(kText.lengths.subvec(start + 1, start + length)));
  return nats / (bytes * std::numbers::ln2);
}

// The text's tokens start ... start + length, as a text of its own.
attn::gpt::TokenText slice(uword start, uword length) {
  return {.tokens = kText.tokens.subvec(start, start + length),
          .lengths = kText.lengths.subvec(start, start + length)};
}

// Each window's bits per byte is what bits_per_byte() reads of the window's tokens and the one
// after them, as a text of their own; with a head masked, it is the definition with the masked
// pass. Overlapping windows included, for every choice of block.
TEST(WindowBits, AreEachWindowScoredAlone) {
  const std::vector<uword> starts{0, 3, 7, 4};
  const uword length = 6;  // the models' max_length: bits_per_byte() reads one window
  for (const auto& [name, config] : every_choice()) {
    const gpt::TransformerWeights w = attn_test::random_model(config, 23);
    const gpt::HeadMask zeroed = gpt::HeadMask{}.zero(1, 2);
    const arma::vec plain = gpt::window_bits(w, kText, starts, length);
    const arma::vec ablated = gpt::window_bits(w, kText, starts, length, zeroed);
    ASSERT_EQ(plain.n_elem, starts.size()) << name;
    for (std::size_t k = 0; k < starts.size(); ++k) {
      EXPECT_NEAR(plain(k), gpt::bits_per_byte(w, slice(starts[k], length)), 1e-12) << name << k;
      EXPECT_NEAR(ablated(k), bits_of_window(w, starts[k], length, zeroed), 1e-12) << name << k;
    }
    EXPECT_GT(arma::abs(ablated - plain).max(), 1e-6) << name;  // the head did something
  }
}

TEST(WindowBits, RefusesWindowsTheTextOrTheModelCannotHold) {
  const gpt::TransformerWeights w = attn_test::random_model(attn_test::small_gpt(), 23);
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>([&] { gpt::window_bits(w, kText, {}, 4); },
                                                   "window_bits: there is no window"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { gpt::window_bits(w, kText, {0}, 0); },
      "window_bits: windows of 0 tokens; the model reads 1 to 6"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { gpt::window_bits(w, kText, {0}, 7); },
      "window_bits: windows of 7 tokens; the model reads 1 to 6"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] {
        gpt::window_bits(w, kText, {0, 8}, 6);
      },
      "window_bits: a window of 6 tokens from token 8 needs 15 tokens, the text has 14"));
}

TEST(HeadProfile, OfHeadsMadeByHand) {
  const gpt::HeadProfile self = gpt::profile(pattern([](uword i, uword j) { return i == j; }));
  EXPECT_EQ(self.self, 1.0);
  EXPECT_EQ(self.previous_token, 0.0);
  EXPECT_EQ(self.first_token, 0.0);
  EXPECT_EQ(self.mean_distance, 0.0);
  EXPECT_EQ(self.entropy, 0.0);
  const gpt::HeadProfile previous =
      gpt::profile(pattern([](uword i, uword j) { return i == 0 || j + 1 == i; }));
  EXPECT_EQ(previous.previous_token, 1.0);
  EXPECT_EQ(previous.self, 0.0);
  EXPECT_EQ(previous.first_token, 0.25);  // query 1's previous token is the first
  EXPECT_EQ(previous.mean_distance, 1.0);
  const gpt::HeadProfile sink = gpt::profile(pattern([](uword, uword j) { return j == 0; }));
  EXPECT_EQ(sink.first_token, 1.0);
  EXPECT_EQ(sink.mean_distance, 2.5);  // (1 + 2 + 3 + 4) / 4
  // Spread evenly: query i gives 1/(i+1) to each token, looks i/2 back, has entropy ln(i+1).
  const gpt::HeadProfile even =
      gpt::profile(pattern([](uword i, uword) { return 1.0 / static_cast<double>(i + 1); }));
  EXPECT_NEAR(even.mean_distance, (0.5 + 1.0 + 1.5 + 2.0) / 4, 1e-15);
  EXPECT_NEAR(even.entropy, (std::log(2.0) + std::log(3.0) + std::log(4.0) + std::log(5.0)) / 4,
              1e-15);
  EXPECT_NEAR(even.previous_token, (1.0 / 2 + 1.0 / 3 + 1.0 / 4 + 1.0 / 5) / 4, 1e-15);
}

// A segment of 3 tokens from row 1, repeated from row 4 (rows 1 2 3 | 4 5 6): an induction
// head at row 4 + k looks at row 2 + k; a previous-token head scores 0.
TEST(InductionScore, IsOneForAnInductionHeadAndZeroForAPreviousTokenHead) {
  const uword first = 1, period = 3, n = 7;
  const arma::mat induction = pattern(
      [&](uword i, uword j) { return i >= first + period ? j + period == i + 1 : j == i; }, n);
  EXPECT_EQ(gpt::induction_score(induction, first, period), 1.0);
  const arma::mat previous = pattern([](uword i, uword j) { return i == 0 || j + 1 == i; }, n);
  EXPECT_EQ(gpt::induction_score(previous, first, period), 0.0);
  const arma::mat even =
      pattern([](uword i, uword) { return 1.0 / static_cast<double>(i + 1); }, n);
  EXPECT_NEAR(gpt::induction_score(even, first, period), (1.0 / 5 + 1.0 / 6 + 1.0 / 7) / 3, 1e-15);
}

TEST(HeadProfile, RefusesWeightsThatAreNotAHeads) {
  EXPECT_TRUE(ThrowsNaming<attn::math::ShapeError>(
      [] { (void)gpt::profile(arma::mat(3, 4, arma::fill::zeros)); },
      "profile: the weights are (3 × 4); they need to be square, with 2 rows or more"));
  EXPECT_TRUE(ThrowsNaming<attn::math::ShapeError>(
      [] { (void)gpt::profile(arma::mat(1, 1, arma::fill::ones)); }, "2 rows or more"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] {
        (void)gpt::profile(arma::mat{{1, 0}, {-0.5, 1.5}});
      },
      "the weights hold -0.5"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] {
        (void)gpt::profile(arma::mat{{1, 0}, {arma::datum::nan, 1}});
      },
      "non-finite"));
  EXPECT_TRUE(ThrowsNaming<attn::math::ShapeError>(
      [] { (void)gpt::induction_score(arma::mat(6, 6, arma::fill::eye), 1, 3); },
      "induction_score: the weights are (6 × 6); they need to be square, with 7 rows or more"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] { (void)gpt::induction_score(arma::mat(6, 6, arma::fill::eye), 0, 0); },
      "the repeated segment has no token"));
}

}  // namespace
