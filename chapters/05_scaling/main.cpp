// Chapter 05: why divide by √d_k, and why softmax runs along rows, measured.
//
// Both articles state that without the 1/√d_k scale, larger key widths push scores apart until
// softmax picks one key and its gradient vanishes. Here that is measured with standard normal
// queries and keys drawn by the numpy-compatible generator (seed 5, in the order the code
// draws them), so a Python reader can rerun every number.
// The book's page for this chapter is chapters/05_scaling/chapter.md.

#include <attn/attention.hpp>
#include <attn/backward.hpp>
#include <attn/chapter.hpp>
#include <attn/gradient_check.hpp>
#include <attn/grid_text.hpp>
#include <attn/numpy_random.hpp>
#include <attn/softmax.hpp>

#include <fmt/ostream.h>

#include <cmath>
#include <string>
#include <vector>

namespace {

//! [setup]
constexpr std::uint64_t kSeed = 5;
const arma::rowvec kWidths = {2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};  // d_k
constexpr arma::uword kPairs = 4000;  // (q, k) pairs per width, for the variance
constexpr arma::uword kKeys = 16;     // keys per query, for saturation
constexpr arma::uword kTrials = 200;  // queries per width, averaged
//! [setup]

arma::uword width(double d) { return static_cast<arma::uword>(d); }

// ---- 1. spread ---------------------------------------------------------------------------

//! [spread]
struct Spread {
  double variance;  // var(q·k); dividing the scores by √d_k divides it by d_k
  double mean_abs;  // mean |q·k|: the typical size of a score
};

Spread measure_spread(attn::numpy::Generator& rng, arma::uword d_k) {
  const arma::mat q = rng.normal(kPairs, d_k);   // (pairs × d_k)
  const arma::mat k = rng.normal(kPairs, d_k);   // (pairs × d_k)
  const arma::vec dots = arma::sum(q % k, 1);    // (pairs × 1): one q·k per pair
  return {arma::var(dots, 1), arma::mean(arma::abs(dots))};
}
//! [spread]

void spread(attn::Chapter& ch, attn::numpy::Generator& rng) {
  fmt::print(ch.out, "1. The spread of q·k, {} pairs per d_k, entries drawn from N(0, 1)\n"
                     "   (var(q·k)/d_k is also the variance of the scaled score q·k/√d_k)\n\n"
                     "   d_k    var(q·k)   var(q·k)/d_k   mean |q·k|\n", kPairs);
  arma::rowvec variance(kWidths.n_elem), typical(kWidths.n_elem);
  for (arma::uword i = 0; i < kWidths.n_elem; ++i) {
    const Spread s = measure_spread(rng, width(kWidths(i)));
    variance(i) = s.variance;
    typical(i) = s.mean_abs;
    fmt::print(ch.out, "{:6.0f}  {:10.2f}  {:13.3f}  {:11.2f}\n", kWidths(i), s.variance,
               s.variance / kWidths(i), s.mean_abs);
  }
  //! [check-spread]
  ch.checks.claim("var(q·k) grows like d_k: within 10% of d_k at every width, so the scaled "
                  "score q·k/√d_k has variance within 10% of 1",
                  arma::all(arma::abs(variance / kWidths - 1.0) < 0.10));
  ch.checks.claim("the typical score mean |q·k| grows at every doubling of d_k",
                  arma::all(arma::diff(typical) > 0.0));
  //! [check-spread]
  ch.plots.lines({"05-01-spread", "The spread of q·k grows with d_k; scaling removes it", "d_k",
                  "variance", kWidths,
                  {{"var(q·k)", variance, "#d6604d"},
                   {"var(q·k / √d_k) = var(q·k) / d_k", variance / kWidths, "#2166ac"},
                   {"d_k (theory)", kWidths, "#4d4d4d", true}},
                  true, true});
}

// ---- 2. saturation -----------------------------------------------------------------------

//! [sharpness]
// How decided one softmax row is: its largest weight, its entropy (in nats) and the size of
// its Jacobian, which scales every gradient that flows back into the scores.
struct Sharpness {
  double max_weight = 0, entropy = 0, jacobian_norm = 0;
};

Sharpness sharpness(const arma::rowvec& scores) {
  const arma::rowvec w = attn::softmax(scores);
  const arma::rowvec used = w.elem(arma::find(w > 0)).t();  // 0 · log 0 counts as 0
  return {w.max(), -arma::accu(used % arma::log(used)),
          arma::norm(attn::softmax_jacobian(w), "fro")};
}
//! [sharpness]

struct Saturation {
  Sharpness unscaled, scaled;  // means over the trials
};

Saturation measure_saturation(attn::numpy::Generator& rng, arma::uword d_k) {
  Saturation mean;
  const double root = std::sqrt(static_cast<double>(d_k));
  for (arma::uword t = 0; t < kTrials; ++t) {
    const arma::rowvec q = rng.normal(1, d_k);      // (1 × d_k)
    const arma::mat K = rng.normal(kKeys, d_k);     // (16 × d_k)
    const arma::rowvec scores = q * K.t();          // (1 × 16)
    for (auto [sum, s] : {std::pair{&mean.unscaled, sharpness(scores)},
                          std::pair{&mean.scaled, sharpness(scores / root)}}) {
      sum->max_weight += s.max_weight / kTrials;
      sum->entropy += s.entropy / kTrials;
      sum->jacobian_norm += s.jacobian_norm / kTrials;
    }
  }
  return mean;
}

void saturation(attn::Chapter& ch, attn::numpy::Generator& rng) {
  fmt::print(ch.out, "\n2. One query against {} keys, mean over {} queries per d_k\n"
                     "   (uniform weights would give max weight {:.4f}, entropy {:.3f})\n\n"
                     "          ---------- unscaled ----------   ----------- scaled -----------\n"
                     "   d_k   max weight  entropy  |Jacobian|   max weight  entropy  |Jacobian|\n",
             kKeys, kTrials, 1.0 / kKeys, std::log(static_cast<double>(kKeys)));
  arma::rowvec max_raw(kWidths.n_elem), max_scaled(kWidths.n_elem), jac_raw(kWidths.n_elem),
      jac_scaled(kWidths.n_elem);
  for (arma::uword i = 0; i < kWidths.n_elem; ++i) {
    const Saturation s = measure_saturation(rng, width(kWidths(i)));
    max_raw(i) = s.unscaled.max_weight;
    max_scaled(i) = s.scaled.max_weight;
    jac_raw(i) = s.unscaled.jacobian_norm;
    jac_scaled(i) = s.scaled.jacobian_norm;
    fmt::print(ch.out, "{:6.0f}  {:11.3f}  {:7.3f}  {:10.4f}  {:11.3f}  {:7.3f}  {:10.4f}\n",
               kWidths(i), s.unscaled.max_weight, s.unscaled.entropy, s.unscaled.jacobian_norm,
               s.scaled.max_weight, s.scaled.entropy, s.scaled.jacobian_norm);
  }
  //! [check-saturation]
  const arma::uword last = kWidths.n_elem - 1;
  ch.checks.claim("unscaled, the largest weight rises toward 1 (above 0.95 at d_k = 1024)",
                  max_raw(last) > 0.95 && max_raw(last) > max_raw(0));
  const arma::rowvec from_8 = jac_raw.tail(kWidths.n_elem - 2);  // d_k = 8 ... 1024
  ch.checks.claim("unscaled, the Jacobian norm falls toward 0: it shrinks at every doubling "
                  "from d_k = 8 on",
                  arma::all(arma::diff(from_8) < 0.0));
  ch.checks.claim("unscaled, the Jacobian at d_k = 1024 is below a fifth of the scaled one",
                  jac_raw(last) < 0.2 * jac_scaled(last));
  ch.checks.claim("scaled, the largest weight stays flat (within ±15% across all widths)",
                  max_scaled.max() < 1.15 * arma::mean(max_scaled) &&
                      max_scaled.min() > 0.85 * arma::mean(max_scaled));
  ch.checks.claim("scaled, the Jacobian norm stays flat (within ±15% across all widths)",
                  jac_scaled.max() < 1.15 * arma::mean(jac_scaled) &&
                      jac_scaled.min() > 0.85 * arma::mean(jac_scaled));
  //! [check-saturation]
  ch.plots.lines({"05-02-max-weight", "Largest softmax weight of one query over 16 keys", "d_k",
                  "mean largest weight", kWidths,
                  {{"unscaled: softmax(q·k)", max_raw, "#d6604d"},
                   {"scaled: softmax(q·k / √d_k)", max_scaled, "#2166ac"}},
                  true, false});
  ch.plots.lines({"05-03-jacobian", "Size of the softmax Jacobian: how much gradient gets through",
                  "d_k", "mean Frobenius norm of J", kWidths,
                  {{"unscaled", jac_raw, "#d6604d"}, {"scaled", jac_scaled, "#2166ac"}}, true,
                  true, "bottom left"});
}

std::vector<std::string> labels(const std::string& prefix, arma::uword count) {
  std::vector<std::string> out;
  for (arma::uword i = 1; i <= count; ++i) out.push_back(prefix + std::to_string(i));
  return out;
}

void saturated_grids(attn::Chapter& ch, attn::numpy::Generator& rng) {
  const arma::uword d_k = 512;
  const arma::mat Q = rng.normal(6, d_k), K = rng.normal(8, d_k);  // (6 × 512), (8 × 512)
  const arma::mat raw = attn::softmax_rows(Q * K.t());
  const arma::mat scaled = attn::softmax_rows(Q * K.t() / std::sqrt(static_cast<double>(d_k)));
  fmt::print(ch.out, "\n   at d_k = {}, six queries against eight keys: rows whose largest "
                     "weight is above 0.99: unscaled {}, scaled {}\n",
             d_k, arma::accu(arma::max(raw, 1) > 0.99), arma::accu(arma::max(scaled, 1) > 0.99));
  ch.plots.heatmaps({"05-04-weights-at-512", "d_k = 512: unscaled (left) vs scaled (right)",
                     {{"", "softmax(Q K^T)", labels("q", 6), labels("k", 8), raw},
                      {"", "softmax(Q K^T / √512)", labels("q", 6), labels("k", 8), scaled}}});
}

// ---- 3. row-wise -------------------------------------------------------------------------

void row_wise(attn::Chapter& ch, attn::numpy::Generator& rng) {
  //! [row-wise]
  const arma::mat Q = rng.normal(5, 4), K = rng.normal(5, 4);  // (5 × 4) each
  const arma::mat S = Q * K.t() / 2.0;                          // (5 × 5), √d_k = 2
  const arma::mat per_row = attn::softmax_rows(S);              // each row sums to 1
  const arma::mat whole = attn::softmax_whole(S);               // all 25 entries sum to 1
  //! [row-wise]
  const std::vector<std::string> q = labels("q", 5), k = labels("k", 5);
  fmt::print(ch.out, "\n3. One score grid, two softmaxes\n\nrow-wise softmax\n{}",
             attn::grid_table(q, k, per_row));
  fmt::print(ch.out, "\none softmax over the whole grid\n{}", attn::grid_table(q, k, whole));
  fmt::print(ch.out, "\nrow sums    row-wise {}\n            whole    {}\ntotal       row-wise "
                     "{:.2f}, whole {:.2f}\n",
             attn::vector_text(arma::sum(per_row, 1)), attn::vector_text(arma::sum(whole, 1)),
             arma::accu(per_row), arma::accu(whole));
  //! [check-row-wise]
  ch.checks.claim("row-wise: every row sums to 1",
                  arma::all(arma::abs(arma::sum(per_row, 1) - 1.0) < 1e-12));
  ch.checks.claim("whole-matrix: the grid sums to 1 but its rows do not",
                  std::abs(arma::accu(whole) - 1.0) < 1e-12 &&
                      arma::any(arma::abs(arma::sum(whole, 1) - 1.0) > 0.1));
  //! [check-row-wise]
  ch.plots.heatmaps({"05-05-row-wise", "The same scores: softmax per row (left) vs over the whole grid (right)",
                     {{"", "row-wise: each row sums to 1", q, k, per_row},
                      {"", "whole grid: everything sums to 1", q, k, whole}}});
}

// ---- the gradients behind the Jacobian ----------------------------------------------------

void gradient_check(attn::Chapter& ch, attn::numpy::Generator& rng) {
  //! [gradient-check]
  const arma::mat Q = rng.normal(5, 4), K = rng.normal(6, 4), V = rng.normal(6, 3);
  const arma::mat R = rng.normal(5, 3);  // loss L = Σ Z ⊙ R, so ∂L/∂Z = R
  const double scale = 0.5;              // 1/√d_k
  const auto loss = [&](const arma::mat& q, const arma::mat& k, const arma::mat& v) {
    return arma::accu(attn::attend(q, k, v, scale).output % R);
  };
  const attn::AttentionGradients g =
      attn::attend_backward(Q, K, V, attn::attend(Q, K, V, scale), R, scale);
  const double worst = std::max(
      {attn::check_gradient([&](const arma::mat& x) { return loss(x, K, V); }, Q, g.dQ).max_relative_error,
       attn::check_gradient([&](const arma::mat& x) { return loss(Q, x, V); }, K, g.dK).max_relative_error,
       attn::check_gradient([&](const arma::mat& x) { return loss(Q, K, x); }, V, g.dV).max_relative_error});
  //! [gradient-check]
  // The exact error depends on rounding, which differs between machines: it goes to stderr.
  fmt::print(ch.log, "gradient check: largest relative error of dQ, dK, dV = {:.1e}\n", worst);
  fmt::print(ch.out, "\nThe backward pass behind these Jacobians agrees with central finite "
                     "differences: largest relative error below 1e-6: {}\n",
             worst < 1e-6 ? "yes" : "no");
  ch.checks.claim("attend_backward matches finite differences (relative error below 1e-6)",
                  worst < 1e-6);
}

void tell_story(attn::Chapter& ch) {
  attn::numpy::Generator rng = attn::numpy::default_rng(kSeed);
  spread(ch, rng);
  saturation(ch, rng);
  saturated_grids(ch, rng);
  row_wise(ch, rng);
  gradient_check(ch, rng);
}

}  // namespace

int main(int argc, char** argv) {
  const attn::ChapterInfo info{"ch05_scaling",
                               "Chapter 05: why attention divides by √d_k and runs softmax along rows, "
                               "measured"};
  return attn::run_chapter(argc, argv, info, tell_story);
}
