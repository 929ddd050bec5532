#!/usr/bin/python3
"""Three training steps of chapter 11's kind of model as PyTorch computes them, in float64,
for the C++ tests (tests/lib/gpt/torch_gpt_test.cpp).

tests/data/torch_gpt.txt holds a small GPT built from PyTorch's own modules: nn.Embedding for
the tokens and for learned positions (max_length × d), pre-LN blocks of nn.LayerNorm,
nn.MultiheadAttention (biases, a causal attn_mask) and a GELU MLP of two nn.Linear, a final
nn.LayerNorm, and tied embeddings: the logits are ln_f(x) @ E.T, without a bias. Dropout is
off. A batch is three windows of max_length + 1 tokens, each attending causally to itself
only (what attn::pack_sentences() gives), and its loss F.cross_entropy's mean over every row.
Each of three steps does, as chapter 11's training loop does:

    loss.backward() -> torch.nn.utils.clip_grad_norm_(params, MAX_NORM)
        -> torch.optim.AdamW.step() -> scheduler.step()

with AdamW's two parameter groups: weight decay 0.1 on the block matrices (W_Q, W_K, W_V,
W_O, W1, W2: in torch in_proj_weight, out_proj.weight, fc1.weight, fc2.weight), 0 on the
rest (embeddings, positions, biases, layer norms), the chapter's betas (0.9, 0.999) and eps
1e-8 (attn::math::AdamW's defaults), and the learning rate from torch's own schedulers, as
attn/math/optimizer.hpp names them:

    SequentialLR(opt, [LinearLR(opt, start_factor=s, total_iters=W),
                       CosineAnnealingLR(opt, T_max=T - W, eta_min=minimum)], milestones=[W])

A second run trains the same kind of model (from default_rng(43)) with parameter groups, as
fine-tuning does: the embedding, the positions and block 0 frozen (requires_grad=False), block 1
in two groups of its own at half the rate and weight decay 0.05 on its matrices, the final norm
as before; the rate follows the first run's three rates through a LambdaLR. Its blocks are
named "frozen ..." (tests/lib/gpt/torch_gpt_test.cpp trains it with attn::gpt::train() and
ParameterGroup).

Recorded: the config, the optimiser's settings, the schedule, one decay flag per parameter
(from the torch group it sits in), the batch, every weight before the first step, and per
step the loss, the logits, the norm clip_grad_norm_ returns (before clipping), the learning
rate used and every parameter after the step. Weights are in our layout and names
(attn::gpt::parameters()'s order): ours are PyTorch's transposes where PyTorch stores a
Linear's weight, and in_proj_weight is [W_Q; W_K; W_V].

The key bias b_K has a gradient of 0 in exact arithmetic (softmax takes away the q·b_K it adds
to a row of scores): what torch records for it is rounding (about 1e-17), which AdamW divides
by its square root plus eps, so its b_K drifts by about 1e-11 a step. The C++ test holds b_K to
that noise rather than to 1e-10.

Run with Debian's python3-torch (Debian 13's torch 2.6):

    /usr/bin/python3 tests/data/generate_gpt_fixtures.py          # verify
    /usr/bin/python3 tests/data/generate_gpt_fixtures.py --write  # write after a change

Verifying compares with the committed file (the numbers within 1e-13, since torch versions
differ in the last bits; the key bias within the drift described above) and never writes.
Every number drawn comes from numpy's default_rng(41), and the second run's from
default_rng(43).
"""
import pathlib
import sys
import warnings

import numpy as np
import torch
import torch.nn.functional as F

from torch_pieces import Block, Blocks, as_is, block_parameters, check_or_write_blocks, randomise, \
    scheduler

HERE = pathlib.Path(__file__).resolve().parent
FIXTURE = HERE / "torch_gpt.txt"

torch.set_default_dtype(torch.float64)

# The model: small, so the file stays small, with every kind of layer twice.
V, D, HEADS, LAYERS, D_FF, MAX_LENGTH = 11, 8, 2, 2, 16, 6
WINDOWS = 3
# The optimiser: chapter 11's weight decay, attn::math::AdamW's default betas and eps.
BETAS, EPS, WEIGHT_DECAY = (0.9, 0.999), 1e-8, 0.1
# The schedule (peak, minimum, warm-up steps W, total steps T, start factor s): steps 0, 1, 2
# run at s·peak, peak and halfway down the cosine.
PEAK, MINIMUM, WARMUP, TOTAL, START_FACTOR = 1e-2, 1e-3, 1, 3, 0.5
STEPS = 3
# Between the norms of the steps before clipping (about 8.66, 2.98 and 3.36): steps 0 and 2
# clip, step 1 does not. (AdamW's first update hardly depends on the gradient's scale, so
# clipping only step 0 would barely show; step 2's clip weighs its gradient against step 1's.)
MAX_NORM = 3.2


