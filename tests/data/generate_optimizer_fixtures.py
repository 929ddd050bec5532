#!/usr/bin/python3
"""Chapter 11's training recipe as PyTorch computes it, in float64, for the C++ tests.

tests/data/torch_optimizer.txt holds:

- "schedule S ...": two learning-rate schedules, a linear warm-up then a cosine decay, as
  torch.optim.lr_scheduler builds one from its own parts:

      SequentialLR(opt, [LinearLR(opt, start_factor, total_iters=W),
                         CosineAnnealingLR(opt, T_max=T - W, eta_min=minimum)], milestones=[W])

  and the learning rate it gives at every step 0..T (the value in opt.param_groups before the
  step's scheduler.step(), which is the one optimizer.step() uses). SequentialLR switches to
  the cosine by calling its step(0), which torch deprecates with a warning; it is silenced here.
- "adamw ...": six steps of a small model's training loop, four parameter matrices (two that
  decay, two that do not, as two parameter groups), each step doing

      grads given -> torch.nn.utils.clip_grad_norm_(params, max_norm) -> AdamW.step() -> scheduler.step()

  with torch.optim.AdamW (betas (0.9, 0.95), weight decay 0.1 on the first group and 0 on the
  second) and the schedule "schedule 1". Recorded: each gradient as given, the norm
  clip_grad_norm_ returns, the gradient it leaves, the learning rate used, every parameter
  after the step and AdamW's two moments (state["exp_avg"], state["exp_avg_sq"]). The gradient
  scales are chosen so that steps 1, 3 and 5 clip and steps 0, 2 and 4 do not.

Run with Debian's python3-torch (Debian 13's torch 2.6):

    /usr/bin/python3 tests/data/generate_optimizer_fixtures.py          # verify
    /usr/bin/python3 tests/data/generate_optimizer_fixtures.py --write  # write after a change

Verifying compares with the committed file (the numbers within 1e-13, since torch versions
differ in the last bits) and never writes. Every number drawn comes from numpy's
default_rng(31).
"""
import pathlib
import sys
import warnings

import numpy as np
import torch

from torch_pieces import Blocks, check_or_write_blocks, scheduler

HERE = pathlib.Path(__file__).resolve().parent
FIXTURE = HERE / "torch_optimizer.txt"

torch.set_default_dtype(torch.float64)

# (peak, minimum, warm-up steps W, total steps T, start factor): a GPT-style schedule that
# warms up over 10 steps from peak/11, as nanoGPT's (t + 1)/(W + 1) does, and the short one
# the training loop below uses.
SCHEDULES = [(6e-4, 6e-5, 10, 40, 1.0 / 11.0), (0.05, 0.005, 2, 5, 1.0 / 3.0)]

# The training loop's parameters: (name, shape, decays). The matrices that multiply decay;
# the bias and the layer norm's gain do not, as in nanoGPT's two parameter groups.
PARAMETERS = [("embedding", (7, 4), True), ("W1", (4, 6), True), ("b1", (1, 6), False),
              ("gamma", (1, 4), False)]
BETAS, EPS, WEIGHT_DECAY, MAX_NORM = (0.9, 0.95), 1e-8, 0.1, 5.0
# About 7.3 * scale is each step's norm (53 entries): below 5 on steps 0, 2, 4, above on 1, 3, 5.
GRADIENT_SCALES = [0.3, 3.0, 0.5, 2.0, 0.2, 4.0]


def schedule_rates(peak, minimum, warmup, total, start_factor):
    """The learning rate at steps 0..total."""
    optimizer = torch.optim.AdamW([torch.zeros(1, requires_grad=True)], lr=peak)
    lr = scheduler(optimizer, warmup, total, start_factor, minimum)
    rates = []
    for _ in range(total + 1):
        rates.append(optimizer.param_groups[0]["lr"])
        optimizer.step()  # no gradient: nothing moves, but the scheduler sees a step first
        lr.step()
    return rates


def training(blocks):
    rng = np.random.default_rng(31)
    params = []
    for name, shape, _ in PARAMETERS:
        offset = 1.0 if name == "gamma" else 0.0
        params.append(torch.tensor(rng.normal(size=shape) * 0.5 + offset, requires_grad=True))
    for (name, _, _), p in zip(PARAMETERS, params):
        blocks.add(f"adamw initial {name}", p.detach())
    peak, minimum, warmup, total, start_factor = SCHEDULES[1]
    optimizer = torch.optim.AdamW(
        [{"params": [p for p, (_, _, d) in zip(params, PARAMETERS) if d],
          "weight_decay": WEIGHT_DECAY},
         {"params": [p for p, (_, _, d) in zip(params, PARAMETERS) if not d],
          "weight_decay": 0.0}],
        lr=peak, betas=BETAS, eps=EPS)
    lr = scheduler(optimizer, warmup, total, start_factor, minimum)
    for t, scale in enumerate(GRADIENT_SCALES):
        for (name, _, _), p in zip(PARAMETERS, params):
            p.grad = torch.tensor(rng.normal(size=tuple(p.shape)) * scale)
            blocks.add(f"adamw step {t} gradient {name}", p.grad)
        norm = torch.nn.utils.clip_grad_norm_(params, MAX_NORM)
        blocks.add(f"adamw step {t} norm", [norm.item()])
        blocks.add(f"adamw step {t} learning rate", [optimizer.param_groups[0]["lr"]])
        for (name, _, _), p in zip(PARAMETERS, params):
            blocks.add(f"adamw step {t} clipped {name}", p.grad)
        optimizer.step()
        lr.step()
        for (name, _, _), p in zip(PARAMETERS, params):
            state = optimizer.state[p]
            assert state["step"].item() == t + 1
            blocks.add(f"adamw step {t} parameter {name}", p.detach())
            blocks.add(f"adamw step {t} first moment {name}", state["exp_avg"])
            blocks.add(f"adamw step {t} second moment {name}", state["exp_avg_sq"])


def fixture():
    blocks = Blocks()
    with warnings.catch_warnings():  # SequentialLR's own step(0) is deprecated
        warnings.simplefilter("ignore", UserWarning)
        for s, (peak, minimum, warmup, total, start_factor) in enumerate(SCHEDULES):
            blocks.add(f"schedule {s} config", [peak, minimum, warmup, total, start_factor])
            blocks.add(f"schedule {s} learning rates",
                       schedule_rates(peak, minimum, warmup, total, start_factor))
        blocks.add("adamw config", [BETAS[0], BETAS[1], EPS, WEIGHT_DECAY, MAX_NORM,
                                    len(GRADIENT_SCALES)])
        blocks.add("adamw decays", [float(d) for _, _, d in PARAMETERS])
        training(blocks)
    text = (f"# chapter 11's optimiser pieces in float64, torch {torch.__version__}, numpy "
            f"{np.__version__}, by tests/data/generate_optimizer_fixtures.py\n"
            "# parameters in this order: " + " ".join(n for n, _, _ in PARAMETERS) + "\n"
            + "\n".join(blocks.lines) + "\n")
    return text, blocks.values


def main():
    text, values = fixture()
    sys.exit(0 if check_or_write_blocks(FIXTURE, text, values) else 1)


if __name__ == "__main__":
    main()
