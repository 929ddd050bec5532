// Chapter 08: masks and heads. A causal mask lets each token attend only to itself and the
// tokens before it; several heads look at one sentence in different ways, each in its own
// columns. The library's masks and heads equal PyTorch's (tests/lib/math/torch_test.cpp).
// Its page: chapters/08_masks_and_heads/chapter.md.

#include <attn/math/attention.hpp>
#include <attn/book/chapter.hpp>
#include <04_self_attention/random_sentence.hpp>
#include <attn/book/grid_text.hpp>
#include <attn/math/mask.hpp>
#include <attn/math/multi_head.hpp>
#include <attn/numpy/numpy_random.hpp>
#include <attn/math/validate.hpp>

#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include <string>

namespace {

//! [article-numbers]
// What PyTorch says: sum(p.numel() for p in nn.MultiheadAttention(768, 12).parameters()).
const double kTorchParameters = 2362368;
//! [article-numbers]

const std::string kSentence = "the cat drank the milk";

attn::Attention causal(attn::Chapter& ch, const attn::examples::RandomSentence& s) {
  //! [causal]
  const attn::Mask mask = attn::Mask::causal(s.tokens.size());  // query i sees keys j <= i
  const attn::QKV qkv = attn::project(s.X, s.W);
  const attn::Attention a = attn::attend(qkv.Q, qkv.K, qkv.V, attn::score_scale(qkv.K.n_cols), mask);
  //! [causal]
  fmt::print(ch.out, "A causal mask on \"{}\" (chapter 04's draws, seed 0)\n\nmay attend "
             "(rows = queries, cols = keys; 1 = may, . = may not):\n{}\nweights\n{}",
             kSentence, mask.picture(), attn::grid_table(s.tokens, s.tokens, a.weights));
  // Not a number from PyTorch: under a causal mask the first token may see only itself.
  ch.checks.claim("the first \"the\" puts all its weight, exactly 1, on itself", a.weights(0, 0) == 1.0);
  ch.checks.claim("every weight above the diagonal is exactly 0",
                  arma::accu(arma::abs(arma::trimatu(a.weights, 1))) == 0.0);
  return a;
}

void conventions(attn::Chapter& ch) {
  //! [conventions]
  const attn::Mask causal = attn::Mask::causal(3);
  const arma::umat sdpa_grid = causal.allowed();        // F.scaled_dot_product_attention: True = may
  const arma::umat mha_grid = 1 - causal.allowed();     // nn.MultiheadAttention: True = may NOT
  //! [conventions]
  const auto rows = [](const arma::umat& grid) {
    std::string text;
    for (arma::uword i = 0; i < grid.n_rows; ++i)
      text += fmt::format("{}[{}]", i ? " " : "", fmt::join(arma::conv_to<std::vector<arma::uword>>::from(
                                                       grid.row(i)), " "));
    return text;
  };
  fmt::print(ch.out, "\nOne causal mask for 3 tokens, in each convention (1 = True):\n"
             "  attn::Mask (allowed)                     1 = may attend      {}\n"
             "  F.scaled_dot_product_attention, bool     True = may attend   {}\n"
             "  nn.MultiheadAttention attn_mask, bool    True = may NOT      {}\n",
             rows(causal.allowed()), rows(sdpa_grid), rows(mha_grid));
  ch.checks.claim("Mask::from_allowed reads scaled_dot_product_attention's grid as causal",
                  attn::Mask::from_allowed(sdpa_grid).picture() == causal.picture());
  ch.checks.claim("Mask::from_blocked reads nn.MultiheadAttention's grid as causal",
                  attn::Mask::from_blocked(mha_grid).picture() == causal.picture());
}

attn::MultiHead heads(attn::Chapter& ch, const attn::examples::RandomSentence& s,
                      const attn::MultiHeadWeights& W) {
  //! [heads]
  const attn::MultiHead mh = attn::multi_head_attention(s.X, s.X, s.X, W);
  //! [heads]
  const arma::mat& Q = mh.Q;  // X W_Q (this layer has no biases)
  const std::vector<arma::mat> Q_k = attn::split_heads(Q, W.heads);
  fmt::print(ch.out, "\nTwo heads on the same sentence, d_model = {}, d_k = {}: every shape\n"
             "  X {}  ->  Q = X W_Q {}  ->  split into {} heads, Q_k {} each (K, V alike)\n"
             "  per head: scores Q_k K_k^T / √{} {}, weights {}, output {}\n"
             "  the outputs side by side {}  ->  output = concat W_O {}\n",
             Q.n_cols, Q_k[0].n_cols, attn::shape_of(s.X), attn::shape_of(Q), W.heads,
             attn::shape_of(Q_k[0]), Q_k[0].n_cols, attn::shape_of(mh.heads[0].scores),
             attn::shape_of(mh.heads[0].weights), attn::shape_of(mh.heads[0].output),
             attn::shape_of(mh.concat), attn::shape_of(mh.output));
  for (arma::uword k = 0; k < W.heads; ++k)
    fmt::print(ch.out, "\nhead {} weights\n{}", k + 1, attn::grid_table(s.tokens, s.tokens, mh.heads[k].weights));
  const double apart = arma::abs(mh.heads[0].weights - mh.heads[1].weights).max();
  fmt::print(ch.out, "\nthe two heads' weights differ by up to {:.2f}\n", apart);
  ch.checks.claim("the two heads attend differently (weights apart by more than 0.1)", apart > 0.1);
  const arma::uword ours = attn::multi_head_parameters(W.W_Q.n_rows, W.heads, false);
  const arma::uword gpt2 = attn::multi_head_parameters(768, 12, true);
  fmt::print(ch.out, "\nlearned numbers: this layer {} (4 d_model^2, no biases); d_model = 768 "
             "with 12 heads and biases {}\n", ours, gpt2);
  ch.checks.number("parameters, d_model = 768, 12 heads, biases", kTorchParameters, 0,
                   static_cast<double>(gpt2));
  return mh;
}

void draw(attn::Chapter& ch, const std::vector<std::string>& tokens, const attn::Attention& masked,
          const attn::MultiHead& mh) {
  using attn::ColourScale;
  ch.plots.heatmap({"08-01-causal", "Causal mask: each token attends to itself and earlier ones",
                    tokens, tokens, masked.weights, ColourScale::weights});
  ch.plots.heatmaps({"08-02-heads", "Two heads, one sentence: head 1 (left), head 2 (right)",
                     {{"", "head 1", tokens, tokens, mh.heads[0].weights, ColourScale::weights},
                      {"", "head 2", tokens, tokens, mh.heads[1].weights, ColourScale::weights}}});
}

}  // namespace

int main(int argc, char** argv) {
  const attn::ChapterInfo info{"ch08_masks_and_heads", "Chapter 08: causal and padding masks, and "
                               "several heads, equal to PyTorch's", false, "PyTorch"};
  return attn::run_chapter(argc, argv, info, [](attn::Chapter& ch) {
    const auto cat = attn::examples::random_sentence("0", kSentence);  // chapter 04's, d_k = 4
    const attn::Attention masked = causal(ch, cat);
    conventions(ch);
    //! [two-heads]
    const auto wide = attn::examples::random_sentence("0", kSentence, {8, 8, 8, 0.5});
    attn::numpy::Generator more = attn::numpy::default_rng("1");  // W_O from its own stream
    const attn::MultiHeadWeights W{2, wide.W.W_Q, wide.W.W_K, wide.W.W_V, more.normal(8, 8) * 0.5,
                                   {}, {}, {}, {}};
    //! [two-heads]
    draw(ch, cat.tokens, masked, heads(ch, wide, W));
  });
}
