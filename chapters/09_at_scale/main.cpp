// Chapter 09: attention at scale, never holding the n × n grid of scores.
//
// The online softmax is worked by hand on four scores, then streams chapter 04's sentence in
// blocks and rebuilds its weights from one number per row. Then causal attention on random
// tokens at two lengths: one short enough for the reference attend() to form its grid, where
// the two are compared whole, and one far too long for it, where the chapter measures the memory
// streaming takes and checks three rows. Last, decoding one token at a time with a KV cache.
// The chapter checks numbers, not times: timings are bench/'s. The book's page for this chapter
// is chapters/09_at_scale/chapter.md; it quotes the regions marked //! [name] below.

#include "online_softmax.hpp"

#include <04_self_attention/random_sentence.hpp>
#include <attn/book/chapter.hpp>
#include <attn/book/resident.hpp>
#include <attn/fast/streaming.hpp>
#include <attn/math/attention.hpp>
#include <attn/math/compare.hpp>
#include <attn/math/kv_cache.hpp>
#include <attn/math/mask.hpp>
#include <attn/math/softmax.hpp>
#include <attn/math/streaming.hpp>
#include <attn/numpy/numpy_print.hpp>
#include <attn/numpy/numpy_random.hpp>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace {

using attn::math::relative_gap;

//! [article-numbers]
// The recurrence worked by hand on scores [1, 3, 2, 5] and V = [[1, 0], [0, 1], [1, 1], [2, 1]]
// in blocks of two keys, to 6 decimals: l and O after each block, then the output and lse.
const std::vector<double> kByHand = {1.135335, 0.135335, 1.0,      1.203438, 2.068103,
                                     1.185122, 1.718495, 0.984781, 5.185182};
//! [article-numbers]

// The largest relative gap (attn::math::relative_gap) allowed between two computations of the same
// numbers, which differ by rounding only: four scores by hand, and everything larger.
const double kByHandTolerance = 1e-15;
const double kTolerance = 1e-12;

// Chapter 04's sentence, drawn as article 004 draws it.
const std::string kSentenceSeed = "0";
const std::string kSentence = "the cat drank the milk";
const attn::ch04::RandomSetup kSentenceSizes{.d_model = 8, .d_k = 4, .d_v = 4, .weight_scale = 0.5};

// The long runs and the decoding: one head, d = d_k = d_v = 64, Q, K and V random normals.
// The long runs are causal, in the library's blocks of 128 queries and 256 keys.
const arma::uword kHeadWidth = 64;
const std::string kLongSeed = "9";
const std::string kDecodingSeed = "10";
const attn::math::StreamingMask kCausal{.causal = true};
const attn::math::StreamingBlocks kBlocks{};

// The largest n whose full n × n grid of scores the chapter still forms. Up to it, the
// reference attend() forms its grids (three of them, 400 MB at n = 4096), the streamed output
// is compared with its output whole, and the plan of blocks is drawn. Beyond it, no grid is
// formed: the chapter measures the peak memory of the streamed pass alone, holds it under
// kPeakBoundMB, and compares three rows with the direct softmax over their own keys.
const arma::uword kLargestFullGrid = 4096;
const double kPeakBoundMB = 200.0;

// The two lengths of the long runs, one on each side of kLargestFullGrid; --quick runs shorter
// ones, with the same checks.
struct Lengths {
  arma::uword with_grid;     // compared with attend()
  arma::uword without_grid;  // measured
};
const Lengths kLengths{.with_grid = kLargestFullGrid, .without_grid = 65536};
const Lengths kQuickLengths{.with_grid = 1024, .without_grid = 8192};

// Decoding: this many tokens, one at a time; the table of costs shows these steps.
const arma::uword kDecodedTokens = 512;
const std::vector<arma::uword> kShownSteps = {1, 16, 128, 512};

double megabytes(double bytes) {
  return bytes / 1e6;
}

// A claim that two computations of the same numbers agree, the tolerance written after it:
// "streaming equals attend() (1e-12)".
void claim_agree(attn::book::Chapter& ch, const std::string& claim, double gap, double tolerance) {
  ch.checks.claim(fmt::format("{} ({:g})", claim, tolerance), gap <= tolerance);
}

// A matrix's rows on one line, numbers as fmt writes them: "[1 0] [0 1] [1 1] [2 1]".
std::string rows_on_one_line(const arma::mat& matrix) {
  std::vector<std::string> rows;
  for (arma::uword i = 0; i < matrix.n_rows; ++i) {
    const auto row = arma::conv_to<std::vector<double>>::from(matrix.row(i));
    rows.push_back(fmt::format("[{}]", fmt::join(row, " ")));
  }
  return fmt::format("{}", fmt::join(rows, " "));
}

