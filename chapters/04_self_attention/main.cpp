// Chapter 04: the full mechanism on "the cat drank the milk", with numpy's random numbers.
//
// Article 004 draws X, W_Q, W_K and W_V from np.random.default_rng(0) and prints one
// attention grid. This program draws the very same numbers in C++ (attn::numpy::default_rng)
// and prints exactly what the article's Python prints, for any --seed and --sentence; stdout
// is only that output, checks go to stderr. Its page: chapters/04_self_attention/chapter.md.

#include "random_sentence.hpp"

#include <attn/book/chapter.hpp>
#include <attn/book/grid_text.hpp>
#include <attn/math/attention.hpp>
#include <attn/numpy/numpy_print.hpp>
#include <attn/numpy/numpy_random.hpp>

#include <fmt/ostream.h>
#include <CLI/CLI.hpp>

#include <stdexcept>
#include <string>
#include <vector>

namespace {

//! [article-numbers]
//! [article-run]
// The article's experiment: its seed, its sentence, its sizes.
const std::string kArticleSeed = "0";
const std::string kArticleSentence = "the cat drank the milk";
const attn::ch04::RandomSetup kArticleSizes{
    .d_model = 8,
    .d_k = 4,
    .d_v = 4,
    .weight_scale = 0.5,  // each W = rng.normal(...) * 0.5
};
//! [article-run]

//! [article-block]
// What article 004's program prints, quoted verbatim; the table is also read back as numbers.
const std::string kArticleTable =
    "                 the     cat   drank     the    milk\n"
    "       the      0.03    0.32    0.12    0.51    0.02\n"
    "       cat      0.56    0.13    0.05    0.02    0.24\n"
    "     drank      0.45    0.31    0.02    0.08    0.14\n"
    "       the      0.08    0.15    0.50    0.16    0.11\n"
    "      milk      0.02    0.38    0.20    0.39    0.02\n";
const std::string kArticleBlock =
    "X shape (5, 8) -> Z shape (5, 4)\n\n"
    "attention weights (rows = queries, cols = keys)\n" +
    kArticleTable + "\nrow sums [1. 1. 1. 1. 1.]\n";
//! [article-block]
//! [article-numbers]

struct Experiment {
  std::vector<std::string> tokens;
  arma::mat X;                      // (n × d_model) token embeddings
  attn::math::Projections W;        // (d_model × d_k), (d_model × d_k), (d_model × d_v)
  attn::math::Attention attention;  // scores, weights (n × n); output Z (n × d_v)
};

//! [draw]
Experiment run(const std::string& seed, const std::string& sentence) {
  const attn::ch04::RandomSentence drawn =
      attn::ch04::random_sentence(seed, sentence, kArticleSizes);
  return {drawn.tokens, drawn.X, drawn.W, attn::math::self_attention(drawn.X, drawn.W)};
}
//! [draw]

//! [print]
// Exactly what the article's print statements produce.
std::string program_output(const Experiment& e) {
  const arma::mat& A = e.attention.weights;  // (n × n)
  const arma::mat& Z = e.attention.output;   // (n × d_v)
  return fmt::format(
             "X shape {} -> Z shape {}\n\nattention weights (rows = queries, cols = keys)\n",
             attn::numpy::shape_str(e.X), attn::numpy::shape_str(Z)) +
         attn::book::grid_table(e.tokens, e.tokens, A) + "\nrow sums " +
         attn::numpy::array_str(attn::numpy::round(arma::sum(A, 1), 6)) + "\n";
}
//! [print]

void check_article(attn::book::Chapter& ch, const Experiment& e, const std::string& printed) {
  //! [check]
  ch.checks.block("printed", kArticleBlock, printed);
  const arma::mat article_weights = attn::book::grid_from_table(kArticleTable);  // (5 × 5)
  for (arma::uword row = 0; row < article_weights.n_rows; ++row)
    ch.checks.numbers("weight", attn::book::cell_labels(e.tokens, row),
                      arma::conv_to<std::vector<double>>::from(article_weights.row(row)), 2,
                      e.attention.weights.row(row));
  //! [check]
}

void draw(attn::book::Chapter& ch, const Experiment& e, bool article_run, const std::string& seed) {
  // The article's run draws the page's figures; any other run draws beside them.
  const std::string scores_name = article_run ? "04-01-scores" : "04-03-custom-scores";
  const std::string weights_name = article_run ? "04-02-weights" : "04-04-custom-weights";
  const std::string run = fmt::format(" (seed {})", seed);
  const attn::book::Heatmap scores{.name = scores_name,
                                   .title = "Scores Q K^T / √d_k, random projections" + run,
                                   .queries = e.tokens,
                                   .keys = e.tokens,
                                   .values = e.attention.scores,
                                   .scale = attn::book::ColourScale::scores};
  ch.plots.heatmap(scores);
  attn::book::Heatmap weights = scores;  // the same tokens, the other grid
  weights.name = weights_name;
  weights.title = "Weights from random projections: noise" + run;
  weights.values = e.attention.weights;
  weights.scale = attn::book::ColourScale::weights;
  ch.plots.heatmap(weights);
}

// CLI11 checks: a seed is what numpy's SeedSequence takes; a sentence has a word.
std::string seed_error(const std::string& seed) {
  try {
    attn::numpy::SeedSequence{seed};
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

// numpy abbreviates arrays of more than 1000 entries ("[1. 1. ... 1.]"), which this chapter
// does not reproduce, so longer sentences are refused rather than printed differently.
std::string sentence_error(const std::string& sentence) {
  const std::size_t most = 1000;
  const std::size_t n = attn::book::split_words(sentence).size();
  if (n == 0) {
    return "the sentence needs at least one word";
  }
  if (n > most) {
    return fmt::format("the sentence has {} words; at most {} print as numpy prints them", n, most);
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  std::string seed = kArticleSeed;
  std::string sentence = kArticleSentence;
  const auto options = [&](CLI::App& app) {
    app.add_option("--seed", seed, "numpy default_rng seed (any non-negative integer)")
        ->check(CLI::Validator(seed_error, ""))
        ->type_name("N")
        ->capture_default_str();
    app.add_option("--sentence", sentence, "The sentence; its words are the tokens")
        ->check(CLI::Validator(sentence_error, ""))
        ->type_name("TEXT")
        ->capture_default_str();
  };
  const auto story = [&](attn::book::Chapter& ch) {
    const Experiment e = run(seed, sentence);
    const std::string printed = program_output(e);
    ch.out << printed;
    const bool article_run = seed == kArticleSeed && sentence == kArticleSentence;
    if (article_run) {
      check_article(ch, e, printed);  // other runs: checked against numpy by ctest
    }
    draw(ch, e, article_run, seed);
  };
  const attn::book::ChapterInfo info{
      .executable = "ch04_self_attention",
      .summary =
          "Chapter 04: Q/K/V self-attention on \"the cat drank the milk\" with numpy's "
          "default_rng, printed exactly as the article's Python prints it",
      .checks_on_stderr = true,  // stdout is exactly the article's program's output
  };
  return attn::book::run_chapter(argc, argv, info, options, story);
}
