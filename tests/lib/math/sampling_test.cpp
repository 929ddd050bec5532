// Sampling the next token (attn::math::next_token_distribution, attn::math::sample_token): a
// hand-worked example, numpy's distributions on its fixtures
// (tests/data/generate_sampling_fixtures.py), the filters' promises for every input RapidCheck
// makes, and the errors. The tokens numpy draws need attn::numpy's generator, which this layer may
// not use: they are checked in tests/lib/book/sampling_draws_test.cpp.
#include <attn/math/sampling.hpp>
#include <attn/math/softmax.hpp>
#include <attn/math/validate.hpp>

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "bad_input.hpp"
#include "fixture_blocks.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

using attn::math::SamplingOptions;
using attn_bad_input::kInf;
using attn_bad_input::kNaN;
using attn_bad_input::ThrowsNaming;

// The largest |a - b| / |b| over the entries where b is not 0.
double largest_relative_difference(const arma::rowvec& a, const arma::rowvec& b) {
  double largest = 0.0;
  for (arma::uword i = 0; i < b.n_elem; ++i)
    if (b(i) != 0.0)
      largest = std::max(largest, std::abs(a(i) - b(i)) / std::abs(b(i)));
  return largest;
}

// The hand-worked example. Logits z = (2, 1, 1, 0); tokens 1 and 2 tie, so the order is
// 0, 1, 2, 3 (equal logits by index).
//   T = 1:  e^z = (7.389, 2.718, 2.718, 1), sum 13.826, q = (0.5344, 0.1966, 0.1966, 0.0723);
//           mass before each token along the order: 0, 0.5344, 0.7311, 0.9277.
//   top_k = 2:    tokens 0 and 1 (the tie at the 2nd logit goes to the lower index):
//                 (e², e, 0, 0) / (e² + e) = (0.7311, 0.2689, 0, 0).
//   top_p = 0.7:  token 2 has 0.7311 >= 0.7 before it: dropped, the same as top_k = 2.
//   top_p = 0.75: 0.7311 < 0.75, so token 2 crosses p and stays:
//                 (e², e, e, 0) / (e² + 2e) = (0.5761, 0.2119, 0.2119, 0).
//   top_p = 0.5:  token 0 alone reaches 0.5344 >= 0.5: (1, 0, 0, 0).
//   T = 2:  e^(z/2) = (e, e^½, e^½, 1) normalised = (0.3875, 0.2350, 0.2350, 0.1425).
//   T = 0:  greedy, (1, 0, 0, 0).
const arma::rowvec kZ = {2.0, 1.0, 1.0, 0.0};

TEST(NextTokenDistribution, HandWorkedExample) {
  const double e = std::exp(1.0), e2 = std::exp(2.0);
  const auto check = [](const SamplingOptions& options, const arma::rowvec& expected) {
    const arma::rowvec q = attn::math::next_token_distribution(kZ, options);
    EXPECT_LE(largest_relative_difference(q, expected), 1e-15) << q;
    EXPECT_TRUE(arma::all((q == 0.0) == (expected == 0.0))) << q;
  };
  check({}, arma::rowvec{e2, e, e, 1.0} / (e2 + 2 * e + 1.0));
  check({1.0, 2, 1.0}, arma::rowvec{e2, e, 0.0, 0.0} / (e2 + e));
  check({1.0, 0, 0.7}, arma::rowvec{e2, e, 0.0, 0.0} / (e2 + e));
  check({1.0, 0, 0.75}, arma::rowvec{e2, e, e, 0.0} / (e2 + 2 * e));
  check({1.0, 0, 0.5}, arma::rowvec{1.0, 0.0, 0.0, 0.0});
  check({2.0, 0, 1.0},
        arma::rowvec{e, std::sqrt(e), std::sqrt(e), 1.0} / (e + 2 * std::sqrt(e) + 1.0));
  check({0.0, 0, 1.0}, arma::rowvec{1.0, 0.0, 0.0, 0.0});
  // The printed values of the comment, to four places.
  const arma::rowvec q = attn::math::next_token_distribution(kZ);
  EXPECT_NEAR(q(0), 0.5344, 5e-5);
  EXPECT_NEAR(q(3), 0.0723, 5e-5);
  EXPECT_NEAR(attn::math::next_token_distribution(kZ, {1.0, 0, 0.75})(2), 0.2119, 5e-5);
}

