// Chapter 09: attention at scale, never holding the n × n grid of scores. Timings are bench/'s,
// not this program's. Its page: chapters/09_at_scale/chapter.md.

#include <attn/math/attention.hpp>
#include <attn/book/chapter.hpp>
#include <04_self_attention/random_sentence.hpp>
#include <attn/math/mask.hpp>
#include <attn/math/measure.hpp>
#include <attn/numpy/numpy_print.hpp>
#include <attn/numpy/numpy_random.hpp>
#include <attn/book/resident.hpp>
#include <attn/math/softmax.hpp>
#include <attn/math/streaming.hpp>
#include <attn/fast/streaming.hpp>

#include <CLI/CLI.hpp>
#include <fmt/ostream.h>

#include <cmath>

namespace {
using attn::relative_gap;

//! [article-numbers]
// The recurrence worked by hand on scores [1, 3, 2, 5] and V = [[1, 0], [0, 1], [1, 1], [2, 1]]
// in blocks of two keys, to 6 decimals: l and O after each block, then the output and lse.
const std::vector<double> kByHand = {1.135335, 0.135335, 1.0,      1.203438, 2.068103,
                                     1.185122, 1.718495, 0.984781, 5.185182};
const double kBoundMB = 200.0;  // n = 65536, d = 64: the peak resident memory allowed
//! [article-numbers]

double mb(double bytes) { return bytes / 1e6; }
void by_hand(attn::Chapter& ch) {
  //! [by-hand]
  const arma::rowvec scores = {1, 3, 2, 5};
  const arma::mat V = {{1, 0}, {0, 1}, {1, 1}, {2, 1}};
  const std::vector<attn::OnlineStep> steps = attn::online_softmax_steps(scores, V, 2);
  //! [by-hand]
  fmt::print(ch.out, "The online softmax by hand: scores {}, V rows [1 0] [0 1] [1 1] [2 1], blocks "
             "of 2 keys\n\nafter keys   m         l          O\n", attn::numpy::array_str(scores));
  for (std::size_t b = 0; b < steps.size(); ++b)
    fmt::print(ch.out, "  {}, {}     {:<8.6f}  {:<9.6f}  [{:.6f}, {:.6f}]\n", 2 * b + 1, 2 * b + 2,
               steps[b].m, steps[b].l, steps[b].O(0), steps[b].O(1));
  const arma::rowvec out = steps.back().O / steps.back().l, direct = attn::softmax(scores) * V;
  const double lse = steps.back().m + std::log(steps.back().l);
  fmt::print(ch.out, "\noutput O / l = [{:.6f}, {:.6f}], log-sum-exp m + log l = {:.6f}\n"
             "direct softmax(scores) V = [{:.6f}, {:.6f}]\n", out(0), out(1), lse, direct(0), direct(1));
  ch.checks.numbers("by hand", {"l1", "O1_0", "O1_1", "l2", "O2_0", "O2_1", "out_0", "out_1", "lse"},
                    kByHand, 6, {steps[0].l, steps[0].O(0), steps[0].O(1), steps[1].l,
                                 steps[1].O(0), steps[1].O(1), out(0), out(1), lse});
  ch.checks.claim("streaming equals the direct softmax (1e-15)", relative_gap(out, direct) <= 1e-15);
}

void sentence(attn::Chapter& ch) {
  const auto s = attn::examples::random_sentence("0", "the cat drank the milk", {8, 4, 4, 0.5});
  const attn::QKV qkv = attn::project(s.X, s.W);
  const double c = attn::score_scale(qkv.K.n_cols);
  const attn::Attention full = attn::attend(qkv.Q, qkv.K, qkv.V, c);
  //! [sentence]
  const auto fast = attn::streaming_attention(qkv.Q, qkv.K, qkv.V, c, {}, {2, 2});  // 2 × 2 blocks
  // Any weight, afterwards, from its score and its row's log-sum-exp: w_ij = e^(s_ij − lse_i)
  const arma::mat S = qkv.Q * qkv.K.t() * c, weights = arma::exp(S.each_col() - fast.log_sum_exp);
  //! [sentence]
  fmt::print(ch.out, "\nChapter 04's sentence, streamed in blocks of 2 queries and 2 keys:\n"
             "Z =\n{}\nlog-sum-exp per token {}\n", attn::numpy::matrix_str(fast.output),
             attn::numpy::array_str(fast.log_sum_exp.t()));
  ch.checks.claim("streaming Z equals attend()'s on the sentence (1e-12)",
                  relative_gap(fast.output, full.output) <= 1e-12);
  ch.checks.claim("e^(s - log-sum-exp) gives back attend()'s weights (1e-12)",
                  relative_gap(weights, full.weights) <= 1e-12);
  ch.plots.heatmap({"09-01-weights-from-lse", "Weights rebuilt from the scores and each row's "
                    "log-sum-exp", s.tokens, s.tokens, weights, attn::ColourScale::weights});
}

// Up to n = 4096 the reference still fits, and the two agree; at n = 65536 it does not.
void large(attn::Chapter& ch, arma::uword n) {
  attn::numpy::Generator rng = attn::numpy::default_rng("9");
  const arma::mat Q = rng.normal(n, 64), K = rng.normal(n, 64), V = rng.normal(n, 64);
  const double c = attn::score_scale(64);
  const attn::AttentionMemory memory = attn::attention_memory(n, n, 64, 64);  // by formula
  fmt::print(ch.out, "\nn = {}, d = 64, one head, causal; Q, K, V from default_rng(9).normal\n"
             "  the reference holds scores, exponentials and weights: 3 n² doubles = {:.1f} MB\n"
             "  streaming holds Q, K, V and Z: 4 n d doubles = {:.1f} MB, and per thread one block "
             "of scores, {:.2f} MB\n", n, mb(memory.reference_grids), mb(memory.streaming_data),
             mb(memory.streaming_block));
  const arma::umat plan = attn::streaming_schedule(n, n, {true, 0});  // 128 queries × 256 keys
  fmt::print(ch.out, "  blocks of 128 queries and 256 keys: {} of {} computed, {} of them partly "
             "masked\n", arma::accu(plan > 0), plan.n_elem, arma::accu(plan == 1));
  if (n <= 4096) {
    ch.plots.heatmap({"09-02-causal-plan", fmt::format("Causal, n = {}: skipped (0), partly masked "
                      "(0.5), whole (1)", n), attn::tick_labels(plan.n_rows, 4),
                      attn::tick_labels(plan.n_cols, 2), arma::conv_to<arma::mat>::from(plan) / 2.0,
                      attn::ColourScale::weights, 1, false, "block of 256 keys",
                      "block of 128 queries", "computed"});
    const arma::mat Z = attn::fast::streaming_attention(Q, K, V, c, {true, 0}).output;
    ch.checks.claim(fmt::format("n = {}: streaming equals attend() (1e-12)", n),
                    relative_gap(Z, attn::attend(Q, K, V, c, attn::Mask::causal(n)).output) <= 1e-12);
    return;
  }
  attn::reset_peak_resident();
  const arma::mat Z = attn::fast::streaming_attention(Q, K, V, c, {true, 0}).output;
  const double peak = mb(static_cast<double>(attn::resident_memory().peak));
  fmt::print(ch.log, "n = {}: peak resident memory {:.1f} MB\n", n, peak);  // varies: stderr
  ch.checks.claim(fmt::format("n = {}: peak resident memory under {:.0f} MB", n, kBoundMB),
                  peak < kBoundMB);
  bool rows_match = true;  // three rows, each against the direct softmax over its own keys
  for (const arma::uword i : {arma::uword{0}, n / 3, n - 1})
    rows_match &= relative_gap(Z.row(i), attn::softmax(Q.row(i) * K.head_rows(i + 1).t() * c) *
                                             V.head_rows(i + 1)) <= 1e-12;
  ch.checks.claim("rows 0, n/3 and n-1 equal the direct softmax (1e-12)", rows_match);
}

void decoding(attn::Chapter& ch) {
  const arma::uword T = 512, d = 64;
  attn::numpy::Generator rng = attn::numpy::default_rng("10");
  const arma::mat Q = rng.normal(T, d), K = rng.normal(T, d), V = rng.normal(T, d);
  const double c = attn::score_scale(d);
  const arma::mat full = attn::fast::streaming_attention(Q, K, V, c, {true, 0}).output;
  //! [decode]
  attn::KVCache cache(d, d);
  double worst = 0.0;
  for (arma::uword t = 0; t < T; ++t) {
    cache.append(K.row(t), V.row(t));                  // this token's key and value, once
    const arma::rowvec z = cache.attend(Q.row(t), c);  // one query: 2 (t + 1) d multiply-adds
    worst = std::max(worst, relative_gap(z, full.row(t)));
  }
  //! [decode]
  // Row i of causal attention costs 2 i d multiply-adds (i scores, then i values weighted), so
  // recomputing rows 1 to t costs 2 d (1 + 2 + ... + t) = t (t + 1) d, about t² d.
  fmt::print(ch.out, "\nDecoding {} tokens one at a time with a KV cache, d = {}\n  multiply-adds at "
             "step t:   with the cache (2 t d)   recomputing rows 1 to t (t (t + 1) d)\n", T, d);
  for (const arma::uword t : {1, 16, 128, 512})
    fmt::print(ch.out, "  t = {:<16}{:>24}{:>39}\n", t, 2 * t * d, t * (t + 1) * d);
  ch.checks.claim("each decoded output equals causal attention's row (1e-12)", worst <= 1e-12);
}

}  // namespace

int main(int argc, char** argv) {
  const attn::ChapterInfo info{"ch09_at_scale", "Chapter 09: the online softmax, memory O(n d) "
                               "at n = 65536, and a KV cache", false, "the worked example"};
  bool quick = false;
  const auto options = [&](CLI::App& app) {
    app.add_flag("--quick", quick, "n = 1024 and 8192, not 4096 and 65536: the same checks, faster");
  };
  return attn::run_chapter(argc, argv, info, options, [&](attn::Chapter& ch) {
    by_hand(ch);
    sentence(ch);
    large(ch, quick ? 1024 : 4096);
    large(ch, quick ? 8192 : 65536);
    decoding(ch);
  });
}