// Q, K and V for n tokens, each (n × d), drawn in that order from numpy's default_rng(seed).
attn::math::QKV random_qkv(const std::string& seed, arma::uword n, arma::uword d) {
  attn::numpy::Generator rng = attn::numpy::default_rng(seed);
  attn::math::QKV qkv;
  qkv.Q = rng.normal(n, d);
  qkv.K = rng.normal(n, d);
  qkv.V = rng.normal(n, d);
  return qkv;
}

void online_softmax_by_hand(attn::book::Chapter& ch) {
  //! [by-hand]
  const arma::rowvec scores = {1, 3, 2, 5};
  const arma::mat V = {{1, 0}, {0, 1}, {1, 1}, {2, 1}};
  const arma::uword block = 2;  // keys per block
  const std::vector<attn::ch09::OnlineStep> steps =
      attn::ch09::online_softmax_steps(scores, V, block);
  //! [by-hand]
  fmt::print(ch.out, "The online softmax by hand: scores {}, V rows {}, blocks of {} keys\n\n",
             attn::numpy::array_str(scores), rows_on_one_line(V), block);
  fmt::print(ch.out, "after keys   m         l          O\n");
  for (arma::uword b = 0; b < steps.size(); ++b) {
    const attn::ch09::OnlineStep& step = steps[b];
    const arma::uword first_key = b * block + 1;
    const arma::uword last_key = first_key + block - 1;
    fmt::print(ch.out, "  {}, {}     {:<8.6f}  {:<9.6f}  [{:.6f}, {:.6f}]\n", first_key, last_key,
               step.m, step.l, step.O(0), step.O(1));
  }

  // After the last block: the output divided once, and the row's log-sum-exp.
  const attn::ch09::OnlineStep& first = steps.front();
  const attn::ch09::OnlineStep& last = steps.back();
  const arma::rowvec output = last.O / last.l;
  const double log_sum_exp = last.m + std::log(last.l);
  const arma::rowvec direct = attn::math::softmax(scores) * V;
  fmt::print(ch.out, "\noutput O / l = [{:.6f}, {:.6f}], log-sum-exp m + log l = {:.6f}\n",
             output(0), output(1), log_sum_exp);
  fmt::print(ch.out, "direct softmax(scores) V = [{:.6f}, {:.6f}]\n", direct(0), direct(1));

  const std::vector<std::string> labels = {"l1",   "O1_0",  "O1_1",  "l2", "O2_0",
                                           "O2_1", "out_0", "out_1", "lse"};
  const arma::rowvec ours = {first.l,   first.O(0), first.O(1), last.l,     last.O(0),
                             last.O(1), output(0),  output(1),  log_sum_exp};
  ch.checks.numbers("by hand", labels, kByHand, 6, ours);
  claim_agree(ch, "streaming equals the direct softmax", relative_gap(output, direct),
              kByHandTolerance);
}

void stream_the_sentence(attn::book::Chapter& ch) {
  const attn::ch04::RandomSentence s =
      attn::ch04::random_sentence(kSentenceSeed, kSentence, kSentenceSizes);
  const attn::math::QKV qkv = attn::math::project(s.X, s.W);
  const double c = attn::math::score_scale(qkv.K.n_cols);
  const attn::math::Attention full =
      attn::math::attend(qkv.Q, qkv.K, qkv.V, c);  // chapter 04's, with grids
  //! [sentence]
  const attn::math::StreamingBlocks blocks{.queries = 2, .keys = 2};
  const attn::math::StreamingAttention streamed =
      attn::math::streaming_attention(qkv.Q, qkv.K, qkv.V, c, {}, blocks);  // no mask
  // Any weight, afterwards, from its score and its row's log-sum-exp: w_ij = e^(s_ij − lse_i)
  const arma::mat S = qkv.Q * qkv.K.t() * c;
  const arma::mat weights = arma::exp(S.each_col() - streamed.log_sum_exp);
  //! [sentence]
  fmt::print(ch.out, "\nChapter 04's sentence, streamed in blocks of {} queries and {} keys:\n",
             blocks.queries, blocks.keys);
  fmt::print(ch.out, "Z =\n{}\n", attn::numpy::matrix_str(streamed.output));
  fmt::print(ch.out, "log-sum-exp per token {}\n",
             attn::numpy::array_str(streamed.log_sum_exp.t()));

  claim_agree(ch, "streaming Z equals attend()'s on the sentence",
              relative_gap(streamed.output, full.output), kTolerance);
  claim_agree(ch, "e^(s - log-sum-exp) gives back attend()'s weights",
              relative_gap(weights, full.weights), kTolerance);
  ch.plots.heatmap({.name = "09-01-weights-from-lse",
                    .title = "Weights rebuilt from the scores and each row's log-sum-exp",
                    .queries = s.tokens,
                    .keys = s.tokens,
                    .values = weights,
                    .scale = attn::book::ColourScale::weights});
}