TEST(NextTokenDistribution, TiesGoToTheLowerIndex) {
  const arma::rowvec z = {0.0, 3.0, 1.0, 3.0, 1.0, 1.0};  // order: 1, 3, 2, 4, 5, 0
  EXPECT_EQ(attn::math::next_token_distribution(z, {0.0, 0, 1.0}).index_max(), 1u);  // greedy
  const arma::uvec top1 = arma::find(attn::math::next_token_distribution(z, {1.0, 1, 1.0}));
  EXPECT_TRUE(arma::all(top1 == arma::uvec{1})) << top1.t();
  const arma::uvec kept = arma::find(attn::math::next_token_distribution(z, {1.0, 3, 1.0}));
  EXPECT_TRUE(arma::all(kept == arma::uvec{1, 2, 3})) << kept.t();  // 2 wins the tie at 1.0
}

TEST(NextTokenDistribution, APrefixWhoseMassIsExactlyPIsComplete) {
  // Four equal logits: q = 1/4 each, exactly, and the mass before each token is 0, 1/4, 1/2, 3/4.
  // Token j stays while that mass is below p (<, not <=): p = 1/2 keeps two tokens, not three.
  const arma::rowvec z(4, arma::fill::zeros);
  const auto kept = [&](double p) {
    return arma::find(attn::math::next_token_distribution(z, {1.0, 0, p})).eval();
  };
  EXPECT_EQ(kept(0.25).n_elem, 1u);
  EXPECT_EQ(kept(0.25 + 1e-15).n_elem, 2u);
  EXPECT_EQ(kept(0.5).n_elem, 2u);
  EXPECT_TRUE(arma::approx_equal(attn::math::next_token_distribution(z, {1.0, 0, 0.5}),
                                 arma::rowvec{0.5, 0.5, 0.0, 0.0}, "absdiff", 0.0));
  EXPECT_EQ(kept(0.75).n_elem, 3u);
  EXPECT_EQ(kept(0.75 + 1e-15).n_elem, 4u);
}

TEST(NextTokenDistribution, DefaultsAreSoftmax) {
  const arma::rowvec z = {0.3, -1.2, 4.0, 4.0, 2.5};
  EXPECT_LE(
      largest_relative_difference(attn::math::next_token_distribution(z), attn::math::softmax(z)),
      1e-15);
}

TEST(NextTokenDistribution, TakesAColumnOrARowOfTheModelsLogits) {
  const arma::mat logits = {{0.3, -1.2, 4.0}, {1.0, 2.0, -1.0}};  // (n × V): the last row is next
  const arma::rowvec expected = attn::math::next_token_distribution(arma::rowvec{1.0, 2.0, -1.0});
  EXPECT_TRUE(arma::approx_equal(attn::math::next_token_distribution(logits.row(1)), expected,
                                 "absdiff", 0.0));
  const arma::vec column = {1.0, 2.0, -1.0};
  EXPECT_TRUE(arma::approx_equal(attn::math::next_token_distribution(column.t()), expected,
                                 "absdiff", 0.0));
}

TEST(NextTokenDistribution, OffSettingsChangeNothing) {
  const arma::rowvec z = {0.3, -1.2, 4.0, 4.0, 2.5};
  const arma::rowvec plain = attn::math::next_token_distribution(z, {0.8, 0, 1.0});
  EXPECT_TRUE(arma::approx_equal(attn::math::next_token_distribution(z, {0.8, 5, 1.0}), plain,
                                 "absdiff", 0.0));
  EXPECT_TRUE(arma::approx_equal(attn::math::next_token_distribution(z, {0.8, 99, 1.0}), plain,
                                 "absdiff", 0.0));
}

