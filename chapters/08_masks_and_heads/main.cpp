// Chapter 08: masks and heads. A causal mask lets each token attend only to itself and the
// tokens before it; several heads look at one sentence in different ways, each in its own
// columns. The library's masks and heads equal PyTorch's (tests/lib/math/torch_test.cpp).
// Its page: chapters/08_masks_and_heads/chapter.md.

#include <04_self_attention/random_sentence.hpp>
#include <attn/book/chapter.hpp>
#include <attn/book/grid_text.hpp>
#include <attn/math/attention.hpp>
#include <attn/math/mask.hpp>
#include <attn/math/multi_head.hpp>
#include <attn/math/validate.hpp>
#include <attn/numpy/numpy_random.hpp>

#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include <string>
#include <vector>

namespace {

//! [article-numbers]
// What PyTorch says: sum(p.numel() for p in nn.MultiheadAttention(768, 12).parameters()).
const double kTorchParameters = 2362368;
//! [article-numbers]

const std::string kSentence = "the cat drank the milk";
const std::string kSeed = "0";         // chapter 04's draws
const std::string kOutputSeed = "1";   // W_O's own stream
const double kWeightScale = 0.5;       // every W = N(0, 1) draws times this, as in chapter 04
const arma::uword kTwoHeadsWidth = 8;  // d_model = d_k = d_v for the two heads
const double kHeadsApart = 0.1;        // the two heads' weights differ by more than this
const arma::uword kGpt2Width = 768;    // GPT-2 small's d_model...
const arma::uword kGpt2Heads = 12;     // ...and heads

attn::math::Attention causal(attn::book::Chapter& ch, const attn::ch04::RandomSentence& s) {
  //! [causal]
  const attn::math::Mask mask =
      attn::math::Mask::causal(s.tokens.size());  // query i sees keys j <= i
  const attn::math::QKV qkv = attn::math::project(s.X, s.W);
  const double scale = attn::math::score_scale(qkv.K.n_cols);
  const attn::math::Attention a = attn::math::attend(qkv.Q, qkv.K, qkv.V, scale, mask);
  //! [causal]
  fmt::print(ch.out, "A causal mask on \"{}\" (chapter 04's draws, seed 0)\n\n", kSentence);
  fmt::print(ch.out, "may attend (rows = queries, cols = keys; 1 = may, . = may not):\n{}\n",
             mask.picture());
  fmt::print(ch.out, "weights\n{}", attn::book::grid_table(s.tokens, s.tokens, a.weights));
  // Not a number from PyTorch: under a causal mask the first token may see only itself.
  ch.checks.claim("the first \"the\" puts all its weight, exactly 1, on itself",
                  a.weights(0, 0) == 1.0);
  ch.checks.claim("every weight above the diagonal is exactly 0",
                  arma::accu(arma::abs(arma::trimatu(a.weights, 1))) == 0.0);
  return a;
}

// A 0/1 grid on one line, row by row: "[1 0 0] [1 1 0] [1 1 1]".
std::string one_line(const arma::umat& grid) {
  std::vector<std::string> rows;
  for (arma::uword i = 0; i < grid.n_rows; ++i) {
    const auto row = arma::conv_to<std::vector<arma::uword>>::from(grid.row(i));
    rows.push_back(fmt::format("[{}]", fmt::join(row, " ")));
  }
  return fmt::format("{}", fmt::join(rows, " "));
}

void conventions(attn::book::Chapter& ch) {
  //! [conventions]
  const attn::math::Mask causal = attn::math::Mask::causal(3);
  const arma::umat sdpa_grid = causal.allowed();     // F.scaled_dot_product_attention: True = may
  const arma::umat mha_grid = 1 - causal.allowed();  // nn.MultiheadAttention: True = may NOT
  //! [conventions]
  fmt::print(ch.out, "\nOne causal mask for 3 tokens, in each convention (1 = True):\n");
  fmt::print(ch.out, "  attn::math::Mask (allowed)               1 = may attend      {}\n",
             one_line(causal.allowed()));
  fmt::print(ch.out, "  F.scaled_dot_product_attention, bool     True = may attend   {}\n",
             one_line(sdpa_grid));
  fmt::print(ch.out, "  nn.MultiheadAttention attn_mask, bool    True = may NOT      {}\n",
             one_line(mha_grid));
  ch.checks.claim("Mask::from_allowed reads scaled_dot_product_attention's grid as causal",
                  attn::math::Mask::from_allowed(sdpa_grid).picture() == causal.picture());
  ch.checks.claim("Mask::from_blocked reads nn.MultiheadAttention's grid as causal",
                  attn::math::Mask::from_blocked(mha_grid).picture() == causal.picture());
}

// Every shape on the way through the layer, as the page's diagram draws it.
void print_shapes(attn::book::Chapter& ch, const attn::ch04::RandomSentence& s,
                  const attn::math::MultiHeadWeights& W, const attn::math::MultiHead& mh) {
  const arma::mat& Q = mh.Q;  // X W_Q (this layer has no biases)
  const std::vector<arma::mat> Q_k = attn::math::split_heads(Q, W.heads);
  const attn::math::Attention& head = mh.heads[0];
  fmt::print(ch.out, "\nTwo heads on the same sentence, d_model = {}, d_k = {}: every shape\n",
             Q.n_cols, Q_k[0].n_cols);
  fmt::print(
      ch.out, "  X {}  ->  Q = X W_Q {}  ->  split into {} heads, Q_k {} each (K, V alike)\n",
      attn::math::shape_of(s.X), attn::math::shape_of(Q), W.heads, attn::math::shape_of(Q_k[0]));
  fmt::print(ch.out, "  per head: scores Q_k K_k^T / √{} {}, weights {}, output {}\n",
             Q_k[0].n_cols, attn::math::shape_of(head.scores), attn::math::shape_of(head.weights),
             attn::math::shape_of(head.output));
  fmt::print(ch.out, "  the outputs side by side {}  ->  output = concat W_O {}\n",
             attn::math::shape_of(mh.concat), attn::math::shape_of(mh.output));
}

attn::math::MultiHead heads(attn::book::Chapter& ch, const attn::ch04::RandomSentence& s,
                            const attn::math::MultiHeadWeights& W) {
  //! [heads]
  const attn::math::MultiHead mh = attn::math::multi_head_attention(s.X, s.X, s.X, W);
  //! [heads]
  print_shapes(ch, s, W, mh);
  for (arma::uword k = 0; k < W.heads; ++k) {
    fmt::print(ch.out, "\nhead {} weights\n{}", k + 1,
               attn::book::grid_table(s.tokens, s.tokens, mh.heads[k].weights));
  }
  const double apart = arma::abs(mh.heads[0].weights - mh.heads[1].weights).max();
  fmt::print(ch.out, "\nthe two heads' weights differ by up to {:.2f}\n", apart);
  ch.checks.claim(
      fmt::format("the two heads attend differently (weights apart by more than {})", kHeadsApart),
      apart > kHeadsApart);
  return mh;
}

void parameters(attn::book::Chapter& ch, const attn::math::MultiHeadWeights& W) {
  const arma::uword ours = attn::math::multi_head_parameters(W.W_Q.n_rows, W.heads, false);
  const arma::uword gpt2 = attn::math::multi_head_parameters(kGpt2Width, kGpt2Heads, true);
  fmt::print(ch.out, "\nlearned numbers: this layer {} (4 d_model^2, no biases); ", ours);
  fmt::print(ch.out, "d_model = {} with {} heads and biases {}\n", kGpt2Width, kGpt2Heads, gpt2);
  ch.checks.number("parameters, d_model = 768, 12 heads, biases", kTorchParameters, 0,
                   static_cast<double>(gpt2));
}

void draw(attn::book::Chapter& ch, const std::vector<std::string>& tokens,
          const attn::math::Attention& masked, const attn::math::MultiHead& mh) {
  ch.plots.heatmap({.name = "08-01-causal",
                    .title = "Causal mask: each token attends to itself and earlier ones",
                    .queries = tokens,
                    .keys = tokens,
                    .values = masked.weights,
                    .scale = attn::book::ColourScale::weights});
  const attn::book::Heatmap head_1{.title = "head 1",
                                   .queries = tokens,
                                   .keys = tokens,
                                   .values = mh.heads[0].weights,
                                   .scale = attn::book::ColourScale::weights};
  const attn::book::Heatmap head_2{.title = "head 2",
                                   .queries = tokens,
                                   .keys = tokens,
                                   .values = mh.heads[1].weights,
                                   .scale = attn::book::ColourScale::weights};
  ch.plots.heatmaps({.name = "08-02-heads",
                     .title = "Two heads, one sentence: head 1 (left), head 2 (right)",
                     .panels = {head_1, head_2}});
}

void tell_story(attn::book::Chapter& ch) {
  const auto cat = attn::ch04::random_sentence(kSeed, kSentence);  // chapter 04's, d_k = 4
  const attn::math::Attention masked = causal(ch, cat);
  conventions(ch);
  //! [two-heads]
  // Two heads of width 4 in one layer of width 8: chapter 04's draws, made square.
  const attn::ch04::RandomSetup square{.d_model = kTwoHeadsWidth,
                                       .d_k = kTwoHeadsWidth,
                                       .d_v = kTwoHeadsWidth,
                                       .weight_scale = kWeightScale};
  const auto wide = attn::ch04::random_sentence(kSeed, kSentence, square);
  attn::numpy::Generator more = attn::numpy::default_rng(kOutputSeed);  // W_O from its own stream
  const attn::math::MultiHeadWeights W{
      .heads = 2,
      .W_Q = wide.W.W_Q,
      .W_K = wide.W.W_K,
      .W_V = wide.W.W_V,
      .W_O = more.normal(kTwoHeadsWidth, kTwoHeadsWidth) * kWeightScale};  // no biases
  //! [two-heads]
  const attn::math::MultiHead mh = heads(ch, wide, W);
  parameters(ch, W);
  draw(ch, cat.tokens, masked, mh);
}

}  // namespace

int main(int argc, char** argv) {
  const attn::book::ChapterInfo info{
      .executable = "ch08_masks_and_heads",
      .summary = "Chapter 08: causal and padding masks, and several heads, equal to PyTorch's",
      .reference = "PyTorch"};
  return attn::book::run_chapter(argc, argv, info, tell_story);
}
