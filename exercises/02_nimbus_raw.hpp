/// \file
/// \brief Chapter 02's exercises: raw attention on the Nimbus question, token by token.
#pragma once

#include <armadillo>

#include <string>
#include <vector>

namespace attn::exercises {

std::string strongest_partner(const arma::mat& E, const std::vector<std::string>& tokens,
                              const std::string& token);
arma::mat raw_weights(const arma::mat& E);

}  // namespace attn::exercises
