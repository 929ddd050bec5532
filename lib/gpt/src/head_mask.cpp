#include "attn/gpt/head_mask.hpp"

#include <attn/math/validate.hpp>

#include <fmt/format.h>

namespace attn::gpt {

HeadMask& HeadMask::zero(arma::uword layer, arma::uword head) {
  rows_[{layer, head}] = arma::rowvec();
  return *this;
}

HeadMask& HeadMask::replace(arma::uword layer, arma::uword head, arma::rowvec row) {
  if (row.n_elem == 0)
    throw math::InputError(
        fmt::format("HeadMask: the row for head {} of block {} is empty; zero() masks with zeros",
                    head, layer));
  math::require_finite("HeadMask's row", row);
  rows_[{layer, head}] = std::move(row);
  return *this;
}

std::vector<std::pair<arma::uword, arma::uword>> HeadMask::masked() const {
  std::vector<std::pair<arma::uword, arma::uword>> heads;
  for (const auto& [where, row] : rows_)
    heads.push_back(where);
  return heads;
}

namespace {

// One masked head is one of the model's, and its row (if not zeros) is d_k wide.
void check_head(arma::uword layer, arma::uword head, const arma::rowvec& row,
                const TransformerConfig& config) {
  if (layer >= config.layers || head >= config.heads)
    throw math::InputError(
        fmt::format("HeadMask: head {} of block {} is not one of the model's {} blocks of {} "
                    "heads",
                    head, layer, config.layers, config.heads));
  const arma::uword d_k = config.d_model / config.heads;
  if (row.n_elem != 0 && row.n_elem != d_k)
    throw math::ShapeError(fmt::format(
        "HeadMask: the row for head {} of block {} has {} entries; the heads are {} wide", head,
        layer, row.n_elem, d_k));
}

}  // namespace

void HeadMask::check(const TransformerConfig& config) const {
  for (const auto& [where, row] : rows_)
    check_head(where.first, where.second, row, config);
}

std::vector<std::optional<arma::rowvec>> HeadMask::heads_of(arma::uword layer,
                                                            const TransformerConfig& config) const {
  std::vector<std::optional<arma::rowvec>> heads(config.heads);
  for (const auto& [where, row] : rows_) {
    if (where.first != layer)
      continue;
    check_head(where.first, where.second, row, config);  // before it is used as an index
    heads[where.second] =
        row.n_elem == 0 ? arma::rowvec(config.d_model / config.heads, arma::fill::zeros) : row;
  }
  return heads;
}

}  // namespace attn::gpt
