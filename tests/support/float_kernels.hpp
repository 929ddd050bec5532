// What the fast layer's float32 kernel tests (tests/lib/fast/*_test.cpp) share: a fixture run
// once per seed, whose draws (sizes, values, token ids) come from that seed's generator, rounded
// to float first, so that a kernel and its float64 twin read the very same numbers and only the
// arithmetic differs; and the one measure of how far the two results are.
#pragma once

#include <attn/math/compare.hpp>

#include <gtest/gtest.h>

#include <armadillo>

#include <array>
#include <cstdint>
#include <string>

namespace attn_test {

/// The seeds every kernel test runs from: each draws its own shapes and values.
inline constexpr std::array<std::uint64_t, 4> kKernelSeeds = {11, 12, 13, 14};

/// A case's name: its seed, `seed11`, so that a failure names the kernel and the seed.
inline std::string seed_name(const ::testing::TestParamInfo<std::uint64_t>& info) {
  return "seed" + std::to_string(info.param);
}

/// Draws from a seeded generator: sizes, standard normal floats, token ids.
class FloatDraws {
 public:
  explicit FloatDraws(std::uint64_t seed) { arma::arma_rng::set_seed(seed); }

  /// A size in [lo, hi].
  [[nodiscard]] arma::uword size(arma::uword lo, arma::uword hi) const {
    return static_cast<arma::uword>(
        arma::randi(arma::distr_param(static_cast<int>(lo), static_cast<int>(hi))));
  }
  /// `(rows × cols)` standard normal draws, times `scale`, rounded to float.
  [[nodiscard]] arma::fmat floats(arma::uword rows, arma::uword cols, double scale = 1.0) const {
    return arma::conv_to<arma::fmat>::from(arma::mat(arma::randn(rows, cols) * scale));
  }
  /// `(count)` of them.
  [[nodiscard]] arma::fvec column(arma::uword count, double scale = 1.0) const {
    return arma::fvec(floats(count, 1, scale));
  }
  /// `(count)` ids in [0, below).
  [[nodiscard]] arma::uvec ids(arma::uword count, arma::uword below) const {
    return arma::randi<arma::uvec>(count, arma::distr_param(0, static_cast<int>(below) - 1));
  }
};

/// A kernel's test, run once per seed of kKernelSeeds (the seed names the case), drawing its
/// inputs from `draws` in the order its members are declared.
class KernelTest : public ::testing::TestWithParam<std::uint64_t> {
 protected:
  const FloatDraws draws{GetParam()};

  /// A float matrix in double, exactly: what its float64 twin reads.
  static arma::mat wide(const arma::fmat& m) { return arma::conv_to<arma::mat>::from(m); }

  /// A float vector as the row a float64 twin takes (γ, β, a bias).
  static arma::rowvec wide_row(const arma::fvec& v) {
    return arma::conv_to<arma::rowvec>::from(arma::fmat(v).t());
  }

  /// How far a float32 kernel's result is from its float64 twin's: attn::math::relative_gap(),
  /// the largest difference over the reference's largest entry (over 1 when that is smaller).
  static double gap(const arma::fmat& ours, const arma::mat& reference) {
    return attn::math::relative_gap(wide(ours), reference);
  }
};

}  // namespace attn_test
