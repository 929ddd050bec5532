// The released models chapter 12 sets beside its own (chapters/12_todays_attention/
// released_models.hpp): their KV cache per token, and their parameter counts by formula against
// the counts of the weights their publishers released (Llama 2 7B: 6,738,415,616; 70B:
// 68,976,648,192, the sums of the released checkpoints' tensor sizes).
#include <12_todays_attention/released_models.hpp>

#include <gtest/gtest.h>

#include <string>

namespace {

namespace ch12 = attn::ch12;

const ch12::RealModel& model(const std::string& name) {
  for (const ch12::RealModel& m : ch12::kRealModels)
    if (m.name == name)
      return m;
  throw std::runtime_error("no released model " + name);
}

TEST(CacheBytesPerToken, IsTwoTimesLayersKeyValueHeadsHeadWidthAndBytes) {
  EXPECT_EQ(ch12::cache_bytes_per_token(32, 32, 128, 2), 524288u);  // Llama 2 7B: 512 KiB
  EXPECT_EQ(ch12::cache_bytes_per_token(80, 8, 128, 2), 327680u);   // Llama 2 70B: 320 KiB
  EXPECT_EQ(ch12::cache_bytes_per_token(2, 4, 16, 8), 2048u);       // chapter 12's block
}

TEST(ParameterCount, EqualsTheReleasedWeightsOfLlama2) {
  EXPECT_EQ(ch12::parameter_count(model("Llama 2 7B")), 6738415616.0);
  EXPECT_EQ(ch12::parameter_count(model("Llama 2 70B")), 68976648192.0);
}

}  // namespace
