/// \file
/// \brief The training recipe real models use (chapter 11): the AdamW optimiser, a learning
///        rate that warms up and then decays along a cosine, and clipping of the gradient's
///        norm, each equal to PyTorch's (torch 2.6) within 1e-10 on
///        tests/data/torch_optimizer.txt.
///
/// One training step, in the order PyTorch's loop does it:
/// \code
///   std::vector<arma::mat> gradients = ...;                    // backward pass
///   const double norm = attn::math::clip_grad_norm(gradients, 1.0);  // log it: spikes show here
///   optimizer.step(parameters, gradients, attn::math::learning_rate(schedule, step));
/// \endcode
#pragma once

#include <armadillo>

#include <cstdint>
#include <span>
#include <vector>

namespace attn::math {

/// \brief Everything AdamW remembers between steps: what a checkpoint saves.
///
/// A fresh optimiser has `steps == 0` and no moments; the first step makes them, zero, in the
/// parameters' shapes.
struct AdamWState {
  std::int64_t steps = 0;         ///< \f$t\f$: the steps taken so far (torch's `state["step"]`).
  std::vector<arma::mat> first;   ///< \f$m\f$ per parameter (torch's `state["exp_avg"]`).
  std::vector<arma::mat> second;  ///< \f$v\f$ per parameter (torch's `state["exp_avg_sq"]`).
};

/// \brief AdamW (Loshchilov and Hutter, 2019): Adam, with the weight decay taken out of the
///        gradient and applied to the parameter directly, as `torch.optim.AdamW` computes it.
///
/// For each parameter \f$\theta\f$ with gradient \f$g\f$, at step \f$t = 1, 2, \dots\f$ with
/// learning rate \f$\eta_t\f$, and \f$\lambda\f$ the weight decay if the parameter decays and
/// 0 if not:
/// \f[ \theta \leftarrow (1 - \eta_t \lambda)\,\theta, \quad
///     m \leftarrow \beta_1 m + (1-\beta_1) g, \quad
///     v \leftarrow \beta_2 v + (1-\beta_2) g^2, \f]
/// \f[ \theta \leftarrow \theta - \frac{\eta_t}{1-\beta_1^t} \cdot
///     \frac{m}{\sqrt{v}/\sqrt{1-\beta_2^t} + \epsilon}. \f]
/// The decay shrinks the parameter by the same fraction whatever its gradient; in Adam with an
/// \f$L_2\f$ penalty the decay would pass through \f$v\f$ and shrink parameters with large
/// gradients less. \f$\epsilon\f$ is added after the bias-corrected square root, where torch
/// adds it. PyTorch's equal: `torch.optim.AdamW([{"params": decayed, "weight_decay": λ},
/// {"params": others, "weight_decay": 0}], lr, betas, eps)` on the CPU (its single-tensor
/// loop), with the learning rate set before each step.
///
/// Which parameters decay is the caller's choice, one flag per parameter. nanoGPT decays every
/// matrix (attention and MLP weights, and the embeddings, the token embedding being tied to the
/// unembedding) and not the biases nor the layer norms' gains and shifts; minGPT also spared
/// the embeddings. Either rule is a choice of flags.
///
/// PyTorch's parameter groups may also give each group its own \f$\lambda\f$ and its own rate;
/// AdamW::Update is one parameter's: with its factor \f$f\f$, it takes \f$f\eta_t\f$ for
/// \f$\eta_t\f$ everywhere above, in the decay \f$(1 - f\eta_t\lambda)\,\theta\f$ too, as torch
/// uses a group's own rate. That equals torch when each group's rate is its factor times one
/// schedule (a `LambdaLR`, which scales each group's initial rate); torch's
/// `CosineAnnealingLR` instead ends every group at the same `eta_min`.
class AdamW {
 public:
  /// \brief How one parameter is updated, as its PyTorch parameter group says.
  struct Update {
    double weight_decay = 0.0;  ///< its \f$\lambda\f$; 0 for a parameter that does not decay.
    double rate_factor = 1.0;   ///< its rate is \f$\eta_t\f$ times this.
  };

