// A model's configuration as one description (attn/gpt/model.hpp): equality over every field,
// describe()'s printed form with every field on its own line, difference() naming the first
// field that differs, the choices' properties, and attention without biases in the parameter
// list, the count and the weights' check. Its variants (attn/gpt/variants.hpp): each changes
// what its name says and nothing else.
#include <attn/gpt/model.hpp>
#include <attn/gpt/step.hpp>
#include <attn/gpt/variants.hpp>
#include <attn/math/validate.hpp>

#include <gtest/gtest.h>

#include "bad_input.hpp"
#include "random_gpt.hpp"

#include <sstream>
#include <string>
#include <vector>

namespace {

namespace gpt = attn::gpt;
using attn_bad_input::ThrowsNaming;

// describe()'s lines, each a field's name and value.
std::vector<std::string> lines_of(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

TEST(Describe, PrintsEveryFieldOnItsOwnLineInTheStructsOrder) {
  const std::string described = gpt::describe(attn_test::small_gpt());
  EXPECT_EQ(described,
            "vocabulary 11\nd_model 8\nheads 4\nlayers 2\nd_ff 12\nmax_length 6\n"
            "positions learned\ntied_embeddings true\ndropout 0\nkv_heads 0\nsliding_window 0\n"
            "norm layer_norm\nmlp gelu\nattention_biases true\n");
}

// Changing any one field changes equality, describe() and difference(), which names it.
TEST(Difference, NamesTheFirstFieldThatDiffersBothWays) {
  const gpt::TransformerConfig base = attn_test::small_gpt();
  EXPECT_EQ(gpt::difference(base, base), "");
  std::vector<gpt::TransformerConfig> changed(14, base);
  changed[0].vocabulary = 12;
  changed[1].d_model = 16;
  changed[2].heads = 2;
  changed[3].layers = 3;
  changed[4].d_ff = 10;
  changed[5].max_length = 7;
  changed[6].positions = gpt::Positions::rotary;
  changed[7].tied_embeddings = false;
  changed[8].dropout = 0.1;
  changed[9].kv_heads = 2;
  changed[10].sliding_window = 3;
  changed[11].norm = gpt::Norm::rms_norm;
  changed[12].mlp = gpt::Mlp::swiglu;
  changed[13].attention_biases = false;
  const std::vector<std::string> base_lines = lines_of(gpt::describe(base));
  ASSERT_EQ(base_lines.size(), changed.size()) << "a field with no line of its own";
  for (std::size_t k = 0; k < changed.size(); ++k) {
    const std::vector<std::string> lines = lines_of(gpt::describe(changed[k]));
    SCOPED_TRACE(base_lines[k]);
    EXPECT_FALSE(changed[k] == base);
    EXPECT_NE(lines[k], base_lines[k]);
    EXPECT_EQ(gpt::difference(changed[k], base), lines[k] + ", not " + base_lines[k]);
  }
}

TEST(Choices, PropertiesFollowTheChoice) {
  EXPECT_TRUE(gpt::learns_positions(gpt::Positions::learned));
  for (const gpt::Positions p :
       {gpt::Positions::none, gpt::Positions::sinusoidal, gpt::Positions::rotary})
    EXPECT_FALSE(gpt::learns_positions(p)) << gpt::to_string(p);
  EXPECT_TRUE(gpt::rotates(gpt::Positions::rotary));
  EXPECT_FALSE(gpt::rotates(gpt::Positions::learned));
  EXPECT_TRUE(gpt::has_shift(gpt::Norm::layer_norm));
  EXPECT_FALSE(gpt::has_shift(gpt::Norm::rms_norm));
  EXPECT_TRUE(gpt::has_biases(gpt::Mlp::gelu));
  EXPECT_FALSE(gpt::has_biases(gpt::Mlp::swiglu));
}

// A value outside its enum, as a cast integer could make, is refused rather than taken for one.
TEST(Choices, AValueOutsideItsEnumIsRefused) {
  EXPECT_TRUE(
      ThrowsNaming<attn::math::InputError>([] { (void)gpt::to_string(static_cast<gpt::Norm>(7)); },
                                           "transformer: 7 is not a choice of norm"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] { (void)gpt::rotates(static_cast<gpt::Positions>(9)); },
      "transformer: 9 is not a choice of positions"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] { (void)gpt::with(static_cast<gpt::Variant>(40), attn_test::small_gpt()); },
      "with: 40 is not a choice of variant"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] { (void)gpt::to_string(static_cast<gpt::Precision>(5)); },
      "Step: 5 is not a choice of precision"));
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [] { gpt::Step step(attn_test::small_gpt(), static_cast<gpt::Precision>(5)); },
      "Step: 5 is not a choice of precision"));
}

