// Bad numbers, defined behaviour (issue 17): every public function of the math layer, given a
// NaN, an infinity, an empty operand or mismatched shapes, either throws an exception whose
// message names the operand, or returns the result its header documents. Never a silent NaN.
#include <attn/math/attention.hpp>
#include <attn/math/backward.hpp>
#include <attn/math/compare.hpp>
#include <attn/math/gradient_check.hpp>
#include <attn/math/kv_cache.hpp>
#include <attn/math/layers.hpp>
#include <attn/math/mask.hpp>
#include <attn/math/multi_head.hpp>
#include <attn/math/positions.hpp>
#include <attn/math/softmax.hpp>
#include <attn/math/streaming.hpp>
#include <attn/math/training.hpp>
#include <attn/math/validate.hpp>

#include "bad_input.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace {

using attn_bad_input::kInf;
using attn_bad_input::kNaN;
using attn_bad_input::ones;
using attn_bad_input::ThrowsNaming;
using attn_bad_input::tokens;
using attn_bad_input::with;

TEST(BadInput, SoftmaxRejectsInfinitiesAndEmptyInWholeAndRow) {
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] { attn::math::softmax_whole(with(ones(2, 2), 0, 1, -kInf)); }, "softmax input"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] { attn::math::softmax_whole(arma::mat(0, 4)); }, "softmax input is empty"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] {
        attn::math::softmax(arma::rowvec{1.0, kNaN});
      },
      "softmax input"));
}

TEST(BadInput, AttentionScoresRejectANonFiniteScale) {
  const arma::mat Q = tokens(2, 3), K = tokens(4, 3);
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { attn::math::attention_scores(Q, K, kNaN); }, "scale"));
  EXPECT_TRUE(
      ThrowsNaming<attn::math::InputError>([&] { attn::math::attend(Q, K, K, kInf); }, "scale"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { attn::math::streaming_attention(Q, K, K, -kInf); }, "scale"));
}

TEST(BadInput, ScoresThatOverflowAreRejectedNotPassedOn) {
  const arma::mat big{{1e200, 1e200}};  // finite, but 1e200 · 1e200 is not
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { attn::math::attention_scores(big, big, 1.0); }, "scores S = c Q K^T"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { attn::math::streaming_attention(big, big, ones(1, 2), 1.0); }, "overflowed"));
  attn::math::KVCache cache(2, 1);
  cache.append(big, arma::rowvec{1.0});
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>([&] { cache.attend(big, 1.0); }, "scores"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] {
        cache.attend(arma::rowvec{1.0, 1.0}, kNaN);
      },
      "scale"));
}

TEST(BadInput, AttendNamesTheOperandThatIsBad) {
  const arma::mat Q = tokens(2, 3), K = tokens(4, 3), V = tokens(4, 2);
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { attn::math::attend(Q, K, with(V, 3, 1, kNaN), 1.0); },
      "V has a non-finite entry nan at row 3, column 1"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { attn::math::attend(Q, with(K, 0, 0, -kInf), V, 1.0); },
      "K has a non-finite entry -inf"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { attn::math::attend(arma::mat(0, 3), K, V, 1.0); }, "Q is empty"));
  EXPECT_TRUE(ThrowsNaming<attn::math::ShapeError>(
      [&] { attn::math::attend(Q, tokens(4, 2), V, 1.0); }, "Q is (2 × 3) and K is (4 × 2)"));
}

TEST(BadInput, MaskedAttentionNamesBothShapesOfAMismatch) {
  const arma::mat Q = tokens(2, 3), K = tokens(4, 3), V = tokens(4, 2);
  EXPECT_TRUE(ThrowsNaming<attn::math::ShapeError>(
      [&] { attn::math::attend(Q, K, V, 1.0, attn::math::Mask::causal(3)); },
      "scores (2 × 4) and mask (3 × 3)"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] {
        attn::math::masked_softmax_rows(with(ones(3, 3), 0, 2, kNaN), attn::math::Mask::causal(3));
      },
      "softmax input"));
}

TEST(BadInput, MasksOfNoQueryOrNoKeyAreRejected) {
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>([] { attn::math::Mask::none(0, 3); },
                                                   "at least one query"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>([] { attn::math::Mask::padding(0, 3, 2); },
                                                   "at least one query"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] { attn::math::Mask::from_blocked(arma::umat(2, 0)); }, "at least one query and one key"));
}

TEST(BadInput, ProjectNamesANonFiniteWeightMatrix) {
  const attn::math::Projections W{ones(3, 2), with(ones(3, 2), 2, 1, kNaN), ones(3, 2)};
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>([&] { attn::math::project(tokens(4, 3), W); },
                                                   "W_K has a non-finite entry nan"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { attn::math::self_attention(tokens(4, 3), W); }, "W_K"));
}

