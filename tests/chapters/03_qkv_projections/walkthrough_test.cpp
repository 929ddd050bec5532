// One token's written-out equation on the Nimbus thread: its numbers (attn::ch03::token_walk), its
// text (attn::ch03::walk_text, attn::ch03::walk_through) and the book page's data
// (attn::ch03::walk_page_data).
#include <02_nimbus_raw/nimbus_thread.hpp>
#include <03_qkv_projections/walkthrough.hpp>
#include <attn/book/grid_text.hpp>
#include <attn/book/plot.hpp>
#include <attn/math/validate.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

namespace {

struct Thread {
  attn::ch02::NimbusThread t = attn::ch02::nimbus_thread();
  attn::math::QKV qkv = attn::math::project(t.embeddings, t.projections);
  attn::math::Attention a = attn::math::scaled_dot_product_attention(qkv.Q, qkv.K, qkv.V);
};

TEST(WalkThrough, WritesModule21sScoreWithItsArithmetic) {
  const Thread n;
  const arma::uword exp = attn::book::token_index(n.t.tokens, "export");
  const std::string text =
      attn::ch03::walk_through(n.t.tokens, n.t.embeddings, n.t.projections, n.a, exp);
  EXPECT_NE(text.find("  Q(export) = x(export) W_Q = [1.5 × 0.20 + 0.5 × 0.10, "
                      "1.5 × 0.10 + 0.5 × 0.14] = [0.35, 0.22]\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  Q(export) · K(fail) / √2 = (0.35 × 1.00 + 0.22 × 0.70) / 1.414 = 0.36\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  Σ weights = 1.00\n"), std::string::npos) << text;
}

TEST(WalkThrough, EveryTokenHasFourSteps) {
  const Thread n;
  for (arma::uword t = 0; t < n.t.tokens.size(); ++t) {
    const std::string text =
        attn::ch03::walk_through(n.t.tokens, n.t.embeddings, n.t.projections, n.a, t);
    for (const char* step : {"step 1", "step 2", "step 3", "step 4"})
      EXPECT_NE(text.find(step), std::string::npos) << n.t.tokens[t] << " lacks " << step;
  }
}

TEST(WalkThrough, RefusesWhatItCannotWriteOut) {
  const Thread n;
  EXPECT_THROW(attn::ch03::walk_through(n.t.tokens, n.t.embeddings, n.t.projections, n.a, 6),
               std::out_of_range);
  attn::math::Projections wide = n.t.projections;
  wide.W_Q = arma::mat(2, 3, arma::fill::ones);
  try {
    attn::ch03::walk_through(n.t.tokens, n.t.embeddings, wide, n.a, 0);
    FAIL() << "a (2 × 3) W_Q was accepted";
  } catch (const attn::math::ShapeError& e) {
    EXPECT_STREQ(e.what(), "walk_through writes out 2-D examples: W_Q is (2 × 3), not (2 × 2)");
  }
}

TEST(WalkThrough, PutsModule13sRawRowBesideTheProjectedOne) {
  const Thread n;
  const arma::uword exp = attn::book::token_index(n.t.tokens, "export");
  const std::string text =
      attn::ch03::walk_through(n.t.tokens, n.t.embeddings, n.t.projections, n.a, exp);
  // Chapter 02's export row (tests/golden/ch02_nimbus_raw.txt) above this chapter's.
  EXPECT_NE(
      text.find(
          "beside chapter 02's raw attention, where x(export) was query, key and value itself:\n"
          "                 why     did      my  Nimbus  export    fail\n"
          " raw score     -0.75   -1.25   -0.25    1.25    2.50    2.75\n"
          "     score     -0.05   -0.14    0.00    0.14    0.31    0.36\n"
          "raw weight      0.01    0.01    0.02    0.11    0.37    0.48\n"
          "    weight      0.14    0.13    0.15    0.17    0.20    0.21\n"),
      std::string::npos)
      << text;
}

TEST(TokenWalk, ReadsItsNumbersFromTheAttentionItIsGiven) {
  const Thread n;
  const arma::uword fail = attn::book::token_index(n.t.tokens, "fail");
  attn::math::Attention doctored = n.a;
  doctored.weights(fail, 0) = 0.5;  // not softmax's: the walk must show it anyway
  const attn::ch03::TokenWalk w =
      attn::ch03::token_walk(n.t.tokens, n.t.embeddings, n.t.projections, doctored, fail);
  EXPECT_EQ(w.keys[0].weight, "0.50");
  EXPECT_DOUBLE_EQ(w.keys[0].weight_value, 0.5);
  EXPECT_EQ(w.keys[0].raw_weight, "0.02");
  EXPECT_EQ(w.root, "√2");
  EXPECT_EQ(w.root_value, "1.414");
  EXPECT_EQ(w.output, "[0.252, 0.682]");
}

TEST(WalkPageData, IsAScriptSettingOneJsonObjectWithEveryWalk) {
  const Thread n;
  const std::vector<attn::ch03::TokenWalk> walks =
      attn::ch03::token_walks(n.t.tokens, n.t.embeddings, n.t.projections, n.a);
  const std::string js = attn::ch03::walk_page_data(n.t.sentence, walks, "ch03_qkv_projections");

  const std::string assign = "window.attnTokenWalks = ";
  const std::size_t at = js.find(assign);
  ASSERT_NE(at, std::string::npos) << js;
  EXPECT_EQ(js.rfind("// Written by ch03_qkv_projections", 0), 0u) << js.substr(0, 80);
  ASSERT_EQ(js.substr(js.size() - 2), ";\n");
  const auto data =
      nlohmann::json::parse(js.substr(at + assign.size(), js.size() - 2 - at - assign.size()));

  EXPECT_EQ(data["sentence"], "Why did my Nimbus export fail?");
  ASSERT_EQ(data["walks"].size(), 6u);
  const auto& fail = data["walks"][5];
  EXPECT_EQ(fail["token"], "fail");
  EXPECT_EQ(fail["q"], nlohmann::json({"0.40", "0.29"}));
  EXPECT_EQ(fail["exp_sum"], "4.548");
  EXPECT_EQ(fail["weight_sum"], "1.00");
  const auto& to_export = fail["keys"][4];
  EXPECT_EQ(to_export["token"], "export");
  EXPECT_EQ(to_export["score"], "0.37");
  EXPECT_EQ(to_export["weight"]["text"], "0.21");
  EXPECT_EQ(to_export["weight"]["colour"],
            attn::book::weight_colour(to_export["weight"]["value"].get<double>()));
  EXPECT_EQ(to_export["raw_weight"]["text"], "0.33");
  const auto& why_to_why = data["walks"][0]["keys"][0]["raw_weight"];
  EXPECT_EQ(why_to_why["text"], "0.64");
  EXPECT_EQ(why_to_why["ink"], "#ffffff");  // a dark cell, as in chapter 02's heatmap
  EXPECT_EQ(data["palette"].size(), attn::book::weight_palette().size());
}

}  // namespace
