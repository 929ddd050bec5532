// Chapter 04: the full mechanism on "the cat drank the milk", with numpy's random numbers.
//
// Article 004 draws X, W_Q, W_K and W_V from np.random.default_rng(0) and prints one
// attention grid. This program draws the very same numbers in C++ (attn::numpy::default_rng)
// and prints exactly what the article's Python prints, for the article's run or for any
// --seed and --sentence. Its stdout is only that program output; the checks go to stderr.
// The book's page for this chapter is chapters/04_self_attention/chapter.md.

#include <attn/attention.hpp>
#include <attn/chapter.hpp>
#include <attn/grid_text.hpp>
#include <attn/numpy_print.hpp>
#include <attn/numpy_random.hpp>

#include <CLI/CLI.hpp>
#include <fmt/ostream.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

namespace {

//! [article-run]
// The article's experiment: its seed, its sentence, its sizes.
const std::string kArticleSeed = "0";
const std::string kArticleSentence = "the cat drank the milk";
const arma::uword kModelWidth = 8;  // d_model
const arma::uword kKeyWidth = 4;    // d_k
const arma::uword kValueWidth = 4;  // d_v
//! [article-run]

//! [article-block]
// What article 004's program prints, quoted verbatim.
const std::string kArticleBlock =
    "X shape (5, 8) -> Z shape (5, 4)\n"
    "\n"
    "attention weights (rows = queries, cols = keys)\n"
    "                 the     cat   drank     the    milk\n"
    "       the      0.03    0.32    0.12    0.51    0.02\n"
    "       cat      0.56    0.13    0.05    0.02    0.24\n"
    "     drank      0.45    0.31    0.02    0.08    0.14\n"
    "       the      0.08    0.15    0.50    0.16    0.11\n"
    "      milk      0.02    0.38    0.20    0.39    0.02\n"
    "\n"
    "row sums [1. 1. 1. 1. 1.]\n";
const arma::mat kArticleWeights = {  // (5 × 5), to 2 decimals
    {0.03, 0.32, 0.12, 0.51, 0.02},
    {0.56, 0.13, 0.05, 0.02, 0.24},
    {0.45, 0.31, 0.02, 0.08, 0.14},
    {0.08, 0.15, 0.50, 0.16, 0.11},
    {0.02, 0.38, 0.20, 0.39, 0.02},
};
//! [article-block]

struct Experiment {
  std::vector<std::string> tokens;
  arma::mat X;                // (n × d_model) token embeddings
  attn::Projections W;        // (d_model × d_k), (d_model × d_k), (d_model × d_v)
  attn::Attention attention;  // scores, weights (n × n); output Z (n × d_v)
};

//! [draw]
Experiment run(const std::string& seed, const std::string& sentence) {
  Experiment e;
  e.tokens = attn::split_words(sentence);  // Python's sentence.split()
  attn::numpy::Generator rng = attn::numpy::default_rng(seed);
  // Same order as the article: X first, then W_Q, W_K, W_V, each weight matrix times 0.5.
  e.X = rng.normal(e.tokens.size(), kModelWidth);
  e.W.W_Q = rng.normal(kModelWidth, kKeyWidth) * 0.5;
  e.W.W_K = rng.normal(kModelWidth, kKeyWidth) * 0.5;
  e.W.W_V = rng.normal(kModelWidth, kValueWidth) * 0.5;
  e.attention = attn::self_attention(e.X, e.W);
  return e;
}
//! [draw]

//! [print]
// Exactly what the article's print statements produce.
std::string program_output(const Experiment& e) {
  const arma::mat& A = e.attention.weights;  // (n × n)
  const arma::mat& Z = e.attention.output;   // (n × d_v)
  return fmt::format("X shape {} -> Z shape {}\n\nattention weights (rows = queries, cols = keys)\n",
                     attn::numpy::shape_str(e.X), attn::numpy::shape_str(Z)) +
         attn::grid_table(e.tokens, e.tokens, A) + "\nrow sums " +
         attn::numpy::array_str(attn::numpy::round(arma::sum(A, 1), 6)) + "\n";
}
//! [print]

// "0,1 the→cat": one cell of the grid, by position (the sentence has "the" twice) and by token.
std::vector<std::string> cell_labels(const std::vector<std::string>& tokens, arma::uword row) {
  std::vector<std::string> labels;
  for (arma::uword col = 0; col < tokens.size(); ++col)
    labels.push_back(fmt::format("{},{} {}→{}", row, col, tokens[row], tokens[col]));
  return labels;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

void check_article(attn::Chapter& ch, const Experiment& e, const std::string& printed) {
  //! [check]
  const auto article_lines = lines_of(kArticleBlock), our_lines = lines_of(printed);
  for (std::size_t i = 0; i < article_lines.size(); ++i)
    ch.checks.line(fmt::format("printed line {}", i + 1), article_lines[i],
                   i < our_lines.size() ? our_lines[i] : "(missing)");
  ch.checks.line("nothing printed after the block", std::to_string(article_lines.size()),
                 std::to_string(our_lines.size()));
  for (arma::uword row = 0; row < kArticleWeights.n_rows; ++row)
    ch.checks.numbers("weight", cell_labels(e.tokens, row),
                      arma::conv_to<std::vector<double>>::from(kArticleWeights.row(row)), 2,
                      e.attention.weights.row(row));
  //! [check]
}

void check_any_run(attn::Chapter& ch, const Experiment& e) {
  const arma::vec row_sums = arma::sum(e.attention.weights, 1);
  ch.checks.claim("every row of weights sums to 1 (to 6 decimals)",
                  arma::all(arma::abs(row_sums - 1.0) < 5e-7));
  ch.checks.claim(fmt::format("Z has shape (n, d_v) = ({}, {})", e.tokens.size(), kValueWidth),
                  e.attention.output.n_rows == e.tokens.size() &&
                      e.attention.output.n_cols == kValueWidth);
}

void draw(attn::Chapter& ch, const Experiment& e, bool article_run, const std::string& seed) {
  const std::string first = article_run ? "04-01-scores" : "04-03-custom-scores";
  const std::string second = article_run ? "04-02-weights" : "04-04-custom-weights";
  const std::string run = fmt::format("seed {}", seed);
  ch.plots.heatmap({first, "Scores Q K^T / √d_k, random projections (" + run + ")", e.tokens,
                    e.tokens, e.attention.scores, attn::ColourScale::scores});
  ch.plots.heatmap({second, "Weights from random projections: noise (" + run + ")", e.tokens,
                    e.tokens, e.attention.weights, attn::ColourScale::weights});
}

// CLI11 checks: a seed is a non-negative integer of any size; a sentence has a word.
std::string seed_error(const std::string& seed) {
  const bool digits = !seed.empty() && std::all_of(seed.begin(), seed.end(),
                                                  [](char c) { return c >= '0' && c <= '9'; });
  return digits ? "" : "the seed must be a non-negative integer, like numpy's default_rng(seed)";
}

// numpy abbreviates arrays of more than 1000 entries ("[1. 1. ... 1.]"), which this chapter
// does not reproduce, so longer sentences are refused rather than printed differently.
constexpr std::size_t kMaxWords = 1000;

std::string sentence_error(const std::string& sentence) {
  const std::size_t n = attn::split_words(sentence).size();
  if (n == 0) return "the sentence needs at least one word";
  if (n > kMaxWords)
    return fmt::format("the sentence has {} words; at most {} print as numpy prints them", n,
                       kMaxWords);
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  std::string seed = kArticleSeed, sentence = kArticleSentence;
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
  const auto story = [&](attn::Chapter& ch) {
    const Experiment e = run(seed, sentence);
    const std::string printed = program_output(e);
    ch.out << printed;
    const bool article_run = seed == kArticleSeed && sentence == kArticleSentence;
    if (article_run) check_article(ch, e, printed);
    check_any_run(ch, e);
    draw(ch, e, article_run, seed);
  };
  return attn::run_chapter(argc, argv,
                           {"ch04_self_attention",
                            "Chapter 04: Q/K/V self-attention on \"the cat drank the milk\" with "
                            "numpy's default_rng, printed exactly as the article's Python prints it",
                            true},
                           options, story);
}
