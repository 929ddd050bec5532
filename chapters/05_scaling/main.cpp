// Chapter 05: why divide by √d_k, and why softmax runs along rows, measured on draws from
// default_rng(5); tests/data/generate_scaling_fixtures.py reruns every table in numpy.

#include "measure.hpp"

#include <attn/book/chapter.hpp>
#include <attn/book/grid_text.hpp>
#include <attn/book/palette.hpp>
#include <attn/math/attention.hpp>
#include <attn/math/softmax.hpp>
#include <attn/numpy/numpy_random.hpp>

#include <fmt/ostream.h>

#include <cmath>
#include <string>
#include <vector>

namespace {
namespace colour = attn::book::colour;

//! [setup]
const std::uint64_t kSeed = 5;
const arma::rowvec kWidths = {2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};  // d_k
const arma::uword kPairs = 4000;  // (q, k) pairs per d_k, for the spread
const arma::uword kKeys = 16;     // saturation: keys per query
const arma::uword kTrials = 200;  // saturation: queries per d_k
//! [setup]

//! [article-numbers]
// Neither article prints a number here; both say what the scale prevents. Read as: unscaled,
// the largest weight ends above kNearOne ("~1") and |Jacobian| below kFifth of the scaled one
// ("~0"); scaled, both stay within ±kFlat of their mean ("still has something to say").
const double kNearOne = 0.95;
const double kFifth = 0.2;
const double kFlat = 0.15;
//! [article-numbers]

// One width shown as grids (section 2), and the grid of section 3.
const arma::uword kGridWidth = 512;  // d_k
const double kOneHot = 0.99;  // a row whose largest weight is above this is a near one-hot pick
const std::vector<std::string> kQueries = {"q1", "q2", "q3", "q4", "q5", "q6"};
const std::vector<std::string> kKeyNames = {"k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8"};
const arma::uword kRowWiseTokens = 5;  // section 3: five queries, five keys
const arma::uword kRowWiseWidth = 4;   // section 3: d_k

arma::uword width(double d) {
  return static_cast<arma::uword>(d);
}

// Every entry within ±kFlat of the mean.
bool flat(const arma::rowvec& v) {
  return arma::all(arma::abs(v / arma::mean(v) - 1) < kFlat);
}

// Section 2's four measurements, one entry per width.
struct SaturationTable {
  arma::rowvec max_unscaled = arma::rowvec(kWidths.n_elem);
  arma::rowvec max_scaled = arma::rowvec(kWidths.n_elem);
  arma::rowvec jacobian_unscaled = arma::rowvec(kWidths.n_elem);
  arma::rowvec jacobian_scaled = arma::rowvec(kWidths.n_elem);
};

void spread(attn::book::Chapter& ch, attn::numpy::Generator& rng) {
  fmt::print(ch.out, "1. The spread of q·k, {} pairs per d_k, entries drawn from N(0, 1)\n",
             kPairs);
  fmt::print(ch.out, "   (var(q·k)/d_k is also the variance of the scaled score q·k/√d_k)\n\n");
  fmt::print(ch.out, "   d_k    var(q·k)   var(q·k)/d_k   mean |q·k|\n");
  arma::rowvec variance(kWidths.n_elem);
  arma::rowvec typical(kWidths.n_elem);
  for (arma::uword i = 0; i < kWidths.n_elem; ++i) {
    //! [spread]
    const arma::mat q = rng.normal(kPairs, width(kWidths(i)));  // (pairs × d_k), drawn first
    const arma::mat k = rng.normal(kPairs, width(kWidths(i)));  // (pairs × d_k)
    const attn::ch05::Spread s = attn::ch05::measure_spread(q, k);
    //! [spread]
    variance(i) = s.variance;
    typical(i) = s.mean_abs;
    fmt::print(ch.out, "{:6.0f}  {:10.2f}  {:13.3f}  {:11.2f}\n", kWidths(i), s.variance,
               s.variance / kWidths(i), s.mean_abs);
  }
  //! [check-spread]
  ch.checks.claim("as d_k grows, q·k drifts further from zero: mean |q·k| grows at every doubling",
                  arma::all(arma::diff(typical) > 0.0));
  //! [check-spread]
  const attn::book::Series unscaled{.label = "var(q·k)", .y = variance, .colour = colour::red};
  const attn::book::Series scaled{
      .label = "var(q·k / √d_k) = var(q·k) / d_k", .y = variance / kWidths, .colour = colour::blue};
  const attn::book::Series theory{
      .label = "d_k (theory)", .y = kWidths, .colour = colour::dark_grey, .dashed = true};
  ch.plots.lines({.name = "05-01-spread",
                  .title = "The spread of q·k grows with d_k; scaling removes it",
                  .x_label = "d_k",
                  .y_label = "variance",
                  .x = kWidths,
                  .series = {unscaled, scaled, theory},
                  .log_x = true,
                  .log_y = true});
}

SaturationTable saturation_table(attn::book::Chapter& ch, attn::numpy::Generator& rng) {
  fmt::print(ch.out, "\n2. One query against {} keys, mean over {} queries per d_k\n", kKeys,
             kTrials);
  fmt::print(ch.out, "   (uniform weights would give max weight {:.4f}, entropy {:.3f})\n\n",
             1.0 / kKeys, std::log(static_cast<double>(kKeys)));
  fmt::print(ch.out, "          ---------- unscaled ----------   ----------- scaled -----------\n");
  fmt::print(ch.out,
             "   d_k   max weight  entropy  |Jacobian|   max weight  entropy  |Jacobian|\n");
  SaturationTable table;
  for (arma::uword i = 0; i < kWidths.n_elem; ++i) {
    //! [saturation]
    const arma::uword d_k = width(kWidths(i));
    std::vector<attn::ch05::Probe> probes(kTrials);
    for (attn::ch05::Probe& p : probes) {
      p.q = rng.normal(1, d_k);      // (1 × d_k), drawn first
      p.K = rng.normal(kKeys, d_k);  // (16 × d_k)
    }
    const attn::ch05::Saturation measured = attn::ch05::measure_saturation(probes);
    //! [saturation]
    const attn::ch05::Sharpness& raw = measured.unscaled;
    const attn::ch05::Sharpness& scaled = measured.scaled;
    table.max_unscaled(i) = raw.max_weight;
    table.max_scaled(i) = scaled.max_weight;
    table.jacobian_unscaled(i) = raw.jacobian_norm;
    table.jacobian_scaled(i) = scaled.jacobian_norm;
    fmt::print(ch.out, "{:6.0f}  {:11.3f}  {:7.3f}  {:10.4f}  {:11.3f}  {:7.3f}  {:10.4f}\n",
               kWidths(i), raw.max_weight, raw.entropy, raw.jacobian_norm, scaled.max_weight,
               scaled.entropy, scaled.jacobian_norm);
  }
  return table;
}

void check_saturation(attn::book::Chapter& ch, const SaturationTable& t) {
  //! [check-saturation]
  const bool saturates = t.max_unscaled.back() > kNearOne;
  ch.checks.claim(fmt::format("unscaled, softmax saturates: the largest weight rises toward 1 "
                              "(above {} at d_k = 1024)",
                              kNearOne),
                  saturates);

  const arma::rowvec from_8 = t.jacobian_unscaled.tail(kWidths.n_elem - 2);  // d_k = 8 .. 1024
  const bool shrinks = arma::all(arma::diff(from_8) < 0.0);
  const bool vanishes = t.jacobian_unscaled.back() < kFifth * t.jacobian_scaled.back();
  ch.checks.claim(fmt::format("unscaled, the gradients flatten out: |Jacobian| shrinks at every "
                              "doubling from d_k = 8, to below {} of the scaled one",
                              kFifth),
                  shrinks && vanishes);

  const bool still_says_something = flat(t.max_scaled) && flat(t.jacobian_scaled);
  ch.checks.claim(fmt::format("scaled, softmax still has something to say: the largest weight and "
                              "the Jacobian norm stay within ±{}% of their mean across widths",
                              100 * kFlat),
                  still_says_something);
  //! [check-saturation]
}

void plot_saturation(attn::book::Chapter& ch, const SaturationTable& t) {
  const attn::book::Series max_unscaled{
      .label = "unscaled: softmax(q·k)", .y = t.max_unscaled, .colour = colour::red};
  const attn::book::Series max_scaled{
      .label = "scaled: softmax(q·k / √d_k)", .y = t.max_scaled, .colour = colour::blue};
  ch.plots.lines({.name = "05-02-max-weight",
                  .title = "Largest softmax weight of one query over 16 keys",
                  .x_label = "d_k",
                  .y_label = "mean largest weight",
                  .x = kWidths,
                  .series = {max_unscaled, max_scaled},
                  .log_x = true,
                  .log_y = false});

  const attn::book::Series jacobian_unscaled{
      .label = "unscaled", .y = t.jacobian_unscaled, .colour = colour::red};
  const attn::book::Series jacobian_scaled{
      .label = "scaled", .y = t.jacobian_scaled, .colour = colour::blue};
  ch.plots.lines(
      {.name = "05-03-jacobian",
       .title = "Size of the softmax Jacobian: how much gradient gets back to the scores",
       .x_label = "d_k",
       .y_label = "mean Frobenius norm of J",
       .x = kWidths,
       .series = {jacobian_unscaled, jacobian_scaled},
       .log_x = true,
       .log_y = true,
       .key_at = "bottom left"});
}

// One width as grids: at d_k = 512, unscaled rows are near one-hot picks, scaled rows are not.
void grids_at_one_width(attn::book::Chapter& ch, attn::numpy::Generator& rng) {
  const arma::mat Q = rng.normal(kQueries.size(), kGridWidth);   // (6 × 512)
  const arma::mat K = rng.normal(kKeyNames.size(), kGridWidth);  // (8 × 512)
  const arma::mat raw = attn::math::softmax_rows(attn::math::attention_scores(Q, K, 1.0));
  const double scale = attn::math::score_scale(kGridWidth);
  const arma::mat scaled = attn::math::softmax_rows(attn::math::attention_scores(Q, K, scale));
  const arma::uword one_hot_raw = arma::accu(arma::max(raw, 1) > kOneHot);
  const arma::uword one_hot_scaled = arma::accu(arma::max(scaled, 1) > kOneHot);
  fmt::print(ch.out,
             "\n   at d_k = {}, six queries, eight keys: rows with a weight above {}: ", kGridWidth,
             kOneHot);
  fmt::print(ch.out, "unscaled {}, scaled {}\n", one_hot_raw, one_hot_scaled);
  const attn::book::Heatmap unscaled_panel{
      .title = "softmax(Q K^T)", .queries = kQueries, .keys = kKeyNames, .values = raw};
  const attn::book::Heatmap scaled_panel{
      .title = "softmax(Q K^T / √512)", .queries = kQueries, .keys = kKeyNames, .values = scaled};
  ch.plots.heatmaps({.name = "05-04-weights-at-512",
                     .title = "d_k = 512: unscaled (left) vs scaled (right)",
                     .panels = {unscaled_panel, scaled_panel}});
}

void row_wise(attn::book::Chapter& ch, attn::numpy::Generator& rng) {
  //! [row-wise]
  const arma::mat Q = rng.normal(kRowWiseTokens, kRowWiseWidth);  // (5 × 4)
  const arma::mat K = rng.normal(kRowWiseTokens, kRowWiseWidth);  // (5 × 4)
  const double scale = attn::math::score_scale(K.n_cols);
  const arma::mat S = attn::math::attention_scores(Q, K, scale);  // (5 × 5)
  const arma::mat per_row = attn::math::softmax_rows(S);          // each row sums to 1
  const arma::mat whole = attn::math::softmax_whole(S);           // all 25 sum to 1
  //! [row-wise]
  const std::vector<std::string> q(kQueries.begin(), kQueries.begin() + kRowWiseTokens);
  const std::vector<std::string> k(kKeyNames.begin(), kKeyNames.begin() + kRowWiseTokens);
  fmt::print(ch.out, "\n3. One score grid, two softmaxes\n\n");
  fmt::print(ch.out, "row-wise softmax\n{}\n", attn::book::grid_table(q, k, per_row));
  fmt::print(ch.out, "one softmax over the whole grid\n{}", attn::book::grid_table(q, k, whole));
  fmt::print(ch.out, "\nrow sums    row-wise {}\n", attn::book::vector_text(arma::sum(per_row, 1)));
  fmt::print(ch.out, "            whole    {}\n", attn::book::vector_text(arma::sum(whole, 1)));
  fmt::print(ch.out, "total       row-wise {:.2f}, whole {:.2f}\n", arma::accu(per_row),
             arma::accu(whole));
  const attn::book::Heatmap per_row_panel{
      .title = "row-wise: each row sums to 1", .queries = q, .keys = k, .values = per_row};
  const attn::book::Heatmap whole_panel{
      .title = "whole grid: everything sums to 1", .queries = q, .keys = k, .values = whole};
  ch.plots.heatmaps(
      {.name = "05-05-row-wise",
       .title = "The same scores: softmax per row (left) vs over the whole grid (right)",
       .panels = {per_row_panel, whole_panel}});
}

void tell_story(attn::book::Chapter& ch) {
  attn::numpy::Generator rng = attn::numpy::default_rng(kSeed);
  spread(ch, rng);
  const SaturationTable saturation = saturation_table(ch, rng);
  check_saturation(ch, saturation);
  plot_saturation(ch, saturation);
  grids_at_one_width(ch, rng);
  row_wise(ch, rng);
}

}  // namespace

int main(int argc, char** argv) {
  const attn::book::ChapterInfo info{
      .executable = "ch05_scaling",
      .summary = "Chapter 05: why attention divides by √d_k and runs softmax along rows, measured"};
  return attn::book::run_chapter(argc, argv, info, tell_story);
}
