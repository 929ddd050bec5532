// The fast form of streaming attention (attn::fast::streaming_attention) against the readable
// one (attn::math::streaming_attention, whose tests hold it to attend()): the same numbers on many
// shapes, block sizes and masks, whatever the number of threads; the same refusals in the same
// words; and its vectorised exponential within a relative 2ε of std::exp (ε the precision's
// machine epsilon). Its single-precision form against its double-precision form, on the same
// (float) inputs: equal within float's rounding.
#include <attn/fast/streaming.hpp>
#include <attn/math/compare.hpp>
#include <attn/math/streaming.hpp>
#include <attn/math/validate.hpp>

#include <gtest/gtest.h>

#include "normal_inputs.hpp"

#include <omp.h>

#include <cmath>
#include <functional>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

namespace {

using attn::math::relative_gap;

struct Case {
  arma::uword n, m, d;                 // queries, keys, width
  attn::math::StreamingBlocks blocks;  // queries and keys per block
  attn::math::StreamingMask mask;      // causal, or padding from key_length on
};

// How GoogleTest (and so ctest's list) names a case: "n 300 m 517 d 64 blocks 128x256 padding
// from 259" rather than the bytes of the struct.
void PrintTo(const Case& c, std::ostream* os) {
  *os << "n " << c.n << " m " << c.m << " d " << c.d << " blocks " << c.blocks.queries << "x"
      << c.blocks.keys;
  if (c.mask.causal)
    *os << " causal";
  if (c.mask.key_length > 0)
    *os << " padding from " << c.mask.key_length;
}

// The exception a call throws, as its type and message ("accepted" if it throws none).
template <typename Run>
std::string refusal(const Run& run) {
  try {
    run();
  } catch (const attn::math::ShapeError& e) {
    return std::string("ShapeError: ") + e.what();
  } catch (const attn::math::InputError& e) {
    return std::string("InputError: ") + e.what();
  }
  return "accepted";
}

class FastStreaming : public ::testing::TestWithParam<Case> {};

TEST_P(FastStreaming, EqualsTheReadableForm) {
  const Case c = GetParam();
  const attn_test::Normals draw(c.n * 1000 + c.m * 10 + c.d);
  const arma::mat Q = draw.normal(c.n, c.d), K = draw.normal(c.m, c.d), V = draw.normal(c.m, 3);
  const double scale = 1.0 / std::sqrt(static_cast<double>(c.d));
  const attn::math::StreamingAttention readable =
      attn::math::streaming_attention(Q, K, V, scale, c.mask, c.blocks);
  const attn::math::StreamingAttention fast =
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
                      Case{600, 600, 16, {128, 256}, {}},
                      // causal with float's blocks: the diagonal in steps narrower than a block
                      Case{700, 700, 16, {256, 512}, {true, 0}},
                      Case{700, 700, 16, {256, 512}, {true, 450}}));

