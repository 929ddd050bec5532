// The fast form of streaming attention (attn::fast::streaming_attention) against the readable
// one (attn::streaming_attention, whose tests hold it to attend()): the same numbers on many
// shapes, block sizes and masks, whatever the number of threads; the same refusals in the same
// words; and its vectorised exponential within 2 ulp of std::exp.
#include <attn/fast/streaming.hpp>
#include <attn/math/measure.hpp>
#include <attn/math/streaming.hpp>
#include <attn/math/validate.hpp>

#include <gtest/gtest.h>

#include "normal_inputs.hpp"

#include <omp.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace {

using attn::relative_gap;

struct Case {
  arma::uword n, m, d;           // queries, keys, width
  attn::StreamingBlocks blocks;  // queries and keys per block
  attn::StreamingMask mask;      // causal, or padding from key_length on
};

class FastStreaming : public ::testing::TestWithParam<Case> {};

TEST_P(FastStreaming, EqualsTheReadableForm) {
  const Case c = GetParam();
  const attn_test::Normals draw(c.n * 1000 + c.m * 10 + c.d);
  const arma::mat Q = draw.normal(c.n, c.d), K = draw.normal(c.m, c.d), V = draw.normal(c.m, 3);
  const double scale = 1.0 / std::sqrt(static_cast<double>(c.d));
  const attn::StreamingAttention readable =
      attn::streaming_attention(Q, K, V, scale, c.mask, c.blocks);
  const attn::StreamingAttention fast =
      attn::fast::streaming_attention(Q, K, V, scale, c.mask, c.blocks);
  EXPECT_LE(relative_gap(fast.output, readable.output), 1e-12);
  EXPECT_LE(arma::abs(fast.log_sum_exp - readable.log_sum_exp).max(), 1e-12);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, FastStreaming,
    ::testing::Values(Case{1, 1, 4, {64, 128}, {}}, Case{1, 7, 3, {1, 2}, {}},
                      Case{7, 1, 3, {2, 5}, {}}, Case{33, 33, 8, {5, 7}, {true, 0}},
                      Case{33, 40, 8, {4, 3}, {false, 20}}, Case{130, 130, 4, {7, 11}, {true, 0}},
                      Case{257, 129, 64, {64, 128}, {}}, Case{300, 300, 64, {128, 256}, {true, 0}},
                      Case{300, 517, 64, {128, 256}, {false, 259}},
                      Case{600, 600, 16, {128, 256}, {}}));

TEST(FastStreaming, ScoresNear700NeitherOverflowNorVanish) {
  const attn_test::Normals draw(51);
  arma::mat Q = draw.normal(9, 2), K = draw.normal(12, 2);
  const arma::mat V = draw.normal(12, 2);
  Q.col(0).fill(35.0);
  K.col(0).fill(20.0);  // scores about 700
  for (double sign : {1.0, -1.0}) {
    const arma::mat fast = attn::fast::streaming_attention(Q * sign, K, V, 1.0, {}, {4, 5}).output;
    const arma::mat readable = attn::streaming_attention(Q * sign, K, V, 1.0, {}, {4, 5}).output;
    EXPECT_TRUE(fast.is_finite());
    EXPECT_LE(relative_gap(fast, readable), 1e-12);
  }
}

// What the readable form refuses, the fast one refuses with the same exception and message.
TEST(FastStreaming, RefusesInTheReadableFormsWords) {
  const arma::mat Q(3, 2, arma::fill::ones), K(4, 2, arma::fill::ones), V(4, 1, arma::fill::ones);
  arma::mat with_nan = Q;
  with_nan(1, 1) = arma::datum::nan;
  const arma::mat big{{1e200, 1e200}};  // finite, but 1e200 · 1e200 is not
  using Call = std::function<attn::StreamingAttention(decltype(&attn::fast::streaming_attention))>;
  const std::vector<Call> refused = {
      [&](auto f) {
        return f(Q, K, V, 1.0, {}, {0, 4});
      },
      [&](auto f) { return f(Q, arma::mat(4, 3, arma::fill::ones), V, 1.0, {}, {}); },
      [&](auto f) { return f(Q, K, arma::mat(5, 1, arma::fill::ones), 1.0, {}, {}); },
      [&](auto f) { return f(with_nan, K, V, 1.0, {}, {}); },
      [&](auto f) { return f(Q, K, V, -std::numeric_limits<double>::infinity(), {}, {}); },
      [&](auto f) { return f(big, big, arma::mat(1, 2, arma::fill::ones), 1.0, {}, {}); },
  };
  const auto message = [](const Call& call, auto form) -> std::string {
    try {
      call(form);
    } catch (const attn::ShapeError& e) {
      return std::string("ShapeError: ") + e.what();
    } catch (const attn::InputError& e) {
      return std::string("InputError: ") + e.what();
    }
    return "accepted";
  };
  for (std::size_t i = 0; i < refused.size(); ++i) {
    const std::string readable = message(refused[i], &attn::streaming_attention);
    EXPECT_NE(readable, "accepted") << "case " << i;
    EXPECT_EQ(message(refused[i], &attn::fast::streaming_attention), readable) << "case " << i;
  }
}