TEST(NextTokenDistribution, TinyTemperaturesStayFinite) {
  // (z - max z) / T is -inf or 0 for T = 1e-300; exp gives 0 or 1, never inf / inf.
  const arma::rowvec z = {0.3, -1.2, 4.0, 2.5};
  for (double T : {1e-300, 4.9e-324, 1e-10}) {
    const arma::rowvec q = attn::math::next_token_distribution(z, {T, 0, 1.0});
    EXPECT_TRUE(arma::approx_equal(q, arma::rowvec{0.0, 0.0, 1.0, 0.0}, "absdiff", 0.0)) << T;
  }
  const arma::rowvec hot = attn::math::next_token_distribution(z, {1e300, 0, 1.0});
  EXPECT_TRUE(arma::approx_equal(hot, arma::rowvec(4, arma::fill::value(0.25)), "reldiff", 1e-15));
}

TEST(NextTokenDistribution, EqualNumpysOnEveryFixture) {
  const auto blocks = attn_test::fixture_blocks("numpy_sampling.txt");
  int cases = 0;
  double largest = 0.0;
  for (const auto& [name, expected] : blocks) {
    if (name.rfind("distribution ", 0) != 0)
      continue;
    ++cases;
    // "distribution NAME SETTING": the logits NAME with the options SETTING.
    const std::string rest = name.substr(13), vector = rest.substr(0, rest.find(' '));
    const std::string setting = rest.substr(rest.find(' ') + 1);
    const arma::mat& o = blocks.at("options " + setting);
    const SamplingOptions options{o(0, 0), static_cast<arma::uword>(o(0, 1)), o(0, 2)};
    const arma::rowvec q =
        attn::math::next_token_distribution(blocks.at("logits " + vector), options);
    // The same tokens kept, exactly. Their probabilities differ in the last bits, as the sums
    // do: numpy adds pairwise, Armadillo with two running sums (4.3e-16 at most, relative; the
    // script rounds each exp correctly, as C's exp does on these numbers).
    EXPECT_TRUE(arma::all((q == 0.0) == (arma::rowvec(expected) == 0.0))) << name;
    const double difference = largest_relative_difference(q, expected);
    EXPECT_LE(difference, 1e-15) << name;
    if (options.temperature == 0.0) {
      EXPECT_TRUE(arma::approx_equal(q, arma::rowvec(expected), "absdiff", 0.0)) << name;
    }
    largest = std::max(largest, difference);
  }
  EXPECT_EQ(cases, 24) << "tests/data/numpy_sampling.txt is missing or incomplete";
  std::ostringstream text;
  text << largest;  // 1.1e-16, where std::to_string writes 0.000000
  RecordProperty("largest_relative_difference", text.str());
}

TEST(SampleToken, HandWorkedExample) {
  // cdf = (0.5, 0.75, 1, 1): token 0 owns [0, 0.5), 1 owns [0.5, 0.75), 2 owns [0.75, 1);
  // token 3 owns an empty interval and is never drawn.
  const arma::rowvec p = {0.5, 0.25, 0.25, 0.0};
  EXPECT_EQ(attn::math::sample_token(p, 0.0), 0u);
  EXPECT_EQ(attn::math::sample_token(p, 0.4999), 0u);
  EXPECT_EQ(attn::math::sample_token(p, 0.5), 1u);  // side="right": u = C_0 belongs to token 1
  EXPECT_EQ(attn::math::sample_token(p, 0.7499), 1u);
  EXPECT_EQ(attn::math::sample_token(p, 0.75), 2u);
  EXPECT_EQ(attn::math::sample_token(p, std::nextafter(1.0, 0.0)), 2u);
  // A leading or inner 0 is skipped too.
  const arma::rowvec gaps = {0.0, 0.5, 0.0, 0.5};
  EXPECT_EQ(attn::math::sample_token(gaps, 0.0), 1u);
  EXPECT_EQ(attn::math::sample_token(gaps, 0.5), 3u);
}

TEST(SampleToken, EvenlySpacedDrawsFallInProportionToP) {
  // N draws u = (i + ½) / N: token t owns an interval of length p_t, so it gets N p_t ± 1.
  const arma::rowvec p =
      attn::math::next_token_distribution(arma::rowvec{1.0, 0.2, -0.5, 2.0, 0.0});
  const int N = 100000;
  arma::rowvec counts(p.n_elem, arma::fill::zeros);
  for (int i = 0; i < N; ++i)
    counts(attn::math::sample_token(p, (i + 0.5) / N)) += 1.0;
  EXPECT_LE(arma::abs(counts - N * p).max(), 1.0) << counts;
}

