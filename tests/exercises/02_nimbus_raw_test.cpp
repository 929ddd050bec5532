// Chapter 02's exercises: each word's strongest partner, and the grid of raw weights.
#include "02_nimbus_raw.hpp"

#include "exercise_checks.hpp"

#include <02_nimbus_raw/nimbus_thread.hpp>
#include <attn/math/attention.hpp>

#include <gtest/gtest.h>

using attn_exercise::near;
using namespace attn::exercises;

// The partners chapter 02 prints: "export leans most on fail (0.48); fail leans most on export
// (0.33)".
TEST(Exercise2_1, ExportAndFailLeanOnEachOther) {
  const auto nimbus = attn::ch02::nimbus_thread();
  EXPECT_EQ(strongest_partner(nimbus.embeddings, nimbus.tokens, "export"), "fail");
  EXPECT_EQ(strongest_partner(nimbus.embeddings, nimbus.tokens, "fail"), "export");
}

// "why" weighs itself 0.64, then my 0.18 and did 0.14: itself must not count.
TEST(Exercise2_1, AWordIsNotItsOwnPartner) {
  const auto nimbus = attn::ch02::nimbus_thread();
  EXPECT_EQ(strongest_partner(nimbus.embeddings, nimbus.tokens, "why"), "my")
      << "why's row of weights is 0.64 (itself), 0.14 (did), 0.18 (my), ...";
}

// A typo lists what the reader could have typed.
TEST(Exercise2_1, AnUnknownWordListsTheValidOnes) {
  const auto nimbus = attn::ch02::nimbus_thread();
  try {
    strongest_partner(nimbus.embeddings, nimbus.tokens, "Nimbuss");
    ADD_FAILURE()
        << "\"Nimbuss\" is no token, so strongest_partner must throw std::invalid_argument";
  } catch (const std::invalid_argument& error) {
    const std::string message = error.what();
    for (const auto& token : nimbus.tokens) {
      EXPECT_NE(message.find(token), std::string::npos)
          << "the message \"" << message << "\" does not list the token " << token;
    }
  }
}

// The grid chapter 02 prints, and the library's, to every digit.
TEST(Exercise2_2, TheGridIsChapter02s) {
  const auto nimbus = attn::ch02::nimbus_thread();
  const arma::mat weights = raw_weights(nimbus.embeddings);
  EXPECT_TRUE(near("export's row, to chapter 02's two digits", arma::mat(weights.row(4)),
                   arma::rowvec{0.01, 0.01, 0.02, 0.11, 0.37, 0.48}, 0.005));
  EXPECT_TRUE(near("why's row, to chapter 02's two digits", arma::mat(weights.row(0)),
                   arma::rowvec{0.64, 0.14, 0.18, 0.00, 0.01, 0.02}, 0.005));
  EXPECT_TRUE(near("the weights", weights,
                   attn::math::raw_self_attention(nimbus.embeddings).weights, 1e-15));
}

// Each row is a softmax of its own: positive, summing to 1; so W is not symmetric though E Eᵀ is.
TEST(Exercise2_2, RowsSumToOneButTheGridIsNotSymmetric) {
  const auto nimbus = attn::ch02::nimbus_thread();
  const arma::mat weights = raw_weights(nimbus.embeddings);
  EXPECT_TRUE(near("the row sums", arma::mat(arma::sum(weights, 1)),
                   arma::mat(arma::ones(weights.n_rows, 1)), 1e-12));
  EXPECT_TRUE(near("weight(export -> fail), printed 0.48", weights(4, 5), 0.48, 0.005));
  EXPECT_TRUE(near("weight(fail -> export), printed 0.33", weights(5, 4), 0.33, 0.005));
}
