// Random inputs for the math layer's tests. They come from Armadillo's own generator with a
// fixed seed: the math tests may not use the numpy layer (tests link only their own layer),
// and need no particular stream, only generic numbers that are the same on every run.
#pragma once

#include <armadillo>

#include <cstdint>

namespace attn_test {

/// Standard normal matrices from a seeded generator, drawn in the order they are asked for.
class Normals {
 public:
  explicit Normals(std::uint64_t seed) { arma::arma_rng::set_seed(seed); }
  arma::mat normal(arma::uword rows, arma::uword cols) const { return arma::randn(rows, cols); }
};

}  // namespace attn_test