  /// \brief \param updates one per parameter, in the order step() receives them. Its size
  ///        fixes the number of parameters.
  /// \param beta1 \f$\beta_1\f$. \param beta2 \f$\beta_2\f$. \param epsilon \f$\epsilon\f$.
  /// \throws InputError unless every decay is finite and at least 0, every rate factor finite
  ///         and at least 0, \p beta1 and \p beta2 in [0, 1), and \p epsilon finite and
  ///         positive (NaN fails each).
  AdamW(std::span<const Update> updates, double beta1, double beta2, double epsilon = 1e-8);

  /// \brief \param decays one flag per parameter, in the order step() receives them: whether
  ///        weight decay applies to it. Its size fixes the number of parameters.
  /// \param weight_decay \f$\lambda\f$ (torch's default 0.01; GPT-style training uses 0.1).
  /// \param beta1 \f$\beta_1\f$. \param beta2 \f$\beta_2\f$ (GPT-style training uses 0.95).
  /// \param epsilon \f$\epsilon\f$.
  /// \throws InputError unless \p weight_decay is finite and at least 0, \p beta1 and \p beta2
  ///         are in [0, 1), and \p epsilon is finite and positive (NaN fails each).
  explicit AdamW(std::vector<bool> decays, double weight_decay = 0.01, double beta1 = 0.9,
                 double beta2 = 0.999, double epsilon = 1e-8);

  /// \brief One update of every parameter from its gradient.
  /// \param parameters the matrices to update, one per flag (or Update) given at construction,
  ///        same order.
  /// \param gradients one gradient per parameter, same shapes, same order (clipped or not).
  /// \param learning_rate \f$\eta_t\f$ for this step, for example learning_rate(schedule, t).
  /// \throws ShapeError if the counts disagree with the flags, or a gradient's or moment's shape
  ///         with its parameter's (the index and both shapes are named).
  /// \throws InputError if \p learning_rate is negative, NaN or infinite, a parameter is a null
  ///         pointer or a gradient holds a NaN or an infinity (its index is named).
  ///         Nothing is updated when anything throws.
  void step(const std::vector<arma::mat*>& parameters, const std::vector<arma::mat>& gradients,
            double learning_rate);

  /// \brief The step count and the moments, to save in a checkpoint.
  /// \return the state as it is after the last step.
  [[nodiscard]] const AdamWState& state() const { return state_; }

  /// \brief Continues from a saved state: restoring what state() returned and stepping gives
  ///        bit for bit what never having stopped gives. The hyper-parameters and flags are
  ///        the constructor's, not saved.
  /// \param state what state() returned, here or in an optimiser with the same flags.
  /// \throws InputError if `steps` is negative, a moment holds a NaN or an infinity, or a
  ///         second moment holds a negative entry (a mean of squares cannot).
  /// \throws ShapeError unless there are no moments and `steps` is 0 (a fresh optimiser), or
  ///         one pair of moments per flag, each pair of one shape, and `steps` is at least 1.
  ///         A moment's shape is checked against its parameter's at the next step().
  ///         Nothing changes when anything throws.
  void restore(AdamWState state);