TEST(SamplingErrors, BadLogitsAreNamed) {
  const SamplingOptions plain;
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { attn::math::next_token_distribution(arma::rowvec(), plain); }, "empty"));
  for (double bad : {kNaN, kInf, -kInf})
    EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
        [&] {
          attn::math::next_token_distribution(arma::rowvec{0.0, 1.0, bad}, plain);
        },
        "token 2"));
}

TEST(SamplingErrors, BadOptionsAreNamed) {
  for (double T : {-1.0, -1e-300, kNaN, kInf})
    EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
        [&] {
          attn::math::next_token_distribution(kZ, {T, 0, 1.0});
        },
        "temperature"));
  for (double p : {0.0, -0.5, 1.0000000000000002, 2.0, kNaN})
    EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
        [&] {
          attn::math::next_token_distribution(kZ, {1.0, 0, p});
        },
        "top_p"));
}

TEST(SamplingErrors, BadProbabilitiesAndDrawsAreNamed) {
  const arma::rowvec p = {0.5, 0.25, 0.25};
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] { attn::math::sample_token(arma::rowvec(), 0.5); }, "empty"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] {
        attn::math::sample_token(arma::rowvec{0.5, kNaN, 0.5}, 0.5);
      },
      "token 1"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] {
        attn::math::sample_token(arma::rowvec{0.5, 1.0, -0.5}, 0.5);
      },
      "token 2"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] {
        attn::math::sample_token(arma::rowvec{0.5, 0.25, 0.2}, 0.5);
      },
      "sum to"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] {
        attn::math::sample_token(arma::rowvec{0.0, 0.0}, 0.5);
      },
      "sum to"));
  for (double u : {-1e-300, 1.0, 1.5, kNaN, kInf})
    EXPECT_TRUE(
        ThrowsNaming<attn::math::InputError>([&] { attn::math::sample_token(p, u); }, "u is"));
  // Within numpy's tolerance, √ε ≈ 1.5e-8, a sum near 1 is accepted.
  EXPECT_EQ(attn::math::sample_token(arma::rowvec{0.5, 0.5 + 1e-9}, 0.75), 1u);
}

// ---------------------------------------------------------------------------------------
// The promises, for every input RapidCheck makes: logits of 1 to 60 tokens, often tied.
// ---------------------------------------------------------------------------------------

arma::rowvec logits() {
  const auto V = *rc::gen::inRange<arma::uword>(1, 61);
  const auto values = *rc::gen::container<std::vector<double>>(
      V, rc::gen::weightedOneOf<double>({
             {4, rc::gen::map(rc::gen::inRange(-20000, 20001), [](int k) { return k / 1000.0; })},
             {1, rc::gen::element(-3.0, 0.0, 1.0, 2.0)},  // ties
             {1, rc::gen::element(-800.0, 800.0)},        // exp underflows between these
         }));
  return arma::rowvec(values);
}

SamplingOptions options(arma::uword V) {
  return {*rc::gen::weightedOneOf<double>(
              {{1, rc::gen::just(0.0)},
               {6, rc::gen::map(rc::gen::inRange(50, 5001), [](int k) { return k / 1000.0; })}}),
          *rc::gen::inRange<arma::uword>(0, V + 3),
          *rc::gen::weightedOneOf<double>(
              {{1, rc::gen::just(1.0)},
               {3, rc::gen::map(rc::gen::inRange(1, 1000), [](int k) { return k / 1000.0; })}})};
}

// The tokens in the filters' order: by logit descending, ties by index.
arma::uvec order_of(const arma::rowvec& z) {
  return arma::stable_sort_index(z, "descend");
}

