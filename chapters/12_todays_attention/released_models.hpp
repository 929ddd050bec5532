/// \file
/// \brief Released models beside chapter 12's: their published configurations, the bytes their
///        KV cache holds per token, and their parameter counts, by formula.
#pragma once

#include <armadillo>

#include <cstddef>
#include <string>
#include <vector>

namespace attn::ch12 {

/// \brief A released model, from its published configuration (config.json) and, for the tokens
///        it was trained on, its paper (Llama 2: two trillion tokens; Mistral did not say).
struct RealModel {
  std::string name;              ///< as the tables print it.
  arma::uword vocabulary = 0;    ///< tokens.
  arma::uword d_model = 0;       ///< the residual stream's width.
  arma::uword layers = 0;        ///< blocks.
  arma::uword heads = 0;         ///< query heads.
  arma::uword kv_heads = 0;      ///< key/value heads.
  arma::uword d_head = 0;        ///< each head's width.
  arma::uword d_ff = 0;          ///< SwiGLU's hidden width (intermediate_size).
  arma::uword context = 0;       ///< max_position_embeddings in config.json.
  arma::uword window = 0;        ///< the sliding window; 0: none.
  double training_tokens = 0.0;  ///< 0: not published.
};
/// The tokens Llama 2 was trained on, as its paper says: two trillion.
inline constexpr double kLlama2Tokens = 2e12;
/// Llama 2 7B and 70B and Mistral 7B v0.1, from their config.json.
inline const std::vector<RealModel> kRealModels = {
    {.name = "Llama 2 7B",
     .vocabulary = 32000,
     .d_model = 4096,
     .layers = 32,
     .heads = 32,
     .kv_heads = 32,
     .d_head = 128,
     .d_ff = 11008,
     .context = 4096,
     .training_tokens = kLlama2Tokens},
    {.name = "Llama 2 70B",
     .vocabulary = 32000,
     .d_model = 8192,
     .layers = 80,
     .heads = 64,
     .kv_heads = 8,
     .d_head = 128,
     .d_ff = 28672,
     .context = 4096,
     .training_tokens = kLlama2Tokens},
    {.name = "Mistral 7B v0.1",
     .vocabulary = 32000,
     .d_model = 4096,
     .layers = 32,
     .heads = 32,
     .kv_heads = 8,
     .d_head = 128,
     .d_ff = 14336,
     .context = 32768,
     .window = 4096},
};

/// \brief The KV cache's bytes per token held: \f$2 \cdot L \cdot g \cdot d_k \cdot b\f$ (keys and
///        values, layers, key/value heads, each head's width, bytes per number).
/// \param layers \f$L\f$. \param kv_heads \f$g\f$. \param d_head \f$d_k\f$.
/// \param bytes_per_number \f$b\f$: 8 for doubles, 2 for fp16. \return the bytes.
std::size_t cache_bytes_per_token(arma::uword layers, arma::uword kv_heads, arma::uword d_head,
                                  std::size_t bytes_per_number);

/// \brief A released model's parameters, as Llama's code lays them out: untied input and output
///        embeddings (\f$2Vd\f$), and in each layer \f$W_Q\f$ and \f$W_O\f$ (\f$d \times h d_k\f$
///        each), \f$W_K\f$ and \f$W_V\f$ (\f$d \times g d_k\f$ each), SwiGLU's three matrices
///        (\f$3 d d_{ff}\f$) and two RMSNorm gains (\f$2d\f$), then a final RMSNorm (\f$d\f$).
/// \param m the model. \return the count.
double parameter_count(const RealModel& m);

}  // namespace attn::ch12
