#include "attn/math/mask.hpp"

#include "attn/math/validate.hpp"

#include <fmt/format.h>

#include <limits>
#include <stdexcept>

namespace attn::math {

Mask::Mask(arma::umat allowed) : allowed_(std::move(allowed)) {
  if (allowed_.is_empty())
    throw InputError("a mask needs at least one query and one key");
  allowed_.transform([](arma::uword v) { return v != 0 ? arma::uword{1} : arma::uword{0}; });
}

Mask Mask::causal(arma::uword n) {
  if (n == 0)
    throw InputError("a causal mask needs at least one token");
  //! [causal]
  return Mask(arma::trimatl(arma::umat(n, n, arma::fill::ones)));  // j <= i: tril
  //! [causal]
}

Mask Mask::causal_window(arma::uword n, arma::uword window) {
  if (n == 0 || window == 0)
    throw InputError(
        fmt::format("a sliding-window mask needs at least one token and a window of at least one "
                    "(got {} tokens, a window of {})",
                    n, window));
  //! [causal-window]
  arma::umat allowed(n, n, arma::fill::zeros);
  for (arma::uword i = 0; i < n; ++i) {
    const arma::uword first = i + 1 > window ? i + 1 - window : 0;  // i - w < j
    allowed(i, arma::span(first, i)).fill(1);                       // ... j <= i
  }
  //! [causal-window]
  return Mask(allowed);
}

Mask Mask::padding(arma::uword queries, arma::uword keys, arma::uword length) {
  if (length == 0 || length > keys)
    throw InputError(
        fmt::format("a padding mask of {} keys cannot have {} real ones", keys, length));
  if (queries == 0)
    throw InputError("a mask needs at least one query and one key");
  arma::umat allowed(queries, keys, arma::fill::zeros);
  allowed.cols(0, length - 1).fill(1);  // Armadillo's fill of a 0-row block is undefined
  return Mask(allowed);
}

Mask Mask::none(arma::uword queries, arma::uword keys) {
  return Mask(arma::umat(queries, keys, arma::fill::ones));
}

Mask Mask::from_allowed(const arma::umat& allowed) {
  return Mask(allowed);
}

Mask Mask::from_blocked(const arma::umat& blocked) {
  arma::umat allowed = blocked;
  allowed.transform([](arma::uword v) { return v != 0 ? arma::uword{0} : arma::uword{1}; });
  return Mask(allowed);
}

Mask Mask::operator&(const Mask& other) const {
  if (other.queries() != queries() || other.keys() != keys())
    throw ShapeError(fmt::format("combining masks: ({} × {}) and ({} × {}) differ in shape",
                                 queries(), keys(), other.queries(), other.keys()));
  return Mask(allowed_ % other.allowed_);
}

bool Mask::allows(arma::uword query, arma::uword key) const {
  if (query >= queries() || key >= keys())
    throw std::out_of_range(
        fmt::format("({}, {}) is outside a ({} × {}) mask", query, key, queries(), keys()));
  return allowed_(query, key) != 0;
}

arma::mat Mask::additive() const {
  arma::mat add(queries(), keys(), arma::fill::zeros);
  add.elem(arma::find(allowed_ == 0)).fill(-std::numeric_limits<double>::infinity());
  return add;
}

std::string Mask::picture() const {
  std::string text;
  for (arma::uword i = 0; i < queries(); ++i) {
    for (arma::uword j = 0; j < keys(); ++j) {
      if (j > 0)
        text += ' ';
      text += allowed_(i, j) ? '1' : '.';
    }
    text += '\n';
  }
  return text;
}

arma::mat masked_softmax_rows(const arma::mat& scores, const Mask& mask) {
  require_nonempty("softmax input", scores);
  require_finite("softmax input", scores);
  if (scores.n_rows != mask.queries() || scores.n_cols != mask.keys())
    throw ShapeError(fmt::format("masked softmax: scores {} and mask ({} × {}) differ in shape",
                                 shape_of(scores), mask.queries(), mask.keys()));
  const arma::uvec keys_allowed = arma::sum(mask.allowed(), 1);  // per query row
  for (arma::uword i = 0; i < scores.n_rows; ++i) {
    if (keys_allowed(i) == 0)
      throw InputError(
          fmt::format("query row {} may attend to no key: every key is masked, so "
                      "its softmax is 0/0 (PyTorch gives NaN or 0 here, by function "
                      "and version)",
                      i));
  }
  //! [masked-softmax]
  arma::mat weights(arma::size(scores), arma::fill::zeros);
  for (arma::uword i = 0; i < scores.n_rows; ++i) {
    const arma::uvec keys = arma::find(mask.allowed().row(i));
    const arma::rowvec row = scores.row(i);
    const arma::rowvec kept = row.cols(keys);
    const arma::rowvec e = arma::exp(kept - kept.max());  // blocked entries stay exactly 0
    arma::rowvec w(scores.n_cols, arma::fill::zeros);
    w.cols(keys) = e / arma::accu(e);
    weights.row(i) = w;
  }
  return weights;
  //! [masked-softmax]
}

}  // namespace attn::math
