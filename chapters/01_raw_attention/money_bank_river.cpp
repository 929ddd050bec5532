#include "money_bank_river.hpp"

namespace attn::ch01 {

//! [money-bank-river]
MoneyBankRiver money_bank_river() {
  MoneyBankRiver m;
  m.tokens = {"money", "bank", "river"};
  m.embeddings = {
      // E: (3 × 2)
      {0.20, 0.98},  // money
      {1.00, 0.00},  // bank
      {0.70, 0.71},  // river
  };
  m.bank = 1;
  return m;
}
//! [money-bank-river]

}  // namespace attn::ch01