// Without attention biases: no b_Q, b_K, b_V, b_O among the parameters, 2d + 2 g d_k fewer
// numbers per block, and weights that carry them refused (and the other way round).
TEST(AttentionBiases, WithoutThemTheModelHasNoneAndCountsNone) {
  const gpt::TransformerConfig with_biases = attn_test::small_gpt();
  const gpt::TransformerConfig without =
      gpt::with(gpt::Variant::no_attention_biases, attn_test::small_gpt());
  const gpt::TransformerWeights w = attn_test::random_model(without, 5);
  arma::uword total = 0;
  for (const gpt::ConstParameter& p : gpt::parameters(w)) {
    EXPECT_EQ(p.name.find("attention.b_"), std::string::npos) << p.name;
    total += p.value->n_elem;
  }
  EXPECT_EQ(gpt::parameter_count(without), total);
  const arma::uword d = 8;  // 4 heads of 2, as many key/value heads
  EXPECT_EQ(gpt::parameter_count(with_biases) - gpt::parameter_count(without), 2 * 4 * d);
  gpt::TransformerWeights carrying = attn_test::random_model(with_biases, 6);
  carrying.config.attention_biases = false;
  EXPECT_TRUE(ThrowsNaming<attn::math::ShapeError>(
      [&] { gpt::check_weights(carrying); },
      "transformer: blocks.0.attention.b_Q has 8 entries, not 0 (attention_biases false)"));
  gpt::TransformerWeights lacking = w;
  lacking.config.attention_biases = true;
  EXPECT_TRUE(ThrowsNaming<attn::math::ShapeError>(
      [&] { gpt::check_weights(lacking); },
      "transformer: blocks.0.attention.b_Q has 0 entries, not 8 (attention_biases true)"));
}

// Attention alone (Mlp::none): no second norm and no MLP among the parameters, the count
// smaller by exactly them, and d_ff 0, which a model with an MLP refuses.
TEST(AttentionOnly, HasNoSecondNormAndNoMlp) {
  const gpt::TransformerConfig gelu = attn_test::small_gpt();
  const gpt::TransformerConfig alone = gpt::with(gpt::Variant::attention_only, gelu);
  EXPECT_EQ(alone.mlp, gpt::Mlp::none);
  EXPECT_FALSE(gpt::has_mlp(alone.mlp));
  EXPECT_FALSE(gpt::has_biases(alone.mlp));
  const gpt::TransformerWeights w = attn_test::random_model(alone, 7);
  for (const gpt::ConstParameter& p : gpt::parameters(w)) {
    EXPECT_EQ(p.name.find("ln2"), std::string::npos) << p.name;
    EXPECT_EQ(p.name.find("mlp"), std::string::npos) << p.name;
  }
  const arma::uword d = gelu.d_model, f = gelu.d_ff;
  const arma::uword mlp_and_its_norm = 2 * d * f + f + d + 2 * d;
  EXPECT_EQ(gpt::parameter_count(gelu) - gpt::parameter_count(alone),
            gelu.layers * mlp_and_its_norm);
  gpt::TransformerConfig wide = alone;
  wide.d_ff = 12;
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>(
      [&] { gpt::check_config(wide); },
      "transformer: d_ff = 12 with mlp none: an MLP needs a hidden width, and mlp none takes "
      "d_ff = 0"));
  gpt::TransformerConfig narrow = gelu;
  narrow.d_ff = 0;
  EXPECT_TRUE(ThrowsNaming<attn::math::InputError>([&] { gpt::check_config(narrow); },
                                                   "d_ff = 0 with mlp gelu"));
}

// Each variant sets the fields its name says, and only those.
TEST(Variants, EachChangesWhatItsNameSays) {
  const gpt::TransformerConfig base = attn_test::small_gpt();
  const gpt::VariantSizes sizes{.kv_heads = 2, .sliding_window = 3, .swiglu_d_ff = 9};
  const std::vector<std::pair<gpt::Variant, std::string>> expected = {
      {gpt::Variant::rotary, "positions rotary, not positions learned"},
      {gpt::Variant::no_positions, "positions none, not positions learned"},
      {gpt::Variant::grouped_query, "kv_heads 2, not kv_heads 0"},
      {gpt::Variant::multi_query, "kv_heads 1, not kv_heads 0"},
      {gpt::Variant::sliding_window, "sliding_window 3, not sliding_window 0"},
      {gpt::Variant::rms_norm, "norm rms_norm, not norm layer_norm"},
      {gpt::Variant::swiglu, "d_ff 9, not d_ff 12"},
      {gpt::Variant::no_attention_biases, "attention_biases false, not attention_biases true"},
      {gpt::Variant::attention_only, "d_ff 0, not d_ff 12"}};
  ASSERT_EQ(expected.size(), gpt::kEveryVariant.size());
  for (std::size_t k = 0; k < expected.size(); ++k) {
    EXPECT_EQ(gpt::kEveryVariant[k], expected[k].first);
    const gpt::TransformerConfig changed = gpt::with(expected[k].first, base, sizes);
    EXPECT_EQ(gpt::difference(changed, base), expected[k].second)
        << gpt::to_string(expected[k].first);
    EXPECT_NO_THROW(gpt::check_config(changed));
  }
  const gpt::TransformerConfig swiglu = gpt::with(gpt::Variant::swiglu, base);
  EXPECT_EQ(swiglu.mlp, gpt::Mlp::swiglu);
  EXPECT_EQ(swiglu.d_ff, base.d_ff);  // no width given: the config's
  const std::vector<gpt::Variant> both = {gpt::Variant::rotary, gpt::Variant::rms_norm};
  const gpt::TransformerConfig together = gpt::with(both, base, sizes);
  EXPECT_EQ(together.positions, gpt::Positions::rotary);
  EXPECT_EQ(together.norm, gpt::Norm::rms_norm);
}

}  // namespace
