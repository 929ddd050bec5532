// Chapter 12's worked example (chapters/12_todays_attention/example.hpp): its shapes, its band
// (each query reads its last three keys), the check that its weights keep to the band and sum to
// 1 (and that the check sees a weight outside it), and the way its numbers are printed. Its
// numbers themselves are held to PyTorch's by the test ch12.torch.
#include <12_todays_attention/example.hpp>

#include <gtest/gtest.h>

namespace {

namespace ch12 = attn::ch12;

TEST(WorkedExample, HasFourHeadsOverFiveTokensAndOutputsOfTheLayersWidth) {
  const ch12::Example example = ch12::worked_example();
  EXPECT_EQ(example.x.n_rows, ch12::kExampleTokens);
  EXPECT_EQ(example.x.n_cols, ch12::kExampleWidth);
  ASSERT_EQ(example.attention.heads.size(), ch12::kExampleHeads);
  for (const attn::math::Attention& head : example.attention.heads) {
    EXPECT_EQ(head.weights.n_rows, ch12::kExampleTokens);
    EXPECT_EQ(head.weights.n_cols, ch12::kExampleTokens);
  }
  EXPECT_EQ(example.attention.output.n_cols, ch12::kExampleWidth);
  EXPECT_EQ(example.rms_norm.n_elem, ch12::kExampleWidth);
  EXPECT_EQ(example.swiglu.n_elem, ch12::kExampleWidth);
  // Each query reads itself and the two keys before it: the last query not the first key.
  EXPECT_TRUE(example.band.allows(4, 2));
  EXPECT_FALSE(example.band.allows(4, 1));
  EXPECT_FALSE(example.band.allows(1, 2));
}

TEST(WorkedExample, KeepsToTheBandAndTheCheckSeesAWeightOutsideIt) {
  ch12::Example example = ch12::worked_example();
  EXPECT_TRUE(ch12::banded(example, 1e-12));
  example.attention.heads[3].weights(4, 0) = 1e-9;
  EXPECT_FALSE(ch12::banded(example, 1e-12));
  example = ch12::worked_example();
  example.attention.heads[0].weights(2, 2) += 1e-9;  // inside the band, but the row sums past 1
  EXPECT_FALSE(ch12::banded(example, 1e-12));
}

TEST(Decimals, PrintsFourDecimalsEightToALineEachIndentedByTwoSpaces) {
  EXPECT_EQ(ch12::decimals({1.0, -0.5}), "   1.0000 -0.5000");
  const arma::rowvec nine(9, arma::fill::zeros);
  EXPECT_EQ(ch12::decimals(nine),
            "   0.0000  0.0000  0.0000  0.0000  0.0000  0.0000  0.0000  0.0000\n"
            "   0.0000");
}

}  // namespace
