// attn::fast's embeddings and rotary positions (float, one column a token), on random shapes
// from each seed.
//
// The embedding is a look-up and a sum: its forward pass and its backward pass (each table's
// columns collecting the tokens' gradients) are held to a float64 evaluation of
// x_i = E_{t_i} + P_{p_i} within 1e-5 of the largest entry, as a column of the backward pass sums
// up to 96 tokens' gradients in float (6e-8 each at worst). RoPE is held to attn::math::rotary()
// and rotary_backward() (double, one row a token), head by head, within 1e-6 of the largest
// entry: each entry is two products and a sum, and the angles' cosines and sines are rounded to
// float once. These seeds show at most 1.6e-7 for the sums and 8e-8 for the turns.
#include <attn/fast/embedding.hpp>
#include <attn/math/positions.hpp>

#include <gtest/gtest.h>

#include "float_kernels.hpp"

namespace {

constexpr double kSumTolerance = 1e-5;
constexpr double kRotationTolerance = 1e-6;

class FastEmbedding : public attn_test::KernelTest {
 protected:
  const arma::uword d = draws.size(1, 48), vocabulary = draws.size(1, 40),
                    max_length = draws.size(1, 30), tokens = draws.size(1, 96);
  const arma::fmat E_columns = draws.floats(d, vocabulary), P_columns = draws.floats(d, max_length);
  const arma::uvec token_ids = draws.ids(tokens, vocabulary),
                   positions = draws.ids(tokens, max_length);
  const arma::fmat dx = draws.floats(d, tokens);
};

TEST_P(FastEmbedding, ForwardAddsEachTokensEmbeddingAndItsPositions) {
  arma::fmat x, x_unplaced;
  attn::fast::embedding_forward(E_columns, P_columns, token_ids, positions, x);
  attn::fast::embedding_forward(E_columns, arma::fmat(), token_ids, positions, x_unplaced);
  const arma::mat E = wide(E_columns), P = wide(P_columns);
  EXPECT_LT(gap(x, E.cols(token_ids) + P.cols(positions)), kSumTolerance);
  EXPECT_LT(gap(x_unplaced, E.cols(token_ids)), kSumTolerance);
}

TEST_P(FastEmbedding, BackwardCollectsEachTokensGradientInItsColumns) {
  arma::fmat dE, dP;
  attn::fast::embedding_backward(E_columns, P_columns, token_ids, positions, dx, dE, dP);
  arma::mat want_E(arma::size(E_columns), arma::fill::zeros);
  arma::mat want_P(arma::size(P_columns), arma::fill::zeros);
  for (arma::uword i = 0; i < tokens; ++i) {
    want_E.col(token_ids(i)) += wide(dx.col(i));
    want_P.col(positions(i)) += wide(dx.col(i));
  }
  EXPECT_LT(gap(dE, want_E), kSumTolerance);
  EXPECT_LT(gap(dP, want_P), kSumTolerance);
}

INSTANTIATE_TEST_SUITE_P(Seeds, FastEmbedding, ::testing::ValuesIn(attn_test::kKernelSeeds),
                         attn_test::seed_name);

class FastRope : public attn_test::KernelTest {
 protected:
  // `heads` heads of d_k turned, and rows below them that are not.
  const arma::uword heads = draws.size(1, 6), d_head = 2 * draws.size(1, 16),
                    spare = draws.size(0, 8), max_length = draws.size(1, 200),
                    tokens = draws.size(1, 40);
  const arma::fmat x = draws.floats(heads * d_head + spare, tokens);
  const arma::uvec positions = draws.ids(tokens, max_length);
  const attn::fast::RopeTables tables = attn::fast::rope_tables(d_head, max_length);

  // rotary(), or rotary_backward(), of each of x's first `heads` heads, one row a token; the
  // rows below them as they are.
  template <typename Turn>
  [[nodiscard]] arma::mat readable(Turn turn) const {
    arma::mat want = wide(x);
    const arma::vec at = arma::conv_to<arma::vec>::from(positions);
    for (arma::uword h = 0; h < heads; ++h) {
      const arma::span rows(h * d_head, (h + 1) * d_head - 1);
      want.rows(rows) = turn(arma::mat(want.rows(rows).t()), at).t();
    }
    return want;
  }
};

TEST_P(FastRope, ForwardTurnsEachHeadAsTheReadableRotaryDoes) {
  arma::fmat turned = x;
  attn::fast::rope_forward(turned, heads, tables, positions);
  const arma::mat want =
      readable([](const arma::mat& X, const arma::vec& p) { return attn::math::rotary(X, p); });
  EXPECT_LT(gap(turned, want), kRotationTolerance);
}

TEST_P(FastRope, BackwardTurnsEachHeadBackAsTheReadableRotaryBackwardDoes) {
  arma::fmat turned_back = x;
  attn::fast::rope_backward(turned_back, heads, tables, positions);
  const arma::mat want = readable(
      [](const arma::mat& dY, const arma::vec& p) { return attn::math::rotary_backward(dY, p); });
  EXPECT_LT(gap(turned_back, want), kRotationTolerance);
}

INSTANTIATE_TEST_SUITE_P(Seeds, FastRope, ::testing::ValuesIn(attn_test::kKernelSeeds),
                         attn_test::seed_name);

}  // namespace
