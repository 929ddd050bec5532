/// \file
/// \brief Chapter 01's example: article 004's money, bank and river, in two dimensions.
#pragma once

#include <armadillo>

#include <string>
#include <vector>

/// \brief Chapter 01's own material: article 004's money, bank and river embeddings.
namespace attn::ch01 {

/// \brief Article 004's "money bank river": three toy 2-D embeddings, one row per token.
///
/// They are the article's own, chosen so that the dot products with "bank" are exactly the
/// scores it reasons with: 0.2 for money, 1.0 for bank itself, 0.7 for river.
struct MoneyBankRiver {
  std::vector<std::string> tokens;  ///< money, bank, river.
  arma::mat embeddings;             ///< `E: (3 × 2)`, one row per token.
  arma::uword bank = 1;             ///< the row of "bank", the token that asks.
};

/// \brief The money-bank-river embeddings of article 004.
/// \return tokens, embeddings and the row of "bank".
MoneyBankRiver money_bank_river();

}  // namespace attn::ch01