 private:
  std::vector<Update> updates_;
  double beta1_, beta2_, epsilon_;
  AdamWState state_;
};

/// \brief A learning-rate schedule: a linear warm-up, then a cosine decay to a minimum.
///
/// Written with designated initialisers: `attn::math::WarmupCosine{.peak = 6e-4, .minimum = 6e-5,
/// .warmup_steps = 10, .total_steps = 40, .start_factor = 1.0 / 11}`.
struct WarmupCosine {
  double peak = 0.0;              ///< \f$\eta_{\max}\f$, reached at the end of the warm-up.
  double minimum = 0.0;           ///< \f$\eta_{\min}\f$, reached at the last step.
  std::int64_t warmup_steps = 0;  ///< \f$W\f$.
  std::int64_t total_steps = 0;   ///< \f$T\f$.
  double start_factor = 0.0;      ///< \f$s\f$: step 0's rate is \f$s\,\eta_{\max}\f$.
};

/// \brief The learning rate at step \p step (counted from 0) of \p schedule:
/// \f[ \eta_t = \begin{cases}
///       \eta_{\max}\left(s + (1 - s)\,\frac{t}{W}\right) & 0 \le t < W,
///    \\ \eta_{\min} + \frac{1}{2}(\eta_{\max} - \eta_{\min})
///         \left(1 + \cos\frac{\pi\,(t - W)}{T - W}\right) & W \le t \le T,
///    \\ \eta_{\min} & t > T. \end{cases} \f]
///
/// The warm-up keeps the first updates small while AdamW's second moments, estimated from a
/// few gradients, are still unreliable; the cosine lowers the rate slowly at first, fast in
/// the middle and slowly again near the end.
///
/// For \f$W \ge 1\f$ and \f$0 < s \le 1\f$ it equals PyTorch's own schedulers, joined the way
/// torch joins them, with `lr=η_max` and the rate read before each `scheduler.step()`:
/// `SequentialLR(opt, [LinearLR(opt, start_factor=s, total_iters=W),
/// CosineAnnealingLR(opt, T_max=T-W, eta_min=η_min)], milestones=[W])`, within 1e-10 at every
/// step \f$0 \dots T\f$ (torch multiplies its rate by a ratio at each step, so the last bits
/// differ). From torch 2.6's source: SequentialLR hands over at step \f$W\f$ by calling the
/// cosine's `step(0)`, whose closed form gives exactly \f$\eta_{\max}\f$, so the built-ins
/// have no off-by-one here and no LambdaLR is needed. The cases they do not cover:
/// - \f$W = 0\f$: SequentialLR with milestone 0 starts at the warm-up's \f$s\,\eta_{\max}\f$
///   and the whole cosine follows from there (pytorch/pytorch#185872); the equal is
///   `CosineAnnealingLR(opt, T_max=T, eta_min=η_min)` alone.
/// - \f$s = 0\f$, a warm-up from 0: LinearLR refuses it (a LambdaLR of this formula does it);
///   step 0 then moves nothing, though AdamW's moments still take in its gradient.
///   \f$s = 1/(W + 1)\f$ is nanoGPT's warm-up, \f$\eta_{\max}(t+1)/(W+1)\f$.
/// - \f$t > T\f$: torch's cosine climbs again; here the rate stays at \f$\eta_{\min}\f$, as
///   nanoGPT's does.
/// \param schedule the schedule. \param step \f$t \ge 0\f$.
/// \return \f$\eta_t\f$.
/// \throws InputError unless \f$0 \le \eta_{\min} \le \eta_{\max}\f$, both finite,
///         \f$0 \le W < T\f$, \f$0 \le s \le 1\f$ and \f$t \ge 0\f$ (NaN fails each).
double learning_rate(const WarmupCosine& schedule, std::int64_t step);

/// \brief Clips the gradients' global norm, as `torch.nn.utils.clip_grad_norm_` does:
/// \f[ \lVert g \rVert = \sqrt{\textstyle\sum_i \lVert g_i \rVert_F^2}, \qquad
///     g_i \leftarrow g_i \cdot \min\!\left(1, \frac{c}{\lVert g \rVert + 10^{-6}}\right) \f]
/// over every gradient \f$g_i\f$ at once, so that clipping shortens the whole update without
/// turning it. Like torch 2.6 it always multiplies by the clamped coefficient; when
/// \f$\lVert g \rVert + 10^{-6} \le c\f$ that is 1 and the gradients are unchanged, bit for bit
/// (just below \f$c\f$ they shrink by about \f$10^{-6}/c\f$). torch takes each matrix's norm
/// and then the norm of those; summing every square at once gives the same number up to rounding.
/// \param gradients every gradient of the model, scaled in place.
/// \param max_norm \f$c > 0\f$; infinity measures the norm and changes nothing.
/// \return \f$\lVert g \rVert\f$ before clipping (what a training log shows).
/// \throws InputError if \p max_norm is not positive (NaN included), or the norm is NaN or
///         infinite (a gradient holds one, or the squares overflow), as torch's
///         `error_if_nonfinite=True` does; the gradients are unchanged then. torch's default
///         scales them anyway, by NaN, or by 0 for an infinite norm (which makes the infinite
///         entries NaN).
double clip_grad_norm(std::vector<arma::mat>& gradients, double max_norm);

}  // namespace attn::math