// What each form would hold at this n, by formula.
void print_memory(attn::book::Chapter& ch, arma::uword n) {
  const attn::ch09::AttentionMemory memory =
      attn::ch09::attention_memory(n, n, kHeadWidth, kHeadWidth, kBlocks);
  fmt::print(ch.out, "\nn = {}, d = {}, one head, causal; ", n, kHeadWidth);
  fmt::print(ch.out, "Q, K, V from default_rng({}).normal\n", kLongSeed);
  fmt::print(ch.out,
             "  the reference holds scores, exponentials and weights: 3 n² doubles = {:.1f} MB\n",
             megabytes(memory.reference_grids));
  fmt::print(ch.out,
             "  streaming holds Q, K, V and Z: 4 n d doubles = {:.1f} MB, "
             "and per thread one block of scores, {:.2f} MB\n",
             megabytes(memory.streaming_data), megabytes(memory.streaming_block));
}

// How many blocks of the plan do this work.
arma::uword blocks_doing(const arma::umat& plan, attn::ch09::BlockWork work) {
  return arma::accu(plan == static_cast<arma::uword>(work));
}

void print_plan(attn::book::Chapter& ch, const arma::umat& plan) {
  const arma::uword computed = plan.n_elem - blocks_doing(plan, attn::ch09::BlockWork::skipped);
  const arma::uword partly_masked = blocks_doing(plan, attn::ch09::BlockWork::partly_masked);
  fmt::print(ch.out,
             "  blocks of {} queries and {} keys: "
             "{} of {} computed, {} of them partly masked\n",
             kBlocks.queries, kBlocks.keys, computed, plan.n_elem, partly_masked);
}

void draw_plan(attn::book::Chapter& ch, arma::uword n, const arma::umat& plan) {
  // BlockWork's numbers, skipped 0, partly masked 1 and whole 2, halved onto the scale 0..1.
  const arma::mat shades = arma::conv_to<arma::mat>::from(plan) / 2.0;
  ch.plots.heatmap({
      .name = "09-02-causal-plan",
      .title = fmt::format("Causal, n = {}: skipped (0), partly masked (0.5), whole (1)", n),
      .queries = attn::book::tick_labels(plan.n_rows, 4),  // every 4th block of queries labelled
      .keys = attn::book::tick_labels(plan.n_cols, 2),     // every 2nd block of keys labelled
      .values = shades,
      .scale = attn::book::ColourScale::weights,
      .decimals = 1,
      .write_values = false,
      .x_label = fmt::format("block of {} keys", kBlocks.keys),
      .y_label = fmt::format("block of {} queries", kBlocks.queries),
      .colour_label = "computed",
  });
}

// Up to kLargestFullGrid: attend() forms its grids, and the streamed output equals its output.
void compare_with_reference(attn::book::Chapter& ch, arma::uword n, const attn::math::QKV& qkv) {
  const double c = attn::math::score_scale(kHeadWidth);
  const attn::math::StreamingAttention streamed =
      attn::fast::streaming_attention(qkv.Q, qkv.K, qkv.V, c, kCausal, kBlocks);
  const attn::math::Attention reference =
      attn::math::attend(qkv.Q, qkv.K, qkv.V, c, attn::math::Mask::causal(n));
  claim_agree(ch, fmt::format("n = {}: streaming equals attend()", n),
              relative_gap(streamed.output, reference.output), kTolerance);
}

// Row i of causal attention the direct way, over keys 0 to i only.
arma::rowvec direct_causal_row(const attn::math::QKV& qkv, arma::uword i, double c) {
  const arma::rowvec scores = qkv.Q.row(i) * qkv.K.head_rows(i + 1).t() * c;
  return attn::math::softmax(scores) * qkv.V.head_rows(i + 1);
}

