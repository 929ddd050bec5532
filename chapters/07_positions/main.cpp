// Chapter 07: word order, and two ways to give it to attention.
//
// Attention cannot see word order: "dog bites man" and "man bites dog" give "dog" one vector.
// Sinusoidal encodings, added to the embeddings, and rotary embeddings, turning queries and
// keys, tell positions apart. The chapter goes beyond the articles, so its numbers are checked
// against numpy's. The book's page for this chapter is chapters/07_positions/chapter.md; it
// quotes the regions marked //! [name] below.

#include <04_self_attention/random_sentence.hpp>
#include <attn/book/chapter.hpp>
#include <attn/book/palette.hpp>
#include <attn/math/attention.hpp>
#include <attn/math/positions.hpp>
#include <attn/numpy/numpy_print.hpp>

#include <fmt/ostream.h>

#include <string>
#include <vector>

namespace {

namespace colour = attn::book::colour;
using attn::ch04::RandomSentence;

//! [article-numbers]
// The numbers this chapter must reproduce, as numpy computes them
// (tests/data/generate_position_fixtures.py): np.round(PE, 4) for d_model = 4, positions 0-3.
const std::string kNumpyTable =
    "[[ 0.      1.      0.      1.    ]\n"
    " [ 0.8415  0.5403  0.01    1.    ]\n"
    " [ 0.9093 -0.4161  0.02    0.9998]\n"
    " [ 0.1411 -0.99    0.03    0.9996]]";
const double kPosition1Column2 = 0.8218561900175317;  // PE[1, 2] for d_model = 512
// RoPE's worked example, q = (1, 2), k = (3, -1): numpy's scores, in the same fixture script
// (tests/lib/math/positions_test.cpp holds the library to them).
const double kRopeSameOffset = -6.781228824;  // q·k, q at 5 and k at 3; at 2 and 0; at 10 and 8
const double kRopeOtherWay = 5.948935151;     // q at 3, k at 5
//! [article-numbers]

// Chapter 04's seed draws every sentence here: its own, and three words whose order matters.
const std::string kSeed = "0";
const std::string kCatSentence = "the cat drank the milk";
const std::string kDogSentence = "dog bites man";

// How close "the same" has to be; every claim quotes the tolerance it is held to.
const double kOrderTolerance = 1e-15;   // Z(PX) against P·Z(X); dog's output in both orders
const double kShiftTolerance = 1e-12;   // PE(p + k) against PE(p) turned; RoPE positions moved
const double kLayoutTolerance = 1e-14;  // RoPE's rotate_half layout against the interleaved one

const int kDecimals = 4;               // np.round(..., 4), as the fixture script prints
const arma::uword kFigureWidth = 128;  // d_model of figures 07-01 and 07-02

// A row as numpy prints np.round(v, 4).
std::string rounded(const arma::rowvec& v) {
  return attn::numpy::array_str(attn::numpy::round(v, kDecimals));
}

// "dog" in "dog bites man" (word 0) and in "man bites dog" (word 2), from one embedding table.
struct DogInBothOrders {
  arma::rowvec output_first;   // out(dog) in "dog bites man"
  arma::rowvec output_last;    // out(dog) in "man bites dog"
  arma::rowvec weights_first;  // what dog takes from dog, bites and man in "dog bites man"
  arma::rowvec weights_last;   // the same in "man bites dog", keys put back in that order
};

// Attends over both orders of the three words, with the same positions added to each.
DogInBothOrders dog_in_both_orders(const RandomSentence& words, const arma::mat& positions) {
  const arma::uvec reversed = {2, 1, 0};  // man bites dog
  const arma::uword dog_first = 0;
  const arma::uword dog_last = 2;
  const attn::math::Attention first = attn::math::self_attention(words.X + positions, words.W);
  const attn::math::Attention last =
      attn::math::self_attention(words.X.rows(reversed) + positions, words.W);
  const arma::rowvec last_weights = last.weights.row(dog_last);  // keys: man, bites, dog
  return {
      .output_first = first.output.row(dog_first),
      .output_last = last.output.row(dog_last),
      .weights_first = first.weights.row(dog_first),
      .weights_last = last_weights.cols(reversed),  // keys back in the order dog, bites, man
  };
}

// How far apart dog's two outputs are: 0 when attention cannot tell the two orders apart.
double largest_gap(const DogInBothOrders& dog) {
  return arma::abs(dog.output_first - dog.output_last).max();
}

// Chapter 04's sentence, reversed: every output row moves with its token, and nothing else.
void attention_cannot_see_order(attn::book::Chapter& ch, const RandomSentence& sentence) {
  //! [permute]
  const arma::uvec P = {4, 3, 2, 1, 0};  // the sentence reversed
  const arma::mat Z = attn::math::self_attention(sentence.X, sentence.W).output;
  const arma::mat Z_of_PX = attn::math::self_attention(sentence.X.rows(P), sentence.W).output;
  const double gap = arma::abs(Z_of_PX - Z.rows(P)).max();
  //! [permute]
  fmt::print(ch.out, "Attention cannot see word order\n\n");
  fmt::print(ch.out, "\"{}\" (chapter 04, seed {}), reversed: ", kCatSentence, kSeed);
  fmt::print(ch.out, "each output row moves with its token, and nothing else changes\n");
  fmt::print(ch.log, "largest |Z(PX) - P·Z(X)| = {:.3g}\n", gap);
  const std::string claim =
      fmt::format("Z(PX) = P·Z(X) within {}, the sentence reversed", kOrderTolerance);
  ch.checks.claim(claim, gap <= kOrderTolerance);
}

void dog_without_positions(attn::book::Chapter& ch, const DogInBothOrders& blind) {
  fmt::print(ch.out, "\n");
  fmt::print(ch.out, "out(dog), no positions:  dog bites man {}\n", rounded(blind.output_first));
  fmt::print(ch.out, "                          man bites dog {}\n", rounded(blind.output_last));
  const std::string claim = fmt::format(
      "without positions dog's output is one vector in both sentences ({})", kOrderTolerance);
  ch.checks.claim(claim, largest_gap(blind) <= kOrderTolerance);
}

void sinusoidal_table(attn::book::Chapter& ch) {
  const arma::uword positions = 4;  // 0 to 3
  const arma::uword d_model = 4;
  //! [table]
  const arma::mat PE = attn::math::sinusoidal_positions(positions, d_model);
  const std::string table = attn::numpy::matrix_str(attn::numpy::round(PE, kDecimals));
  //! [table]
  const std::string numpy_call = fmt::format("np.round(PE, {})", kDecimals);
  fmt::print(ch.out, "\nSinusoidal positions, added to the embeddings\n\n");
  fmt::print(ch.out, "{}, d_model = {}, positions 0 to {}:\n", numpy_call, d_model, positions - 1);
  fmt::print(ch.out, "{}\n", table);
  ch.checks.block(numpy_call, kNumpyTable, table);
}

void dog_with_positions(attn::book::Chapter& ch, const DogInBothOrders& placed) {
  fmt::print(ch.out, "\n");
  fmt::print(ch.out, "out(dog), positions added: dog bites man {}\n", rounded(placed.output_first));
  fmt::print(ch.out, "                            man bites dog {}\n", rounded(placed.output_last));
  fmt::print(ch.out, "the two now differ by up to {:.4f}\n", largest_gap(placed));
}

// Moving k positions turns every column pair of PE by an angle that depends on k alone.
void shifts_are_rotations(attn::book::Chapter& ch) {
  const arma::uword d_model = 512;
  const arma::uword positions = 100;  // every p < 100...
  const arma::uword shifts = 20;      // ...and k < 20
  // numpy's vectorised sine is 1 ulp above C's correctly rounded one: the 16th decimal differs.
  const int sine_decimals = 15;
  const arma::mat PE = attn::math::sinusoidal_positions(2, d_model);  // positions 0 and 1
  const double PE_1_2 = PE(1, 2);
  const double shift_error = attn::math::largest_shift_error(positions, shifts, d_model);
  fmt::print(ch.out, "\nd_model = {}: PE[1, 2] = {}\n", d_model, PE_1_2);
  fmt::print(ch.out, "PE(p + k) is PE(p) turned pair by pair, ");
  fmt::print(ch.out, "for every p < {} and k < {} (within {})\n", positions, shifts,
             kShiftTolerance);
  fmt::print(ch.log, "largest |PE(p + k) - R(k) PE(p)| = {:.3g}\n", shift_error);
  const std::string title = fmt::format("PE[1, 2], d_model = {}", d_model);
  ch.checks.number(title, kPosition1Column2, sine_decimals, PE_1_2);
  const std::string claim = fmt::format("PE(p + k) = R(k) PE(p) within {}", kShiftTolerance);
  ch.checks.claim(claim, shift_error <= kShiftTolerance);
}

//! [rope-worked]
// The smallest case: d = 2 (one pair, θ = 1), q = (1, 2) at position m, k = (3, -1) at n.
double worked_score(double m, double n) {
  const arma::rowvec q = {1.0, 2.0};
  const arma::rowvec k = {3.0, -1.0};
  return arma::dot(attn::math::rotary(q, arma::vec{m}), attn::math::rotary(k, arma::vec{n}));
}
//! [rope-worked]

// Where the worked example puts q and k, and the score numpy gives there.
struct WorkedPair {
  double query_at;
  double key_at;
  double numpy_score;
};

const std::vector<WorkedPair> kWorkedPairs = {
    {.query_at = 5.0, .key_at = 3.0, .numpy_score = kRopeSameOffset},
    {.query_at = 2.0, .key_at = 0.0, .numpy_score = kRopeSameOffset},
    {.query_at = 10.0, .key_at = 8.0, .numpy_score = kRopeSameOffset},
    {.query_at = 3.0, .key_at = 5.0, .numpy_score = kRopeOtherWay},
};

void rotary_worked_example(attn::book::Chapter& ch) {
  const int score_decimals = 9;  // as the fixture script gives numpy's scores
  fmt::print(ch.out, "\nRotary positions (RoPE), turning queries and keys\n\n");
  fmt::print(ch.out, "d = 2, θ = 1, q = (1, 2), k = (3, -1):\n");
  for (const WorkedPair& at : kWorkedPairs) {
    const double score = worked_score(at.query_at, at.key_at);
    fmt::print(ch.out, "  q at {:2}, k at {}: q·k = {:.9f}\n", at.query_at, at.key_at, score);
    const std::string title = fmt::format("q at {}, k at {}", at.query_at, at.key_at);
    ch.checks.number(title, at.numpy_score, score_decimals, score);
  }
}

// On chapter 04's queries and keys: scores depend on the offset only, in either layout.
void rotary_on_chapter_04(attn::book::Chapter& ch, const RandomSentence& sentence) {
  //! [rope-properties]
  const arma::mat Q = sentence.X * sentence.W.W_Q;  // chapter 04's queries, (5 × 4)
  const arma::mat K = sentence.X * sentence.W.W_K;  // and keys, (5 × 4)
  const arma::vec at = arma::regspace(0, 4);        // the five words' positions
  const double shift = 7.0;                         // every position moved by 7
  const double moved = attn::math::rotary_shift_error(Q, K, at, shift);
  const double layouts = attn::math::rotary_layout_error(Q, K, at, at);
  //! [rope-properties]
  fmt::print(ch.out, "chapter 04's Q and K: every position moved by {}, ", shift);
  fmt::print(ch.out, "the scores stay ({}); ", kShiftTolerance);
  fmt::print(ch.out, "the rotate_half layout, columns reordered, gives the same scores ({})\n",
             kLayoutTolerance);
  fmt::print(ch.log, "RoPE: scores moved {:.3g}, layouts differ by {:.3g}\n", moved, layouts);
  const std::string offset_claim =
      fmt::format("RoPE scores depend on n - m only (positions + {}, {})", shift, kShiftTolerance);
  ch.checks.claim(offset_claim, moved <= kShiftTolerance);
  const std::string layout_claim =
      fmt::format("rotate_half = interleaved after reordering the columns ({})", kLayoutTolerance);
  ch.checks.claim(layout_claim, layouts <= kLayoutTolerance);
}

void draw_positions(attn::book::Chapter& ch) {
  const arma::uword positions = 50;
  ch.plots.heatmap({.name = "07-01-positions",
                    .title = fmt::format("Sinusoidal positions, d_model = {}", kFigureWidth),
                    .queries = attn::book::tick_labels(positions, 10),
                    .keys = attn::book::tick_labels(kFigureWidth, 16),
                    .values = attn::math::sinusoidal_positions(positions, kFigureWidth),
                    .scale = attn::book::ColourScale::scores,
                    .write_values = false,
                    .x_label = "dimension",
                    .y_label = "position",
                    .colour_label = "PE"});
}

void draw_similarity(attn::book::Chapter& ch) {
  const arma::uword shifts = 101;  // k = 0 to 100
  const arma::uword early = 0;
  const arma::uword late = 40;
  const attn::book::Series from_early{
      .label = fmt::format("p = {}", early),
      .y = attn::math::sinusoidal_similarity(early, shifts, kFigureWidth),
      .colour = colour::blue};
  const attn::book::Series from_late{
      .label = fmt::format("p = {}", late),
      .y = attn::math::sinusoidal_similarity(late, shifts, kFigureWidth),
      .colour = colour::red,
      .dashed = true};
  ch.plots.lines(
      {.name = "07-02-similarity",
       .title = fmt::format("PE(p)·PE(p + k) depends on k only (d_model = {})", kFigureWidth),
       .x_label = "k",
       .y_label = "dot product",
       .x = arma::regspace<arma::rowvec>(0, shifts - 1),
       .series = {from_early, from_late},
       .key_at = "top right"});
}

// The worked q·k with q at 12 and k at 0 to 24: offsets n - m from -12 to 12.
void draw_rope_offset(attn::book::Chapter& ch) {
  const double query_at = 12.0;
  const arma::rowvec keys_at = arma::regspace<arma::rowvec>(0, 2 * query_at);
  arma::rowvec scores(keys_at.n_elem);
  for (arma::uword i = 0; i < keys_at.n_elem; ++i) {
    scores(i) = worked_score(query_at, keys_at(i));
  }
  const attn::book::Series worked{
      .label = "q = (1, 2), k = (3, -1)", .y = scores, .colour = colour::blue};
  ch.plots.lines({.name = "07-03-rope-offset",
                  .title = "RoPE: q·k against the offset n - m",
                  .x_label = "n - m",
                  .y_label = "q·k",
                  .x = keys_at - query_at,
                  .series = {worked},
                  .key_at = "below"});
}

void draw_dog_weights(attn::book::Chapter& ch, const DogInBothOrders& blind,
                      const DogInBothOrders& placed) {
  const attn::book::Series blind_first{.label = "no positions, dog bites man",
                                       .y = blind.weights_first,
                                       .colour = colour::light_blue};
  const attn::book::Series blind_last{
      .label = "no positions, man bites dog", .y = blind.weights_last, .colour = colour::sky_blue};
  const attn::book::Series placed_first{.label = "positions, dog bites man",
                                        .y = placed.weights_first,
                                        .colour = colour::light_orange};
  const attn::book::Series placed_last{
      .label = "positions, man bites dog", .y = placed.weights_last, .colour = colour::orange};
  ch.plots.bars({.name = "07-04-dog-weights",
                 .title = "How much \"dog\" takes from each word",
                 .labels = {"dog", "bites", "man"},
                 .series = {blind_first, blind_last, placed_first, placed_last},
                 .value_label = "weight"});
}

void tell_story(attn::book::Chapter& ch) {
  const RandomSentence cat = attn::ch04::random_sentence(kSeed, kCatSentence);
  attention_cannot_see_order(ch, cat);

  //! [dog]
  // One embedding per word, drawn as chapter 04 draws them: X is (3 × 8).
  const RandomSentence words = attn::ch04::random_sentence(kSeed, kDogSentence);
  const arma::mat no_positions = arma::zeros(arma::size(words.X));
  const arma::mat positions = attn::math::sinusoidal_positions(words.X.n_rows, words.X.n_cols);
  const DogInBothOrders blind = dog_in_both_orders(words, no_positions);
  const DogInBothOrders placed = dog_in_both_orders(words, positions);
  //! [dog]
  dog_without_positions(ch, blind);

  sinusoidal_table(ch);
  dog_with_positions(ch, placed);
  shifts_are_rotations(ch);

  rotary_worked_example(ch);
  rotary_on_chapter_04(ch, cat);

  draw_positions(ch);
  draw_similarity(ch);
  draw_rope_offset(ch);
  draw_dog_weights(ch, blind, placed);
}

}  // namespace

int main(int argc, char** argv) {
  const attn::book::ChapterInfo info{
      .executable = "ch07_positions",
      .summary =
          "Chapter 07: attention cannot see word order; sinusoidal and rotary positions fix it",
      .reference = "numpy",  // beyond the articles: checked against numpy's numbers
  };
  return attn::book::run_chapter(argc, argv, info, tell_story);
}