TEST(BadInput, StrongestOtherAndRawAttentionForRejectBadGridsAndRows) {
  EXPECT_TRUE(ThrowsNaming<attn::math::ShapeError>(
      [] { attn::math::strongest_other(arma::mat(), 0); }, "(0 × 0)"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] { attn::math::strongest_other(with(ones(3, 3), 2, 0, kNaN), 2); }, "grid"));
  EXPECT_TRUE(ThrowsNaming<std::out_of_range>(
      [] { attn::math::raw_attention_for(arma::mat(0, 2), 0); }, "not a row of E (0 × 2)"));
}

TEST(BadInput, MultiHeadRejectsNonFiniteInputsAndWeights) {
  attn::math::MultiHeadWeights W{
      2, 0, arma::eye(4, 4), arma::eye(4, 4), arma::eye(4, 4), arma::eye(4, 4), {}, {}, {}, {}};
  const arma::mat X = tokens(3, 4);
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { attn::math::multi_head_attention(with(X, 1, 1, kNaN), X, X, W); }, "query"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { attn::math::multi_head_attention(X, X, with(X, 0, 3, kInf), W); }, "value"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { attn::math::multi_head_attention(X, arma::mat(0, 4), arma::mat(0, 4), W); },
      "key is empty"));
  W.W_O(3, 3) = kNaN;  // before this check, the output was silently NaN
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { attn::math::multi_head_attention(X, X, X, W); }, "W_O has a non-finite entry"));
  W.W_O = arma::eye(4, 4);
  W.b_Q = W.b_K = W.b_V = W.b_O = arma::rowvec(4, arma::fill::zeros);
  W.b_O(0) = -kInf;
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { attn::math::multi_head_attention(X, X, X, W); }, "b_O"));
}

TEST(BadInput, MultiHeadBackwardChecksItsGradientAndItsForwardPass) {
  const attn::math::MultiHeadWeights W{
      2, 0, arma::eye(4, 4), arma::eye(4, 4), arma::eye(4, 4), arma::eye(4, 4), {}, {}, {}, {}};
  const arma::mat X = tokens(3, 4);
  const attn::math::MultiHead forward = attn::math::multi_head_attention(X, X, X, W);
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { attn::math::multi_head_backward(X, X, X, W, forward, with(ones(3, 4), 2, 2, kNaN)); },
      "d_output"));
  attn::math::MultiHead fewer = forward;
  fewer.heads.pop_back();  // used to be read past its end
  EXPECT_TRUE(ThrowsNaming<attn::math::ShapeError>(
      [&] { attn::math::multi_head_backward(X, X, X, W, fewer, ones(3, 4)); }, "1 heads, W has 2"));
  EXPECT_TRUE(ThrowsNaming<attn::math::ShapeError>(
      [&] { attn::math::multi_head_backward(X, tokens(5, 4), X, W, forward, ones(3, 4)); },
      "key is (5 × 4)"));
}

TEST(BadInput, HeadsNeedAtLeastOneColumn) {
  // split_heads of a matrix with no column used to index column −1.
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] { attn::math::split_heads(arma::mat(3, 0), 1); }, "d_model = 0"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] { attn::math::multi_head_parameters(0, 1, true); }, "d_model = 0"));
  // Documented result: entries are copied as they are, NaN included.
  const std::vector<arma::mat> blocks = attn::math::split_heads(with(ones(2, 4), 1, 3, kNaN), 2);
  EXPECT_TRUE(std::isnan(blocks[1](1, 1)));
  EXPECT_TRUE(std::isnan(attn::math::concat_heads(blocks)(1, 3)));
}

TEST(BadInput, AverageWeightsNamesHeadsOfDifferentShapes) {
  attn::math::MultiHead result;
  result.heads.push_back({ones(2, 3), ones(2, 3), ones(2, 1)});
  result.heads.push_back({ones(2, 2), ones(2, 2), ones(2, 1)});
  EXPECT_TRUE(ThrowsNaming<attn::math::ShapeError>([&] { attn::math::average_weights(result); },
                                                   "head 1 has weights (2 × 2), head 0 (2 × 3)"));
}