TEST(FastStreaming, OneThreadAndManyGiveTheSameNumbers) {
  const attn_test::Normals draw(81);
  const arma::mat Q = draw.normal(520, 16), K = draw.normal(520, 16), V = draw.normal(520, 4);
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const arma::mat one = attn::fast::streaming_attention(Q, K, V, 0.25).output;
  omp_set_num_threads(std::max(2, threads));
  const arma::mat many = attn::fast::streaming_attention(Q, K, V, 0.25).output;
  omp_set_num_threads(threads);
  EXPECT_TRUE(arma::approx_equal(one, many, "absdiff", 0.0));  // each block is computed alike
}

TEST(ExpShifted, WithinTwoUlpOfStdExp) {
  // t = x − shift over the whole range the online softmax uses, and its edges.
  std::vector<double> t = {0.0,         -0.0, -1e-300, -5e-324, -0.34657359,
                           -0.34657360, -1.0, -707.9,  -708.0};
  const attn_test::Normals draw(71);
  const arma::vec u = arma::abs(draw.normal(20000, 1).col(0));
  for (double v : u)
    t.push_back(-v * 100.0);  // most in [−300, 0]
  for (double v : u)
    t.push_back(-std::fmod(v * 1000.0, 708.0));
  std::vector<double> x(t.size());
  const double shift = 3.5;
  for (std::size_t i = 0; i < t.size(); ++i)
    x[i] = t[i] + shift;
  attn::fast::exp_shifted(x.data(), x.size(), shift);
  for (std::size_t i = 0; i < t.size(); ++i) {
    const double want = std::exp((t[i] + shift) - shift);
    EXPECT_LE(std::abs(x[i] - want), 2.0 * std::numeric_limits<double>::epsilon() * want)
        << "e^" << t[i];
  }
}

TEST(ExpShifted, LargeAndNotANumberAsDocumented) {
  std::vector<double> x = {709.0, 709.5, std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::quiet_NaN(), 1.0};
  attn::fast::exp_shifted(x.data(), x.size(), 0.0);
  EXPECT_NEAR(x[0], std::exp(709.0), 2e-16 * std::exp(709.0));
  EXPECT_EQ(x[1], std::numeric_limits<double>::infinity());
  EXPECT_EQ(x[2], std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(x[3]));
  EXPECT_NEAR(x[4], std::exp(1.0), 4.5e-16 * std::exp(1.0));
}

TEST(ExpShifted, MaskedAndTinyScoresGiveExactlyZero) {
  std::vector<double> x = {-std::numeric_limits<double>::infinity(), -708.5, -745.2, -1e308, 0.0};
  attn::fast::exp_shifted(x.data(), x.size(), 0.0);
  EXPECT_EQ(x[0], 0.0);
  EXPECT_EQ(x[1], 0.0);
  EXPECT_EQ(x[2], 0.0);
  EXPECT_EQ(x[3], 0.0);
  EXPECT_EQ(x[4], 1.0);
}

TEST(ExpShifted, DoesNothingOnNoValuesAndGivesNaNForANaNShift) {
  double x[2] = {1.0, 2.0};
  attn::fast::exp_shifted(x, 0, 0.0);  // count 0: nothing changes
  EXPECT_EQ(x[0], 1.0);
  attn::fast::exp_shifted(x, 2, std::numeric_limits<double>::quiet_NaN());  // every value NaN
  EXPECT_TRUE(std::isnan(x[0]) && std::isnan(x[1]));
}

}  // namespace
