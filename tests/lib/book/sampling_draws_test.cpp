// The tokens numpy draws, drawn in C++: attn::math::sample_token fed by attn::numpy's default_rng
// picks, draw by draw, the token numpy's rng.choice(V, p=q) picks on the fixtures of
// tests/data/generate_sampling_fixtures.py. Here because it needs both the math layer and the
// numpy layer, which only the book layer links (tests/lib/math/sampling_test.cpp checks the
// distributions themselves).
#include <attn/math/sampling.hpp>
#include <attn/numpy/numpy_random.hpp>

#include <gtest/gtest.h>

#include "fixture_blocks.hpp"

#include <cstdint>
#include <map>
#include <string>

namespace {

using Blocks = std::map<std::string, arma::mat>;

// For every "draws NAME SETTING" block: the tokens drawn from `distribution(NAME, SETTING)`
// by a fresh default_rng(draw_seed), one rng.random() per token, against numpy's.
template <class Distribution>
int check_every_draw(const Blocks& blocks, Distribution distribution) {
  const auto seed = static_cast<std::uint64_t>(blocks.at("draw_seed")(0, 0));
  int cases = 0;
  for (const auto& [name, expected] : blocks) {
    if (name.rfind("draws ", 0) != 0)
      continue;
    ++cases;
    const std::string rest = name.substr(6), vector = rest.substr(0, rest.find(' '));
    const std::string setting = rest.substr(rest.find(' ') + 1);
    const arma::rowvec q = distribution(vector, setting);
    attn::numpy::Generator rng = attn::numpy::default_rng(seed);
    for (arma::uword i = 0; i < expected.n_cols; ++i)
      EXPECT_EQ(attn::math::sample_token(q, rng.random()), static_cast<arma::uword>(expected(0, i)))
          << name << ", draw " << i;
  }
  return cases;
}

TEST(SamplingDraws, FromNumpysDistributionsAreNumpysTokens) {
  // sample_token alone: numpy's own probabilities, bit for bit, give numpy's tokens.
  const Blocks blocks = attn_test::fixture_blocks("numpy_sampling.txt");
  const int cases =
      check_every_draw(blocks, [&](const std::string& vector, const std::string& setting) {
        return arma::rowvec(blocks.at("distribution " + vector + " " + setting));
      });
  EXPECT_EQ(cases, 24) << "tests/data/numpy_sampling.txt is missing or incomplete";
}

TEST(SamplingDraws, FromTheLogitsAreNumpysTokens) {
  // The whole sampler: logits, options, distribution, draw.
  const Blocks blocks = attn_test::fixture_blocks("numpy_sampling.txt");
  const int cases = check_every_draw(blocks, [&](const std::string& vector,
                                                 const std::string& setting) {
    const arma::mat& o = blocks.at("options " + setting);
    const attn::math::SamplingOptions options{o(0, 0), static_cast<arma::uword>(o(0, 1)), o(0, 2)};
    return attn::math::next_token_distribution(blocks.at("logits " + vector), options);
  });
  EXPECT_EQ(cases, 24) << "tests/data/numpy_sampling.txt is missing or incomplete";
}

}  // namespace