TEST(BadInput, MergeRejectsNonFiniteAndEmptyParts) {
  const attn::math::StreamingAttention good{ones(2, 3), arma::vec{0.5, 1.0}};
  const attn::math::StreamingAttention nan_lse{ones(2, 3), arma::vec{kNaN, 1.0}};
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>([&] { attn::math::merge(good, nan_lse); },
                                                   "b.log_sum_exp"));
  const attn::math::StreamingAttention inf_out{with(ones(2, 3), 0, 0, kInf), arma::vec{0.5, 1.0}};
  EXPECT_TRUE(
      ThrowsNaming<attn::math::InputError>([&] { attn::math::merge(inf_out, good); }, "a.output"));
  const attn::math::StreamingAttention empty{arma::mat(0, 3), arma::vec()};
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>([&] { attn::math::merge(empty, empty); },
                                                   "a.output is empty"));
}

TEST(BadInput, RotaryRejectsEmptyInputAndNamesUpstream) {
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] { attn::math::rotary(arma::mat(0, 4), arma::vec()); }, "rotary: X is empty"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] {
        attn::math::rotary_backward(with(ones(2, 2), 0, 1, kNaN), arma::vec{0.0, 1.0});
      },
      "rotary_backward: upstream"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>([] { attn::math::rotary_frequencies(4, kInf); },
                                                   "base inf"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] { attn::math::sinusoidal_positions(3, 4, kNaN); }, "base nan"));
}

TEST(BadInput, PositionMeasuresRejectEmptyRangesAndBadShifts) {
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>([] { attn::math::largest_shift_error(0, 5, 8); },
                                                   "0 positions and 5 shifts"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>([] { attn::math::largest_shift_error(5, 0, 8); },
                                                   "5 positions and 0 shifts"));
  const arma::mat Q = tokens(3, 4);
  const arma::vec m{0.0, 1.0, 2.0};
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { attn::math::rotary_shift_error(Q, Q, m, kNaN); }, "shift nan"));
  EXPECT_TRUE(ThrowsNaming<attn::math::ShapeError>(
      [&] { attn::math::rotary_shift_error(Q, tokens(2, 4), m, 1.0); },
      "Q is (3 × 4) and K is (2 × 4)"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { attn::math::rotary_layout_error(with(Q, 0, 0, kInf), Q, m, m); }, "rotary: X"));
}

TEST(BadInput, LayerNormRejectsNonFiniteParameters) {
  const arma::mat x = tokens(2, 3);
  const arma::rowvec g(3, arma::fill::ones), b(3, arma::fill::zeros);
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] {
        attn::math::layer_norm(x, arma::rowvec{1.0, kNaN, 1.0}, b);
      },
      "gamma"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] {
        attn::math::layer_norm(x, g, arma::rowvec{0.0, 0.0, -kInf});
      },
      "beta"));
  EXPECT_TRUE(
      ThrowsNaming<attn::math::InputError>([&] { attn::math::layer_norm(x, g, b, kInf); }, "eps"));
  EXPECT_TRUE(
      ThrowsNaming<attn::math::InputError>([&] { attn::math::layer_norm(x, g, b, kNaN); }, "eps"));
  const attn::math::LayerNorm forward = attn::math::layer_norm(x, g, b);
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { attn::math::layer_norm_backward(forward, g, with(ones(2, 3), 1, 2, kNaN)); }, "dy"));
}

TEST(BadInput, GeluAndNormalCdfHaveDocumentedValuesAtNaNAndInfinity) {
  const arma::mat x{{kNaN, kInf, -kInf, 0.0}};
  const arma::mat g = attn::math::gelu(x), p = attn::math::normal_cdf(x);
  EXPECT_TRUE(std::isnan(g(0, 0)));
  EXPECT_EQ(g(0, 1), kInf);
  EXPECT_EQ(g(0, 2), 0.0);  // the limit; x Φ(x) used to give −∞ · 0 = NaN
  EXPECT_EQ(g(0, 3), 0.0);
  EXPECT_TRUE(std::isnan(p(0, 0)));
  EXPECT_EQ(p(0, 1), 1.0);
  EXPECT_EQ(p(0, 2), 0.0);
  EXPECT_TRUE(attn::math::gelu(arma::mat(0, 3)).is_empty());
}

TEST(BadInput, FeedForwardNamesANonFiniteWeightAndGradient) {
  attn::math::FeedForwardWeights W{ones(3, 5), arma::rowvec(5, arma::fill::zeros), ones(5, 3),
                                   arma::rowvec(3, arma::fill::zeros)};
  const arma::mat x = tokens(2, 3);
  W.b2(1) = kNaN;  // before this check, y was silently NaN in column 1
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>([&] { attn::math::feed_forward(x, W); }, "b2"));
  W.b2(1) = 0.0;
  W.W1(0, 0) = kInf;
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>([&] { attn::math::feed_forward(x, W); }, "W1"));
  W.W1(0, 0) = 1.0;
  const attn::math::FeedForward forward = attn::math::feed_forward(x, W);
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { attn::math::feed_forward_backward(x, W, forward, with(ones(2, 3), 0, 0, kNaN)); },
      "dy"));
  EXPECT_TRUE(ThrowsNaming<attn::math::ShapeError>(
      [&] { attn::math::feed_forward_backward(tokens(4, 3), W, forward, ones(2, 3)); },
      "x is (4 × 3)"));
}

