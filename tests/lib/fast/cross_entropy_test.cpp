// attn::fast's softmax with cross-entropy (float, one column a token) against
// attn::math::cross_entropy() (double, one row a token): each token's cost against
// −ln softmax_rows(z), their mean against the readable loss, and the gradient of the mean.
// Random shapes from each seed.
//
// Tolerance: 1e-5 of the reference's largest entry (relative_gap), and the same relative to
// the mean. A cost is ln Σ e^(z − m) + m − z_t over up to 300 words: the vectorised
// exponentials are within a relative 2ε (ε = 1.2e-7) each and the sum adds V of them in float,
// which at V = 300 costs up to a few times 1e-6 of the sum. These seeds show at most 2e-7.
#include <attn/fast/cross_entropy.hpp>
#include <attn/math/layers.hpp>
#include <attn/math/softmax.hpp>

#include <gtest/gtest.h>

#include <cmath>

#include "float_kernels.hpp"

namespace {

constexpr double kTolerance = 1e-5;

class FastCrossEntropy : public attn_test::KernelTest {
 protected:
  const arma::uword vocabulary = draws.size(2, 300), tokens = draws.size(1, 64);
  const arma::fmat logits = draws.floats(vocabulary, tokens, 4.0);  // (V × N)
  const arma::uvec targets = draws.ids(tokens, vocabulary);

  // The forward pass's results: the logits turned into e^(z − m), their sums, the costs.
  arma::fmat z = logits;
  arma::fvec sums;
  arma::vec losses;

  void SetUp() override { attn::fast::cross_entropy_forward(z, targets, sums, losses); }

  // The readable loss and its gradient, one row a token.
  [[nodiscard]] attn::math::CrossEntropy readable() const {
    return attn::math::cross_entropy(wide(logits).t(), targets);
  }
};

TEST_P(FastCrossEntropy, ForwardIsEachTokensCostAndTheReadableMean) {
  const arma::mat p = attn::math::softmax_rows(wide(logits).t());  // (N × V)
  arma::vec want(tokens);
  for (arma::uword i = 0; i < tokens; ++i)
    want(i) = -std::log(p(i, targets(i)));
  EXPECT_LT(attn::math::relative_gap(losses, want), kTolerance);
  const double mean = readable().loss;
  EXPECT_NEAR(arma::mean(losses), mean, kTolerance * mean);
}

TEST_P(FastCrossEntropy, BackwardIsTheReadableGradientOfTheMean) {
  attn::fast::cross_entropy_backward(z, sums, targets);
  // Its entries are about 1/(V N): held to the largest entry, not to 1, as relative_gap would.
  const arma::mat want = readable().dlogits.t();
  EXPECT_LT(arma::abs(wide(z) - want).max(), kTolerance * arma::abs(want).max());
}

INSTANTIATE_TEST_SUITE_P(Seeds, FastCrossEntropy, ::testing::ValuesIn(attn_test::kKernelSeeds),
                         attn_test::seed_name);

}  // namespace