RC_GTEST_PROP(SamplingProperties, IsADistributionOverAPrefixOfTheOrder, ()) {
  const arma::rowvec z = logits();
  const SamplingOptions o = options(z.n_elem);
  const arma::rowvec q = attn::math::next_token_distribution(z, o);
  RC_ASSERT(q.is_finite());
  RC_ASSERT(q.min() >= 0.0);
  RC_ASSERT(std::abs(arma::accu(q) - 1.0) <= 1e-14);
  // No token is kept after one that was dropped, along the order.
  const arma::rowvec along = q.cols(order_of(z));
  const arma::uvec zero = arma::find(along == 0.0, 1);
  if (!zero.is_empty())
    RC_ASSERT(arma::all(along.tail(along.n_elem - zero(0)) == 0.0));
}

RC_GTEST_PROP(SamplingProperties, TopKKeepsAtMostKTokens, ()) {
  const arma::rowvec z = logits();
  const SamplingOptions o = options(z.n_elem);
  const arma::uword kept = arma::accu(attn::math::next_token_distribution(z, o) > 0.0);
  RC_ASSERT(kept >= 1u);
  if (o.top_k > 0)
    RC_ASSERT(kept <= o.top_k);
}

RC_GTEST_PROP(SamplingProperties, TopPKeepsTheSmallestPrefixThatReachesP, ()) {
  const arma::rowvec z = logits();
  const double T = *rc::gen::map(rc::gen::inRange(50, 5001), [](int k) { return k / 1000.0; });
  const double p = *rc::gen::map(rc::gen::inRange(1, 1000), [](int k) { return k / 1000.0; });
  const arma::rowvec q = attn::math::next_token_distribution(z, {T, 0, 1.0});
  const arma::rowvec along = q.cols(order_of(z));
  const arma::uword kept = arma::accu(attn::math::next_token_distribution(z, {T, 0, p}) > 0.0);
  RC_ASSERT(arma::accu(along.head(kept)) >= p - 1e-12);     // it reaches p,
  RC_ASSERT(arma::accu(along.head(kept - 1)) < p + 1e-12);  // one token fewer does not
}

RC_GTEST_PROP(SamplingProperties, KeptTokensKeepTheirRatios, ()) {
  // Filtering renormalises: a kept token's probability is its softmax(z / T) over the kept mass.
  const arma::rowvec z = logits();
  SamplingOptions o = options(z.n_elem);
  if (o.temperature == 0.0)
    o.temperature = 1.0;
  const arma::rowvec q = attn::math::next_token_distribution(z, o);
  const arma::rowvec all = attn::math::next_token_distribution(z, {o.temperature, 0, 1.0});
  const arma::uvec kept = arma::find(q > 0.0);
  const arma::rowvec expected = all.cols(kept) / arma::accu(all.cols(kept));
  RC_ASSERT(arma::approx_equal(q.cols(kept), expected, "reldiff", 1e-14));
}

RC_GTEST_PROP(SamplingProperties, TemperatureZeroIsTopKOne, ()) {
  const arma::rowvec z = logits();
  const SamplingOptions o = options(z.n_elem);
  const arma::rowvec greedy = attn::math::next_token_distribution(z, {0.0, o.top_k, o.top_p});
  const arma::rowvec top1 =
      attn::math::next_token_distribution(z, {1.0 + o.temperature, 1, o.top_p});
  RC_ASSERT(arma::approx_equal(greedy, top1, "absdiff", 0.0));
  RC_ASSERT(greedy(order_of(z)(0)) == 1.0);
}

RC_GTEST_PROP(SamplingProperties, TheDrawIsTheTokenWhoseIntervalHoldsU, ()) {
  const arma::rowvec z = logits();
  const arma::rowvec q = attn::math::next_token_distribution(z, options(z.n_elem));
  const double u =
      *rc::gen::map(rc::gen::inRange(0, 1 << 30), [](int k) { return k / 1073741824.0; });
  const arma::uword t = attn::math::sample_token(q, u);
  // C_{t-1} <= u < C_t, with C the cumulative sums left to right over their total.
  double total = 0.0, before = 0.0;
  for (arma::uword i = 0; i < q.n_elem; ++i) {
    if (i == t)
      before = total;
    total += q(i);
  }
  RC_ASSERT(q(t) > 0.0);
  RC_ASSERT(before / total <= u);
  RC_ASSERT(u < (before + q(t)) / total);
}

}  // namespace
