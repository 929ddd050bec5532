/// \file
/// \brief Heads switched off in a forward pass, to measure what they did (an ablation).
///
/// Head \f$k\f$'s output is its block of the concatenation that \f$W_O\f$ projects,
/// \f[ \mathrm{MultiHead} = [\mathrm{head}_1, \dots, \mathrm{head}_h]\, W_O + b_O, \f]
/// one row of \f$d_k\f$ numbers a token, which meets rows \f$k d_k \dots (k+1) d_k - 1\f$ of
/// \f$W_O\f$, call them \f$W_O^{(k)}\f$: the head adds \f$\mathrm{head}_k W_O^{(k)}\f$ to the
/// layer's output. A masked head's block is one fixed row \f$r\f$ at every token, so the layer
/// adds \f$r\, W_O^{(k)}\f$ instead:
/// - **zero-ablation**, \f$r = 0\f$: the head is gone, the other heads and \f$b_O\f$ stay. The
///   later layers then see a stream the model never saw in training, which can cost more than
///   the head's information;
/// - **mean-ablation**, \f$r\f$ = the head's mean output over a reference text (head_means(),
///   heads.hpp), as interpretability work usually prefers: the later layers still get the
///   head's average contribution, and what is lost is how its output changes from token to
///   token.
///
/// The head's attention weights are still computed (and kept in the forward pass's record);
/// only its output is replaced. A mask is for measuring: a forward pass that masks a head has
/// no backward pass (block_backward() refuses it).
#pragma once

#include <attn/gpt/model.hpp>

#include <armadillo>

#include <map>
#include <optional>
#include <utility>
#include <vector>

namespace attn::gpt {

/// \brief The heads a forward pass masks, each with the row that replaces its output.
///        Default-constructed, it masks nothing, and a pass with it is the plain pass exactly.
class HeadMask {
 public:
  /// \brief Zero-ablation of head \p head of block \p layer.
  /// \param layer the block, from 0. \param head the head, from 0; both are checked against the
  ///        model when the mask is used. \return this mask, to chain.
  HeadMask& zero(arma::uword layer, arma::uword head);
  /// \brief Replaces the output of head \p head of block \p layer by \p row at every token.
  /// \param layer the block, from 0. \param head the head, from 0.
  /// \param row `(1 × d_k)`; its width is checked against the model when the mask is used.
  /// \return this mask, to chain.
  /// \throws InputError if \p row is empty (zero() masks with zeros) or not finite.
  HeadMask& replace(arma::uword layer, arma::uword head, arma::rowvec row);
  /// \brief Whether the mask masks no head. \return true if none.
  [[nodiscard]] bool empty() const { return rows_.empty(); }
  /// \brief The masked heads. \return (block, head) pairs, in order.
  [[nodiscard]] std::vector<std::pair<arma::uword, arma::uword>> masked() const;
  /// \brief What replaces each head of block \p layer: nothing for a head that is kept, its row
  ///        (zeros for zero-ablation) for a masked one.
  /// \param layer the block. \param config the model.
  /// \return one entry a head, `(1 × d_k)` each where there is one.
  /// \throws InputError if a masked head of block \p layer is outside \p config's (check()
  ///         judges the whole mask, other blocks included).
  /// \throws ShapeError if its replacement row is not \f$d_k\f$ wide (both widths are named).
  [[nodiscard]] std::vector<std::optional<arma::rowvec>> heads_of(
      arma::uword layer, const TransformerConfig& config) const;
  /// \brief Every masked head is one of \p config's and every row \f$d_k\f$ wide.
  /// \param config the model. \throws InputError if a masked head or block is outside
  ///        \p config's. \throws ShapeError if a replacement row is not \f$d_k\f$ wide.
  void check(const TransformerConfig& config) const;

 private:
  std::map<std::pair<arma::uword, arma::uword>, arma::rowvec> rows_;  // an empty row: zeros
};

}  // namespace attn::gpt