// Beyond kLargestFullGrid: no grid. The peak memory of the streamed pass alone, then three of
// its rows against the direct softmax.
void stream_without_grid(attn::book::Chapter& ch, arma::uword n, const attn::math::QKV& qkv) {
  const double c = attn::math::score_scale(kHeadWidth);
  attn::book::reset_peak_resident();
  const attn::math::StreamingAttention streamed =
      attn::fast::streaming_attention(qkv.Q, qkv.K, qkv.V, c, kCausal, kBlocks);
  const double peak = megabytes(static_cast<double>(attn::book::resident_memory().peak));
  fmt::print(ch.log, "n = {}: peak resident memory {:.1f} MB\n", n, peak);  // varies: stderr
  ch.checks.claim(fmt::format("n = {}: peak resident memory under {:.0f} MB", n, kPeakBoundMB),
                  peak < kPeakBoundMB);

  double worst = 0.0;
  for (const arma::uword i : {arma::uword{0}, n / 3, n - 1}) {
    const double gap = relative_gap(streamed.output.row(i), direct_causal_row(qkv, i, c));
    worst = std::max(worst, gap);
  }
  claim_agree(ch, "rows 0, n/3 and n-1 equal the direct softmax", worst, kTolerance);
}

// Causal attention on n random tokens: what the two forms hold, which blocks streaming
// computes, then the checks on n's side of kLargestFullGrid.
void attend_at_length(attn::book::Chapter& ch, arma::uword n) {
  const attn::math::QKV qkv = random_qkv(kLongSeed, n, kHeadWidth);
  print_memory(ch, n);
  const arma::umat plan = attn::ch09::streaming_schedule(n, n, kCausal, kBlocks);
  print_plan(ch, plan);
  if (n <= kLargestFullGrid) {
    draw_plan(ch, n, plan);
    compare_with_reference(ch, n, qkv);
  } else {
    stream_without_grid(ch, n, qkv);
  }
}

void decode_with_kv_cache(attn::book::Chapter& ch) {
  const arma::uword T = kDecodedTokens;
  const arma::uword d = kHeadWidth;
  const attn::math::QKV drawn = random_qkv(kDecodingSeed, T, d);
  const arma::mat& Q = drawn.Q;
  const arma::mat& K = drawn.K;
  const arma::mat& V = drawn.V;
  const double c = attn::math::score_scale(d);
  const arma::mat full = attn::fast::streaming_attention(Q, K, V, c, kCausal).output;
  //! [decode]
  attn::math::KVCache cache(d, d);
  double worst = 0.0;
  for (arma::uword t = 0; t < T; ++t) {
    cache.append(K.row(t), V.row(t));                  // this token's key and value, once
    const arma::rowvec z = cache.attend(Q.row(t), c);  // one query: 2 (t + 1) d multiply-adds
    worst = std::max(worst, relative_gap(z, full.row(t)));
  }
  //! [decode]

  // Row i of causal attention costs 2 i d multiply-adds (i scores, then i values weighted), so
  // recomputing rows 1 to t costs 2 d (1 + 2 + ... + t) = t (t + 1) d, about t² d.
  fmt::print(ch.out, "\nDecoding {} tokens one at a time with a KV cache, d = {}\n", T, d);
  fmt::print(ch.out,
             "  multiply-adds at step t:   with the cache (2 t d)   "
             "recomputing rows 1 to t (t (t + 1) d)\n");
  for (const arma::uword t : kShownSteps)
    fmt::print(ch.out, "  t = {:<16}{:>24}{:>39}\n", t, 2 * t * d, t * (t + 1) * d);
  claim_agree(ch, "each decoded output equals causal attention's row", worst, kTolerance);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string summary =
      fmt::format("Chapter 09: the online softmax, memory O(n d) at n = {}, and a KV cache",
                  kLengths.without_grid);
  const attn::book::ChapterInfo info{
      .executable = "ch09_at_scale", .summary = summary, .reference = "the worked example"};
  bool quick = false;
  const std::string quick_help =
      fmt::format("n = {} and {}, not {} and {}: the same checks, faster", kQuickLengths.with_grid,
                  kQuickLengths.without_grid, kLengths.with_grid, kLengths.without_grid);
  const auto options = [&](CLI::App& app) {
    app.add_flag("--quick", quick, quick_help);
  };
  const auto story = [&](attn::book::Chapter& ch) {
    const Lengths lengths = quick ? kQuickLengths : kLengths;
    online_softmax_by_hand(ch);
    stream_the_sentence(ch);
    attend_at_length(ch, lengths.with_grid);
    attend_at_length(ch, lengths.without_grid);
    decode_with_kv_cache(ch);
  };
  return attn::book::run_chapter(argc, argv, info, options, story);
}