TEST(BadInput, CrossEntropyRejectsInfiniteLogits) {
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] {
        attn::math::cross_entropy(arma::mat{{0.0, -kInf}}, arma::uvec{0});
      },
      "logits"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] { attn::math::cross_entropy(arma::mat(0, 3), arma::uvec()); }, "logits is empty"));
}

TEST(BadInput, SoftmaxBackwardAndJacobianRejectNaN) {
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] {
        attn::math::softmax_jacobian(arma::rowvec{0.5, kNaN});
      },
      "weights"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] { attn::math::softmax_jacobian(arma::rowvec()); }, "weights is empty"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] { attn::math::softmax_rows_backward(ones(2, 2), with(ones(2, 2), 1, 0, kInf)); },
      "dW has"));
}

TEST(BadInput, AttendBackwardChecksItsGradientScaleAndShapes) {
  const arma::mat Q = tokens(2, 3), K = tokens(4, 3), V = tokens(4, 2);
  const attn::math::Attention forward = attn::math::attend(Q, K, V, 0.5);
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { attn::math::attend_backward(Q, K, V, forward, with(ones(2, 2), 0, 1, kNaN), 0.5); },
      "dZ"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { attn::math::attend_backward(Q, K, V, forward, ones(2, 2), kNaN); }, "scale"));
  EXPECT_TRUE(ThrowsNaming<attn::math::ShapeError>(
      [&] { attn::math::weights_backward(Q, tokens(5, 3), forward.weights, ones(2, 4), 0.5); },
      "K is (5 × 3)"));
  EXPECT_TRUE(ThrowsNaming<attn::math::ShapeError>(
      [&] {
        attn::math::projections_backward(tokens(3, 3), {ones(2, 3), ones(4, 3), {}});
      },
      "X is (3 × 3) and dQ is (2 × 3)"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] {
        attn::math::projections_backward(with(ones(2, 3), 1, 1, kNaN),
                                         {ones(2, 3), ones(2, 3), {}});
      },
      "X has"));
}

std::vector<attn::math::AttentionExample> one_example() {
  return {{{"a", "b", "c"}, tokens(3, 2), 0, 2}};
}

TEST(BadInput, AttentionTargetLossRejectsBadDecayWeightsAndAnInfiniteLoss) {
  const arma::mat W = arma::eye(2, 2);
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { attn::math::attention_target_loss(one_example(), W, W, kNaN); }, "weight decay nan"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { attn::math::attention_target_loss(one_example(), W, W, -1.0); }, "weight decay -1"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { attn::math::attention_target_loss(one_example(), with(W, 0, 1, kInf), W, 0.0); },
      "W_Q"));
  // Scores 1e4 apart: the target's weight is exactly 0 and the loss would be +∞, its gradient NaN.
  std::vector<attn::math::AttentionExample> far = {
      {{"a", "b"}, arma::mat{{100.0, 0.0}, {-100.0, 0.0}}, 0, 1}};
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { attn::math::attention_target_loss(far, W, W, 0.0); }, "underflowed to 0"));
}

TEST(BadInput, GradientCheckRefusesALossThatIsNotFinite) {
  const arma::mat x = ones(2, 2);
  // A NaN loss used to compare as "no error" and report a perfect gradient.
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { attn::math::check_gradient([](const arma::mat&) { return kNaN; }, x, x); },
      "loss is nan"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] {
        attn::math::check_gradient([](const arma::mat& m) { return arma::accu(m); }, x,
                                   with(x, 1, 1, kNaN));
      },
      "analytic gradient"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] {
        attn::math::check_gradient([](const arma::mat& m) { return arma::accu(m); }, x, x, 0.0);
      },
      "h = 0"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] {
        attn::math::check_gradient([](const arma::mat& m) { return arma::accu(m); }, arma::mat(),
                                   arma::mat());
      },
      "x is empty"));
}

TEST(BadInput, RelativeGapRefusesNaNInsteadOfSkippingIt) {
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] {
        attn::math::relative_gap(arma::mat{{kNaN, 1.0}}, arma::mat{{5.0, 1.0}});
      },
      "ours"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] {
        attn::math::relative_gap(arma::mat{{1.0, 2.0}}, arma::mat{{-kInf, 2.0}});
      },
      "reference"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] { attn::math::relative_gap(arma::mat(), arma::mat()); }, "ours is empty"));
}

}  // namespace
