// Chapter 05: why divide by √d_k, and why softmax runs along rows, measured on draws from
// default_rng(5); tests/data/generate_scaling_fixtures.py reruns every table in numpy.

#include <attn/math/attention.hpp>
#include <attn/book/chapter.hpp>
#include <attn/book/grid_text.hpp>
#include <attn/math/measure.hpp>
#include <attn/numpy/numpy_random.hpp>
#include <attn/math/softmax.hpp>

#include <fmt/ostream.h>

#include <cmath>
#include <string>
#include <vector>

namespace {

//! [setup]
constexpr std::uint64_t kSeed = 5;
const arma::rowvec kWidths = {2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};  // d_k
constexpr arma::uword kPairs = 4000;             // (q, k) pairs per d_k, for the spread
constexpr arma::uword kKeys = 16, kTrials = 200;  // saturation: keys per query, queries per d_k
//! [setup]

//! [article-numbers]
// Neither article prints a number here; both say what the scale prevents. Read as: unscaled,
// the largest weight ends above kNearOne ("~1") and |Jacobian| below kFifth of the scaled one
// ("~0"); scaled, both stay within ±kFlat of their mean ("still has something to say").
constexpr double kNearOne = 0.95, kFifth = 0.2, kFlat = 0.15;
//! [article-numbers]

arma::uword width(double d) { return static_cast<arma::uword>(d); }
const std::vector<std::string> kQueries = {"q1", "q2", "q3", "q4", "q5", "q6"};
const std::vector<std::string> kKeyNames = {"k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8"};
bool flat(const arma::rowvec& v) { return arma::all(arma::abs(v / arma::mean(v) - 1) < kFlat); }

void spread(attn::Chapter& ch, attn::numpy::Generator& rng) {
  fmt::print(ch.out, "1. The spread of q·k, {} pairs per d_k, entries drawn from N(0, 1)\n"
                     "   (var(q·k)/d_k is also the variance of the scaled score q·k/√d_k)\n\n"
                     "   d_k    var(q·k)   var(q·k)/d_k   mean |q·k|\n", kPairs);
  arma::rowvec variance(kWidths.n_elem), typical(kWidths.n_elem);
  for (arma::uword i = 0; i < kWidths.n_elem; ++i) {
    //! [spread]
    const arma::mat q = rng.normal(kPairs, width(kWidths(i)));  // (pairs × d_k), drawn first
    const arma::mat k = rng.normal(kPairs, width(kWidths(i)));  // (pairs × d_k)
    const attn::Spread s = attn::measure_spread(q, k);
    //! [spread]
    variance(i) = s.variance, typical(i) = s.mean_abs;
    fmt::print(ch.out, "{:6.0f}  {:10.2f}  {:13.3f}  {:11.2f}\n", kWidths(i), s.variance,
               s.variance / kWidths(i), s.mean_abs);
  }
  //! [check-spread]
  ch.checks.claim("as d_k grows, q·k drifts further from zero: mean |q·k| grows at every doubling",
                  arma::all(arma::diff(typical) > 0.0));
  //! [check-spread]
  ch.plots.lines({"05-01-spread", "The spread of q·k grows with d_k; scaling removes it", "d_k",
                  "variance", kWidths, {{"var(q·k)", variance, "#d6604d"},
                  {"var(q·k / √d_k) = var(q·k) / d_k", variance / kWidths, "#2166ac"},
                  {"d_k (theory)", kWidths, "#4d4d4d", true}}, true, true});
}

void saturation(attn::Chapter& ch, attn::numpy::Generator& rng) {
  fmt::print(ch.out, "\n2. One query against {} keys, mean over {} queries per d_k\n"
                     "   (uniform weights would give max weight {:.4f}, entropy {:.3f})\n\n"
                     "          ---------- unscaled ----------   ----------- scaled -----------\n"
                     "   d_k   max weight  entropy  |Jacobian|   max weight  entropy  |Jacobian|\n",
             kKeys, kTrials, 1.0 / kKeys, std::log(static_cast<double>(kKeys)));
  arma::mat t(4, kWidths.n_elem);  // rows: max weight unscaled, scaled; |J| unscaled, scaled
  for (arma::uword i = 0; i < kWidths.n_elem; ++i) {
    //! [saturation]
    const arma::uword d_k = width(kWidths(i));
    std::vector<attn::Probe> probes(kTrials);  // q (1 × d_k), then K (16 × d_k), in brace order
    for (attn::Probe& p : probes) p = {rng.normal(1, d_k), rng.normal(kKeys, d_k)};
    const auto [raw, scaled] = attn::measure_saturation(probes);
    //! [saturation]
    t.col(i) = arma::vec{raw.max_weight, scaled.max_weight, raw.jacobian_norm,
                         scaled.jacobian_norm};
    fmt::print(ch.out, "{:6.0f}  {:11.3f}  {:7.3f}  {:10.4f}  {:11.3f}  {:7.3f}  {:10.4f}\n",
               kWidths(i), raw.max_weight, raw.entropy, raw.jacobian_norm, scaled.max_weight,
               scaled.entropy, scaled.jacobian_norm);
  }
  const arma::rowvec max_raw = t.row(0), max_scaled = t.row(1), jac_raw = t.row(2);
  //! [check-saturation]
  ch.checks.claim(fmt::format("unscaled, softmax saturates: the largest weight rises toward 1 "
                              "(above {} at d_k = 1024)", kNearOne), max_raw.back() > kNearOne);
  ch.checks.claim(fmt::format("unscaled, the gradients flatten out: |Jacobian| shrinks at every "
                              "doubling from d_k = 8, to below {} of the scaled one", kFifth),
                  arma::all(arma::diff(jac_raw.tail(kWidths.n_elem - 2)) < 0.0) &&
                      jac_raw.back() < kFifth * t.row(3).back());
  ch.checks.claim(fmt::format("scaled, softmax still has something to say: the largest weight and "
                              "the Jacobian norm stay within ±{}% of their mean across widths",
                              100 * kFlat), flat(max_scaled) && flat(t.row(3)));
  //! [check-saturation]
  ch.plots.lines({"05-02-max-weight", "Largest softmax weight of one query over 16 keys", "d_k",
                  "mean largest weight", kWidths, {{"unscaled: softmax(q·k)", max_raw, "#d6604d"},
                  {"scaled: softmax(q·k / √d_k)", max_scaled, "#2166ac"}}, true, false});
  ch.plots.lines({"05-03-jacobian",
                  "Size of the softmax Jacobian: how much gradient gets back to the scores",
                  "d_k", "mean Frobenius norm of J", kWidths, {{"unscaled", jac_raw, "#d6604d"},
                  {"scaled", t.row(3), "#2166ac"}}, true, true, "bottom left"});
  // One width as grids: at d_k = 512, unscaled rows are near one-hot picks, scaled rows are not.
  const arma::uword d_k = 512;
  const double one_hot = 0.99;  // a row whose largest weight is above this is a near one-hot pick
  const arma::mat Q = rng.normal(6, d_k), K = rng.normal(8, d_k);  // (6 × 512), (8 × 512)
  const arma::mat raw = attn::softmax_rows(attn::attention_scores(Q, K, 1.0));
  const arma::mat scaled = attn::softmax_rows(attn::attention_scores(Q, K, attn::score_scale(d_k)));
  fmt::print(ch.out, "\n   at d_k = {}, six queries, eight keys: rows with a weight above {}: "
                     "unscaled {}, scaled {}\n", d_k, one_hot,
             arma::accu(arma::max(raw, 1) > one_hot), arma::accu(arma::max(scaled, 1) > one_hot));
  ch.plots.heatmaps({"05-04-weights-at-512", "d_k = 512: unscaled (left) vs scaled (right)",
                     {{"", "softmax(Q K^T)", kQueries, kKeyNames, raw},
                      {"", "softmax(Q K^T / √512)", kQueries, kKeyNames, scaled}}});
}

void row_wise(attn::Chapter& ch, attn::numpy::Generator& rng) {
  //! [row-wise]
  const arma::mat Q = rng.normal(5, 4), K = rng.normal(5, 4);               // (5 × 4) each
  const arma::mat S = attn::attention_scores(Q, K, attn::score_scale(K.n_cols));  // (5 × 5)
  const arma::mat per_row = attn::softmax_rows(S);                          // each row sums to 1
  const arma::mat whole = attn::softmax_whole(S);                           // all 25 sum to 1
  //! [row-wise]
  const std::vector<std::string> q(kQueries.begin(), kQueries.end() - 1),
      k(kKeyNames.begin(), kKeyNames.begin() + 5);
  fmt::print(ch.out, "\n3. One score grid, two softmaxes\n\nrow-wise softmax\n{}\n"
                     "one softmax over the whole grid\n{}",
             attn::grid_table(q, k, per_row), attn::grid_table(q, k, whole));
  fmt::print(ch.out, "\nrow sums    row-wise {}\n            whole    {}\n"
                     "total       row-wise {:.2f}, whole {:.2f}\n",
             attn::vector_text(arma::sum(per_row, 1)), attn::vector_text(arma::sum(whole, 1)),
             arma::accu(per_row), arma::accu(whole));
  ch.plots.heatmaps({"05-05-row-wise",
                     "The same scores: softmax per row (left) vs over the whole grid (right)",
                     {{"", "row-wise: each row sums to 1", q, k, per_row},
                      {"", "whole grid: everything sums to 1", q, k, whole}}});
}

void tell_story(attn::Chapter& ch) {
  attn::numpy::Generator rng = attn::numpy::default_rng(kSeed);
  spread(ch, rng);
  saturation(ch, rng);
  row_wise(ch, rng);
}

}  // namespace

int main(int argc, char** argv) {
  const attn::ChapterInfo info{"ch05_scaling", "Chapter 05: why attention divides by √d_k and "
                                               "runs softmax along rows, measured"};
  return attn::run_chapter(argc, argv, info, tell_story);
}
