#include "sinks.hpp"

#include <12_todays_attention/experiment.hpp>

#include <attn/gpt/variants.hpp>
#include <attn/math/validate.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <numbers>

namespace attn::ch13 {

std::vector<gpt::TransformerWeights> rotary_models(std::ostream& log,
                                                   const ch11::EncodedCorpus& data,
                                                   const std::vector<std::uint64_t>& seeds,
                                                   const std::string& folder) {
  const auto rope =
      std::find_if(ch12::kChanges.begin(), ch12::kChanges.end(), [](const ch12::Change& change) {
        return change.variants == std::vector<gpt::Variant>{gpt::Variant::rotary};
      });
  if (rope == ch12::kChanges.end())
    throw math::InputError("chapter 12 has no change that is rotary positions alone");
  if (!folder.empty())  // where chapter 12 keeps them, if chapter 12 has not run yet
    std::filesystem::create_directories(folder);
  std::vector<gpt::TransformerWeights> models;
  for (const std::uint64_t seed : seeds) {
    if (folder.empty()) {
      models.push_back(ch12::random_model(ch12::changed(rope->variants), seed));
      continue;
    }
    ch12::Run run{.change = static_cast<std::size_t>(rope - ch12::kChanges.begin()),
                  .second_rate = false,
                  .settings = ch12::kTraining};
    run.settings.seed = seed;
    models.push_back(ch12::trained(log, data, run, ch12::kScoredTokens, folder).weights);
  }
  return models;
}

arma::rowvec streamed_bits(const gpt::TransformerWeights& weights, const gpt::TokenText& text,
                           arma::uword tokens, const gpt::StreamingCache& cache,
                           arma::uword stretch) {
  const arma::vec nats = gpt::streaming_costs(weights, text.tokens.head(tokens + 1), cache);
  const arma::uword points = tokens / stretch;
  arma::rowvec bits(points);
  for (arma::uword j = 0; j < points; ++j) {
    const arma::span scored(j * stretch, (j + 1) * stretch - 1);  // predicting tokens + 1
    const double bytes =
        static_cast<double>(arma::accu(text.lengths.subvec(j * stretch + 1, (j + 1) * stretch)));
    bits(j) = arma::accu(nats(scored)) / (bytes * std::numbers::ln2);
  }
  return bits;
}

}  // namespace attn::ch13