class Gpt(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = torch.nn.Embedding(V, D)
        self.position = torch.nn.Embedding(MAX_LENGTH, D)
        self.blocks = torch.nn.ModuleList(Block(D, HEADS, D_FF) for _ in range(LAYERS))
        self.lnf = torch.nn.LayerNorm(D)

    def forward(self, tokens):
        """tokens: (windows × n), each window on its own. Returns (windows·n × V)."""
        x = self.embedding(tokens) + self.position(torch.arange(tokens.shape[1]))
        for block in self.blocks:
            x = block(x)
        return (self.lnf(x) @ self.embedding.weight.T).reshape(-1, V)  # tied: no W_U, no b_U

    def decayed(self):
        """The tensors of the decaying group: the matrices inside the blocks."""
        return [m for b in self.blocks for m in (b.attention.in_proj_weight,
                                                 b.attention.out_proj.weight, b.fc1.weight,
                                                 b.fc2.weight)]

    def ours(self):
        """(our name, torch tensor, get) in attn::gpt::parameters()'s order; `get` maps the
        tensor to our layout."""
        entries = [("embedding", self.embedding.weight, as_is),
                   ("position_embedding", self.position.weight, as_is)]
        for l, b in enumerate(self.blocks):
            entries += block_parameters(f"blocks.{l}.", b)
        return entries + [("lnf.gamma", self.lnf.weight, as_is), ("lnf.beta", self.lnf.bias, as_is)]


def training_step(model, windows, optimizer, scheduler, max_norm):
    """One step of chapter 11's loop: forward, cross-entropy, backward, the clip (over the
    parameters that have a gradient: a frozen one has none), AdamW, the schedule. Returns the
    loss, the logits and the norm before clipping."""
    logits = model(windows[:, :-1])
    loss = F.cross_entropy(logits, windows[:, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm).item()
    optimizer.step()
    scheduler.step()
    return loss, logits, norm


def fixture():
    blocks = Blocks()
    model = Gpt()
    rng = np.random.default_rng(41)
    randomise(model, rng)
    windows = torch.from_numpy(rng.integers(0, V, size=(WINDOWS, MAX_LENGTH + 1)))

    decayed = model.decayed()
    others = [p for p in model.parameters() if not any(p is q for q in decayed)]
    assert len(decayed) + len(others) == len(list(model.parameters()))
    optimizer = torch.optim.AdamW(
        [{"params": decayed, "weight_decay": WEIGHT_DECAY},
         {"params": others, "weight_decay": 0.0}],
        lr=PEAK, betas=BETAS, eps=EPS)
    lr = scheduler(optimizer, WARMUP, TOTAL, START_FACTOR, MINIMUM)

    blocks.add("config", [V, D, HEADS, LAYERS, D_FF, MAX_LENGTH])
    blocks.add("optimiser", [BETAS[0], BETAS[1], EPS, WEIGHT_DECAY, MAX_NORM, STEPS])
    blocks.add("schedule", [PEAK, MINIMUM, WARMUP, TOTAL, START_FACTOR])
    blocks.add("decays", [float(any(t is q for q in decayed)) for _, t, _ in model.ours()])
    for w in range(WINDOWS):
        blocks.add(f"window {w}", windows[w].double())
    for name, tensor, get in model.ours():
        blocks.add(f"weight {name}", get(tensor.detach()))

    clips = []
    for t in range(STEPS):
        rate = optimizer.param_groups[0]["lr"]
        assert optimizer.param_groups[1]["lr"] == rate
        loss, logits, norm = training_step(model, windows, optimizer, lr, MAX_NORM)
        clips.append(norm > MAX_NORM)
        s = f"step {t} "
        blocks.add(s + "loss", [loss.item()])
        blocks.add(s + "logits", logits)
        blocks.add(s + "norm", [norm])
        blocks.add(s + "learning rate", [rate])
        for name, tensor, get in model.ours():
            blocks.add(s + f"parameter {name}", get(tensor.detach()))
        print(f"step {t}: loss {loss.item():.6f}, norm {norm:.6f} "
              f"({'clipped' if clips[-1] else 'not clipped'} at {MAX_NORM}), learning rate {rate}")
    assert any(clips) and not all(clips), "MAX_NORM must clip some steps and not others"

    frozen_fixture(blocks, [blocks.values[f"step {t} learning rate"][0, 0] for t in range(STEPS)])
    text = (f"# three training steps of chapter 11's GPT in float64, torch {torch.__version__}, "
            f"numpy {np.__version__}, by tests/data/generate_gpt_fixtures.py\n"
            + "\n".join(blocks.lines) + "\n")
    return text, blocks.values


# The run with parameter groups: these frozen (requires_grad=False), and blocks.1 trained at half
# the rate with its own weight decay; the rest (the final norm) as before.
FROZEN = ("embedding", "position_embedding", "blocks.0.")
GROUP, GROUP_RATE_FACTOR, GROUP_DECAY = "blocks.1.", 0.5, 0.05
# Its clip: below step 0's norm over the trained parameters (2.27) and above step 2's (2.01), so
# that the clipped update of a grouped run is checked too.
FROZEN_MAX_NORM = 2.1


def frozen_fixture(blocks, rates):
    """Three steps of a model from default_rng(43) with some parameters frozen and a group of
    its own, at the first run's learning rates (a LambdaLR of them, so that each group's rate is
    its factor times the schedule's, as attn::gpt::ParameterGroup's rate_factor says).
    Recorded under "frozen ...": the weights, the windows, and per step the loss, the norm and
    every parameter after the step."""
    model = Gpt()
    rng = np.random.default_rng(43)
    randomise(model, rng)
    windows = torch.from_numpy(rng.integers(0, V, size=(WINDOWS, MAX_LENGTH + 1)))
    named = model.ours()
    decayed = model.decayed()
    for name, tensor, _ in named:
        if name.startswith(FROZEN):
            tensor.requires_grad_(False)
    # One entry per tensor: W_Q, W_K and W_V are three views of one in_proj_weight (and their
    # biases of one in_proj_bias), which the optimiser must see once.
    trained = []
    for name, t, _ in named:
        if t.requires_grad and not any(t is u for _, u in trained):
            trained.append((name, t))

    def is_decayed(t):
        return any(t is q for q in decayed)

    group_decayed = [t for name, t in trained if name.startswith(GROUP) and is_decayed(t)]
    group_other = [t for name, t in trained if name.startswith(GROUP) and not is_decayed(t)]
    rest = [t for name, t in trained if not name.startswith(GROUP)]
    assert not any(is_decayed(t) for t in rest), "the rest is the final norm, which never decays"
    optimizer = torch.optim.AdamW(
        [{"params": group_decayed, "weight_decay": GROUP_DECAY, "lr": PEAK * GROUP_RATE_FACTOR},
         {"params": group_other, "weight_decay": 0.0, "lr": PEAK * GROUP_RATE_FACTOR},
         {"params": rest, "weight_decay": 0.0, "lr": PEAK}],
        lr=PEAK, betas=BETAS, eps=EPS)
    lr = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda t: rates[t] / PEAK if t < len(rates) else 0.0)

    blocks.add("frozen groups", [GROUP_RATE_FACTOR, GROUP_DECAY, FROZEN_MAX_NORM])
    clips = []
    for w in range(WINDOWS):
        blocks.add(f"frozen window {w}", windows[w].double())
    for name, tensor, get in named:
        blocks.add(f"frozen weight {name}", get(tensor.detach()))
    for t in range(STEPS):
        loss, _, norm = training_step(model, windows, optimizer, lr, FROZEN_MAX_NORM)
        clips.append(norm > FROZEN_MAX_NORM)
        s = f"frozen step {t} "
        blocks.add(s + "loss", [loss.item()])
        blocks.add(s + "norm", [norm])
        for name, tensor, get in named:
            blocks.add(s + f"parameter {name}", get(tensor.detach()))
        print(f"frozen step {t}: loss {loss.item():.6f}, norm {norm:.6f} "
              f"({'clipped' if clips[-1] else 'not clipped'} at {FROZEN_MAX_NORM})")
    assert any(clips) and not all(clips), "FROZEN_MAX_NORM must clip some steps and not others"


def key_bias_noise(name):
    """How far a block may differ between machines: 1e-13, but for the key bias after a step
    what AdamW makes of its rounding-noise gradient, STEPS · PEAK · 1e-15 / EPS (3e-9), the bound
    tests/lib/gpt/torch_gpt_test.cpp holds it to (this machine's torch and the committed file's
    differ there by 7e-11)."""
    return STEPS * PEAK * 1e-15 / EPS if name.endswith("attention.b_K") else 1e-13


def main():
    with warnings.catch_warnings():  # SequentialLR's own step(0) is deprecated
        warnings.simplefilter("ignore", UserWarning)
        text, values = fixture()
    sys.exit(0 if check_or_write_blocks(FIXTURE, text, values, key_bias_noise) else 1)


if __name__ == "__main__":
    main()
