// Chapter 07: attention cannot see word order ("dog bites man" and "man bites dog" give "dog"
// one vector); sinusoidal encodings, added to the embeddings, and rotary embeddings, turning
// queries and keys, tell positions apart. Its page: chapters/07_positions/chapter.md.

#include <attn/math/attention.hpp>
#include <attn/book/chapter.hpp>
#include <04_self_attention/random_sentence.hpp>
#include <attn/numpy/numpy_print.hpp>
#include <attn/math/positions.hpp>

#include <fmt/ostream.h>

#include <string>

namespace {

//! [article-numbers]
// The numbers this chapter must reproduce, as numpy computes them
// (tests/data/generate_position_fixtures.py): np.round(PE, 4) for d_model = 4, positions 0-3.
const std::string kNumpyTable = "[[ 0.      1.      0.      1.    ]\n"
                                " [ 0.8415  0.5403  0.01    1.    ]\n"
                                " [ 0.9093 -0.4161  0.02    0.9998]\n"
                                " [ 0.1411 -0.99    0.03    0.9996]]";
const double kPosition1Column2 = 0.8218561900175317;  // PE[1, 2] for d_model = 512
// RoPE's worked example, q = (1, 2), k = (3, -1): numpy's scores, in the same fixture script
// (tests/lib/math/positions_test.cpp holds the library to them).
const double kRopeSameOffset = -6.781228824;  // q·k, q at 5 and k at 3; at 2 and 0; at 10 and 8
const double kRopeOtherWay = 5.948935151;     // q at 3, k at 5
const double kOrderTolerance = 1e-15;         // largest |Z(PX) − P·Z(X)|
const double kShiftTolerance = 1e-12;         // largest |PE(p + k) − PE(p) turned by k|
//! [article-numbers]

std::string text(const arma::rowvec& v) { return attn::numpy::array_str(attn::numpy::round(v, 4)); }

// "dog" in "dog bites man" (row 0) and in "man bites dog" (row 2), with one embedding table.
struct Dog { arma::rowvec first, last, first_weights, last_weights; };

Dog dog_in_both(const attn::examples::RandomSentence& s, const arma::mat& PE) {
  const arma::uvec reversed = {2, 1, 0};
  const attn::Attention a = attn::self_attention(s.X + PE, s.W);
  const attn::Attention b = attn::self_attention(s.X.rows(reversed) + PE, s.W);
  return {a.output.row(0), b.output.row(2), a.weights.row(0),
          arma::rowvec(b.weights.row(2)).cols(reversed)};  // keys back in the order dog, bites, man
}

void order_blindness(attn::Chapter& ch, const attn::examples::RandomSentence& s, const Dog& blind) {
  //! [permute]
  const arma::uvec P = {4, 3, 2, 1, 0};  // the sentence reversed
  const arma::mat Z = attn::self_attention(s.X, s.W).output;
  const arma::mat Z_of_PX = attn::self_attention(s.X.rows(P), s.W).output;
  const double gap = arma::abs(Z_of_PX - Z.rows(P)).max();
  //! [permute]
  fmt::print(ch.out, "Attention cannot see word order\n\n\"the cat drank the milk\" (chapter 04, "
             "seed 0), reversed: each output row moves with its token, and nothing else changes\n"
             "\nout(dog), no positions:  dog bites man {}\n{:26}man bites dog {}\n",
             text(blind.first), "", text(blind.last));
  ch.log << fmt::format("largest |Z(PX) - P·Z(X)| = {:.3g}\n", gap);
  ch.checks.claim("Z(PX) = P·Z(X) within 1e-15, the sentence reversed", gap <= kOrderTolerance);
  ch.checks.claim("without positions dog's output is one vector in both sentences (1e-15)",
                  arma::abs(blind.first - blind.last).max() <= kOrderTolerance);
}

void sinusoidal(attn::Chapter& ch, const Dog& placed) {
  //! [table]
  const arma::mat PE = attn::sinusoidal_positions(4, 4);  // positions 0 to 3, d_model = 4
  const std::string table = attn::numpy::matrix_str(attn::numpy::round(PE, 4));
  //! [table]
  const double wide = attn::sinusoidal_positions(2, 512)(1, 2);
  const double shift_error = attn::largest_shift_error(100, 20, 512);
  fmt::print(ch.out, "\nSinusoidal positions, added to the embeddings\n\nnp.round(PE, 4), d_model "
             "= 4, positions 0 to 3:\n{}\n\nout(dog), positions added: dog bites man {}\n{:28}man "
             "bites dog {}\nthe two now differ by up to {:.4f}\n\nd_model = 512: PE[1, 2] = {}\n"
             "PE(p + k) is PE(p) turned pair by pair, for every p < 100 and k < 20 (within 1e-12)\n",
             table, text(placed.first), "", text(placed.last),
             arma::abs(placed.first - placed.last).max(), wide);
  ch.log << fmt::format("largest |PE(p + k) - R(k) PE(p)| = {:.3g}\n", shift_error);
  ch.checks.block("np.round(PE, 4)", kNumpyTable, table);
  // numpy's vectorised sine is 1 ulp above C's correctly rounded one: the 16th decimal differs.
  ch.checks.number("PE[1, 2], d_model = 512", kPosition1Column2, 15, wide);
  ch.checks.claim("PE(p + k) = R(k) PE(p) within 1e-12", shift_error <= kShiftTolerance);
}

// Returns the worked q·k over offsets −12 to 12 (q at 12), for the figure.
arma::rowvec rotary(attn::Chapter& ch, const attn::examples::RandomSentence& s) {
  fmt::print(ch.out, "\nRotary positions (RoPE), turning queries and keys\n\n"
                     "d = 2, θ = 1, q = (1, 2), k = (3, -1):\n");
  //! [rope-worked]
  const arma::rowvec q = {1.0, 2.0}, k = {3.0, -1.0};
  const auto score = [&](double m, double n) {
    return arma::dot(attn::rotary(q, arma::vec{m}), attn::rotary(k, arma::vec{n}));
  };
  //! [rope-worked]
  for (const auto& [m, n] : {std::pair{5.0, 3.0}, {2.0, 0.0}, {10.0, 8.0}, {3.0, 5.0}}) {
    fmt::print(ch.out, "  q at {:2}, k at {}: q·k = {:.9f}\n", m, n, score(m, n));
    ch.checks.number(fmt::format("q at {}, k at {}", m, n), m > n ? kRopeSameOffset : kRopeOtherWay,
                     9, score(m, n));
  }
  //! [rope-properties]
  const arma::mat Q = s.X * s.W.W_Q, K = s.X * s.W.W_K;  // chapter 04's, (5 × 4)
  const arma::vec at = arma::regspace(0, 4);
  const double moved = attn::rotary_shift_error(Q, K, at, 7.0);
  const double layouts = attn::rotary_layout_error(Q, K, at, at);
  //! [rope-properties]
  fmt::print(ch.out, "chapter 04's Q and K: every position moved by 7, the scores stay (1e-12); "
             "the rotate_half layout, columns reordered, gives the same scores (1e-14)\n");
  ch.log << fmt::format("RoPE: scores moved {:.3g}, layouts differ by {:.3g}\n", moved, layouts);
  ch.checks.claim("RoPE scores depend on n - m only (positions + 7, 1e-12)", moved <= 1e-12);
  ch.checks.claim("rotate_half = interleaved after reordering the columns (1e-14)", layouts <= 1e-14);
  arma::rowvec n = arma::regspace<arma::rowvec>(0, 24);
  return n.transform([&](double key_at) { return score(12.0, key_at); });
}

void draw(attn::Chapter& ch, const Dog& blind, const Dog& placed, const arma::rowvec& rope) {
  const arma::uword n = 50, d = 128;
  attn::Heatmap map{"07-01-positions", "Sinusoidal positions, d_model = 128",
                    attn::tick_labels(n, 10), attn::tick_labels(d, 16),
                    attn::sinusoidal_positions(n, d), attn::ColourScale::scores};
  std::tie(map.write_values, map.x_label, map.y_label, map.colour_label) =
      std::tuple{false, "dimension", "position", "PE"};
  ch.plots.heatmap(map);
  ch.plots.lines({"07-02-similarity", "PE(p)·PE(p + k) depends on k only (d_model = 128)", "k",
                  "dot product", arma::regspace<arma::rowvec>(0, 100),
                  {{"p = 0", attn::sinusoidal_similarity(0, 101, d), "#2166ac"},
                   {"p = 40", attn::sinusoidal_similarity(40, 101, d), "#d6604d", true}},
                  false, false, "top right"});
  ch.plots.lines({"07-03-rope-offset", "RoPE: q·k against the offset n - m", "n - m", "q·k",
                  arma::regspace<arma::rowvec>(-12, 12), {{"q = (1, 2), k = (3, -1)", rope, "#2166ac"}},
                  false, false, "below"});
  ch.plots.bars({"07-04-dog-weights", "How much \"dog\" takes from each word", {"dog", "bites", "man"},
                 {{"no positions, dog bites man", blind.first_weights, "#9ecae1"},
                  {"no positions, man bites dog", blind.last_weights, "#4292c6"},
                  {"positions, dog bites man", placed.first_weights, "#fdae6b"},
                  {"positions, man bites dog", placed.last_weights, "#e6550d"}}, "weight"});
}

}  // namespace

int main(int argc, char** argv) {
  const attn::ChapterInfo info{"ch07_positions", "Chapter 07: attention cannot see word order; "
                               "sinusoidal and rotary positions fix it", false, "numpy"};
  return attn::run_chapter(argc, argv, info, [](attn::Chapter& ch) {
    const auto cat = attn::examples::random_sentence("0", "the cat drank the milk");  // chapter 04's
    //! [dog]
    const auto words = attn::examples::random_sentence("0", "dog bites man");  // the table
    const Dog blind = dog_in_both(words, arma::zeros(3, 8));
    const Dog placed = dog_in_both(words, attn::sinusoidal_positions(3, 8));
    //! [dog]
    order_blindness(ch, cat, blind);
    sinusoidal(ch, placed);
    draw(ch, blind, placed, rotary(ch, cat));
  });
}