TEST(FastStreaming, ScoresNear700NeitherOverflowNorVanish) {
  const attn_test::Normals draw(51);
  arma::mat Q = draw.normal(9, 2), K = draw.normal(12, 2);
  const arma::mat V = draw.normal(12, 2);
  Q.col(0).fill(35.0);
  K.col(0).fill(20.0);  // scores about 700
  for (double sign : {1.0, -1.0}) {
    const arma::mat fast = attn::fast::streaming_attention(Q * sign, K, V, 1.0, {}, {4, 5}).output;
    const arma::mat readable =
        attn::math::streaming_attention(Q * sign, K, V, 1.0, {}, {4, 5}).output;
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
  using Form = attn::math::StreamingAttention (*)(
      const arma::mat&, const arma::mat&, const arma::mat&, double,
      const attn::math::StreamingMask&, const attn::math::StreamingBlocks&);
  using Call = std::function<attn::math::StreamingAttention(Form)>;
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
  for (std::size_t i = 0; i < refused.size(); ++i) {
    const std::string readable =
        refusal([&] { refused[i](Form{&attn::math::streaming_attention}); });
    EXPECT_NE(readable, "accepted") << "case " << i;
    EXPECT_EQ(refusal([&] { refused[i](Form{&attn::fast::streaming_attention}); }), readable)
        << "case " << i;
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

// --- single precision ----------------------------------------------------------------------

// The inputs in float, and the same numbers in double: the double-precision result on them is
// what the float one is held to, so that only the kernel's own rounding is measured.
struct FloatInputs {
  arma::fmat Q, K, V;
  arma::mat Qd() const { return arma::conv_to<arma::mat>::from(Q); }
  arma::mat Kd() const { return arma::conv_to<arma::mat>::from(K); }
  arma::mat Vd() const { return arma::conv_to<arma::mat>::from(V); }
};

FloatInputs float_inputs(const Case& c) {
  const attn_test::Normals draw(c.n * 1000 + c.m * 10 + c.d);
  return {arma::conv_to<arma::fmat>::from(draw.normal(c.n, c.d)),
          arma::conv_to<arma::fmat>::from(draw.normal(c.m, c.d)),
          arma::conv_to<arma::fmat>::from(draw.normal(c.m, 3))};
}

// Runs the float form (single) or the double form on the same inputs, for the refusal test.
void call(bool single, const arma::fmat& Q, const arma::fmat& K, const arma::fmat& V, double scale,
          const attn::math::StreamingBlocks& blocks) {
  if (single)
    attn::fast::streaming_attention(Q, K, V, scale, {}, blocks);
  else
    attn::fast::streaming_attention(arma::conv_to<arma::mat>::from(Q),
                                    arma::conv_to<arma::mat>::from(K),
                                    arma::conv_to<arma::mat>::from(V), scale, {}, blocks);
}

// Float's unit roundoff is 6e-8; each score carries about d of them, and the exponentials pass
// them on. Measured on these shapes and on n = m = 16384 the gap stays below 1e-6 for
// c = 1/√d; the tolerance leaves ten times that.
constexpr double kFloatTolerance = 1e-5;

class FastStreamingFloat : public ::testing::TestWithParam<Case> {};

TEST_P(FastStreamingFloat, IsTheDoubleResultWithinFloatsRounding) {
  const Case c = GetParam();
  const FloatInputs in = float_inputs(c);
  const double scale = 1.0 / std::sqrt(static_cast<double>(c.d));
  const attn::math::StreamingAttentionF single =
      attn::fast::streaming_attention(in.Q, in.K, in.V, scale, c.mask, c.blocks);
  const attn::math::StreamingAttention twice =
      attn::fast::streaming_attention(in.Qd(), in.Kd(), in.Vd(), scale, c.mask, c.blocks);
  EXPECT_LE(relative_gap(arma::conv_to<arma::mat>::from(single.output), twice.output),
            kFloatTolerance);
  EXPECT_LE(arma::abs(arma::conv_to<arma::vec>::from(single.log_sum_exp) - twice.log_sum_exp).max(),
            kFloatTolerance);
}

INSTANTIATE_TEST_SUITE_P(Shapes, FastStreamingFloat,
                         ::testing::Values(Case{1, 1, 4, {64, 128}, {}}, Case{7, 1, 3, {2, 5}, {}},
                                           Case{33, 33, 8, {5, 7}, {true, 0}},
                                           Case{33, 40, 8, {4, 3}, {false, 20}},
                                           Case{300, 300, 64, {128, 256}, {true, 0}},
                                           Case{300, 517, 64, {128, 256}, {false, 259}},
                                           Case{600, 600, 16, {128, 256}, {}},
                                           Case{700, 700, 16, {256, 512}, {true, 0}},
                                           Case{700, 700, 16, {256, 512}, {true, 450}},
                                           Case{64, 5000, 64, {64, 256}, {}}));

// Scores of 1e36, near float's largest (3.4e38), are shifted by their maximum like any others;
// scores of 1e40 overflow float (not double) and are refused as an overflow.
TEST(FastStreamingFloat, ScoresNearFloatsLargestAreShiftedAndBeyondItRefused) {
  const attn_test::Normals draw(52);
  const arma::fmat V = arma::conv_to<arma::fmat>::from(draw.normal(12, 2));
  arma::fmat Q = arma::conv_to<arma::fmat>::from(draw.normal(9, 2));
  arma::fmat K = arma::conv_to<arma::fmat>::from(draw.normal(12, 2));
  for (float sign : {1.0f, -1.0f}) {
    Q.col(0).fill(sign * 1e18f);
    K.col(0).fill(1e18f);  // every score ±1e36: equal in float and in double, so the weights are
                           // uniform and Z is the mean of V's rows
    const arma::fmat Z = attn::fast::streaming_attention(Q, K, V, 1.0, {}, {4, 5}).output;
    const arma::fmat mean = arma::repmat(arma::mean(V, 0), 9, 1);
    EXPECT_LE(arma::abs(Z - mean).max(), 1e-6f);
  }
  Q.col(0).fill(1e20f);
  K.col(0).fill(1e20f);  // scores 1e40: infinite in float
  EXPECT_THROW(
      {
        try {
          attn::fast::streaming_attention(Q, K, V, 1.0);
        } catch (const attn::math::InputError& e) {
          EXPECT_NE(std::string(e.what()).find("overflowed to infinity"), std::string::npos);
          throw;
        }
      },
      attn::math::InputError);
  const arma::mat in_double =
      attn::fast::streaming_attention(arma::conv_to<arma::mat>::from(Q),
                                      arma::conv_to<arma::mat>::from(K),
                                      arma::conv_to<arma::mat>::from(V), 1.0)
          .output;
  EXPECT_TRUE(in_double.is_finite());  // 1e40 is an ordinary double
}

// What the double-precision form refuses in float inputs, the float form refuses in its words.
TEST(FastStreamingFloat, RefusesInTheDoubleFormsWords) {
  const arma::fmat Q(3, 2, arma::fill::ones), K(4, 2, arma::fill::ones), V(4, 1, arma::fill::ones);
  arma::fmat with_nan = Q;
  with_nan(1, 1) = arma::datum::nan;
  arma::fmat with_infinity = V;
  with_infinity(3, 0) = arma::datum::inf;
  const std::vector<std::function<void(bool)>> refused = {
      [&](bool single) {
        call(single, Q, K, V, 1.0, {0, 4});
      },
      [&](bool single) { call(single, Q, arma::fmat(4, 3, arma::fill::ones), V, 1.0, {}); },
      [&](bool single) { call(single, Q, K, arma::fmat(5, 1, arma::fill::ones), 1.0, {}); },
      [&](bool single) { call(single, with_nan, K, V, 1.0, {}); },
      [&](bool single) { call(single, Q, K, with_infinity, 1.0, {}); },
      [&](bool single) { call(single, arma::fmat(), K, V, 1.0, {}); },
      [&](bool single) { call(single, Q, K, V, std::numeric_limits<double>::quiet_NaN(), {}); },
  };
  for (std::size_t i = 0; i < refused.size(); ++i) {
    const std::string in_double = refusal([&] { refused[i](false); });
    EXPECT_NE(in_double, "accepted") << "case " << i;
    EXPECT_EQ(refusal([&] { refused[i](true); }), in_double) << "case " << i;
  }
}

TEST(FastStreamingFloat, OneThreadAndManyGiveTheSameNumbers) {
  const FloatInputs in = float_inputs(Case{520, 520, 16, {}, {}});
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const arma::fmat one = attn::fast::streaming_attention(in.Q, in.K, in.V, 0.25).output;
  omp_set_num_threads(std::max(2, threads));
  const arma::fmat many = attn::fast::streaming_attention(in.Q, in.K, in.V, 0.25).output;
  omp_set_num_threads(threads);
  EXPECT_TRUE(arma::approx_equal(one, many, "absdiff", 0.0f));
}

TEST(ExpShifted, WithinTwoEpsilonOfStdExp) {
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

TEST(ExpShifted, PositiveUpTo709AndNotANumberAsDocumented) {
  // The online softmax never passes t > 0; up to 709 the kernel still gives e^t.
  std::vector<double> x = {709.0, std::numeric_limits<double>::quiet_NaN(), 1.0};
  attn::fast::exp_shifted(x.data(), x.size(), 0.0);
  EXPECT_NEAR(x[0], std::exp(709.0), 2e-16 * std::exp(709.0));
  EXPECT_TRUE(std::isnan(x[1]));
  EXPECT_NEAR(x[2], std::exp(1.0), 4.5e-16 * std::exp(1.0));
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

TEST(ExpShifted, ReturnsTheSumOfTheExponentials) {
  std::vector<double> x = {0.5, -1.0, -std::numeric_limits<double>::infinity(), -3.0};
  const double sum = attn::fast::exp_shifted(x.data(), x.size(), 0.5);
  EXPECT_NEAR(sum, x[0] + x[1] + x[2] + x[3], 1e-15);
  EXPECT_NEAR(sum, 1.0 + std::exp(-1.5) + std::exp(-3.5), 1e-15);
}

TEST(ExpShiftedFloat, WithinTwoEpsilonOfStdExp) {
  std::vector<float> t = {0.0f,         -0.0f, -1e-30f, -1e-45f, -0.34657359f,
                          -0.34657360f, -1.0f, -86.9f,  -87.0f};
  const attn_test::Normals draw(72);
  const arma::vec u = arma::abs(draw.normal(20000, 1).col(0));
  for (double v : u)
    t.push_back(static_cast<float>(-v * 10.0));  // most in [−30, 0]
  for (double v : u)
    t.push_back(static_cast<float>(-std::fmod(v * 100.0, 87.0)));
  const float shift = 0.0f;
  std::vector<float> x = t;
  attn::fast::exp_shifted(x.data(), x.size(), shift);
  for (std::size_t i = 0; i < t.size(); ++i) {
    const float want = std::exp(t[i]);
    EXPECT_LE(std::abs(x[i] - want), 2.0f * std::numeric_limits<float>::epsilon() * want)
        << "e^" << t[i];
  }
}

TEST(ExpShiftedFloat, EdgesAsDocumented) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x = {88.0f, 0.0f,   std::numeric_limits<float>::quiet_NaN(),
                          -inf,  -87.5f, -1e30f};
  const float sum = attn::fast::exp_shifted(x.data(), 2, 0.0f);  // the first two
  attn::fast::exp_shifted(x.data() + 2, x.size() - 2, 0.0f);
  EXPECT_NEAR(x[0], std::exp(88.0f), 2.5e-7f * std::exp(88.0f));  // the largest the kernel covers
  EXPECT_EQ(x[1], 1.0f);
  EXPECT_EQ(sum, x[0] + x[1]);
  EXPECT_TRUE(std::isnan(x[2]));
  EXPECT_EQ(x[3], 0.0f);  // a masked score
  EXPECT_EQ(x[4], 0.0f);  // below −87: flushed
  EXPECT_EQ(x[5], 0.0f);
}

}  // namespace
