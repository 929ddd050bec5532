/// \file
/// \brief The products of the float32 kernels: one `sgemm` on one thread, the same shared among
///        OpenMP threads by the columns of its result, and a linear layer's forward and backward
///        passes made of them.
///
/// Every matrix is column-major (Armadillo's and BLAS's order) and, where it holds tokens, one
/// column a token: \f$x^\top\f$ `(d × N)`, so that a product with a weight is one GEMM over the
/// whole batch and a token's entries are contiguous.
#pragma once

#include <armadillo>

namespace attn::fast {

/// \brief Which product: \f$\mathrm{op}(A)\,\mathrm{op}(B)\f$, each op a transpose or not,
///        written into \f$C\f$ or added to it.
struct Product {
  bool transpose_a = false;  ///< \f$A^\top\f$ rather than \f$A\f$.
  bool transpose_b = false;  ///< \f$B^\top\f$ rather than \f$B\f$.
  bool accumulate = false;   ///< \f$C \mathrel{+}= \dots\f$ rather than \f$C = \dots\f$.
};

/// \brief \f$C = \mathrm{op}(A)\,\mathrm{op}(B)\f$ (or \f$C \mathrel{+}= \dots\f$): one `sgemm`
///        on the calling thread, on blocks of larger column-major matrices.
///
/// `// C: (m × n), op(A): (m × k), op(B): (k × n)`
/// `// lda, ldb, ldc: the rows of the matrices the blocks are cut from`
/// \param how the transposes and whether to add. \param m,n,k the sizes.
/// \param A,B,C the blocks. \param lda,ldb,ldc their leading dimensions.
void multiply(Product how, arma::uword m, arma::uword n, arma::uword k, const float* A,
              arma::uword lda, const float* B, arma::uword ldb, float* C, arma::uword ldc);

/// \brief \f$C = \mathrm{op}(A)\,\mathrm{op}(B)\f$ (or \f$C \mathrel{+}= \dots\f$) over whole
///        matrices, \f$C\f$'s columns shared among the OpenMP threads, each running its own
///        `sgemm` on its share (whole groups of 16 columns, the widest register tiles).
///
/// `// op(A): (m × k), op(B): (k × n), C: (m × n), already of that size`
/// \param how the transposes and whether to add. \param A,B the factors. \param C the result.
void multiply_shared(Product how, const arma::fmat& A, const arma::fmat& B, arma::fmat& C);

/// \brief Whether a kernel writes its result or adds it to what is there (a branch's output to
///        the residual stream, a gradient to the stream's).
enum class Output {
  overwrite,  ///< \f$y = \dots\f$
  add,        ///< \f$y \mathrel{+}= \dots\f$
};

/// \brief A linear layer over every token at once: \f$y = W^\top x + b\f$, or
///        \f$y \mathrel{+}= W^\top x + b\f$ into a residual stream.
///
/// `// W: (d_in × d_out), b: (d_out) or empty for no bias, x: (d_in × N), y: (d_out × N)`
///
/// The bias is written (or added) first and the product added to it by `sgemm`.
/// \param W the weight. \param b the bias, or an empty vector. \param x the input.
/// \param y the output: sized here when overwritten, already `(d_out × N)` when added to.
/// \param output whether \p y is overwritten or added to.
void linear_forward(const arma::fmat& W, const arma::fvec& b, const arma::fmat& x, arma::fmat& y,
                    Output output = Output::overwrite);

/// \brief The backward pass of linear_forward(), given \f$\partial L/\partial y\f$:
///        \f$\partial L/\partial W = x\,(\partial L/\partial y)^\top\f$,
///        \f$\partial L/\partial b = \sum_{\text{tokens}} \partial L/\partial y\f$,
///        \f$\partial L/\partial x = W\,\partial L/\partial y\f$.
///
/// `// W: (d_in × d_out), x: (d_in × N), dy: (d_out × N)`
/// `// dW: (d_in × d_out), db: (d_out), dx: (d_in × N)`
/// \param W,x as given to linear_forward(). \param dy the gradient of its output.
/// \param dW its weight's gradient. \param db its bias's, or `nullptr` for a layer without one.
/// \param dx its input's, overwritten.
void linear_backward(const arma::fmat& W, const arma::fmat& x, const arma::fmat& dy, arma::fmat& dW,
                     arma::fvec* db, arma::fmat& dx);

}  // namespace attn::fast
