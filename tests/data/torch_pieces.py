"""What the PyTorch fixture scripts in tests/data share (fixture_files.py stays numpy-only, for
the scripts that run without torch).

- Block(d, heads, d_ff): a pre-LN transformer block of PyTorch's own modules (nn.LayerNorm,
  nn.MultiheadAttention with biases and a causal attn_mask, a GELU MLP of two nn.Linear), as
  chapters 10 and 11 build theirs; block_parameters() names its tensors as we do.
- randomise: every parameter of a model drawn from numpy, layer norms' gamma around 1.
- scheduler: the learning-rate schedule of attn/math/optimizer.hpp (a linear warm-up, then a
  cosine) from torch's own schedulers.
- Blocks and check_or_write_blocks: named matrices written as fixture_files.hex_block blocks,
  and a script's verify-or-write of such a file, within 1e-13 since torch versions differ in
  the last bits.
"""
import numpy as np
import torch
import torch.nn.functional as F

from fixture_files import hex_block, read_hex_blocks, writing


class Block(torch.nn.Module):
    def __init__(self, d, heads, d_ff):
        super().__init__()
        self.ln1 = torch.nn.LayerNorm(d)
        self.attention = torch.nn.MultiheadAttention(d, heads, bias=True, batch_first=True)
        self.ln2 = torch.nn.LayerNorm(d)
        self.fc1, self.fc2 = torch.nn.Linear(d, d_ff), torch.nn.Linear(d_ff, d)

    def forward(self, x):
        n = x.shape[1]
        blocked = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)  # True = may not
        a = self.ln1(x)
        x = x + self.attention(a, a, a, attn_mask=blocked, need_weights=False)[0]
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


def as_is(t):
    return t


def transposed(t):
    return t.T


def block_parameters(prefix, block):
    """(our name, torch tensor, get) for a Block's tensors in attn::gpt::parameters()'s order;
    `get` maps the tensor (a weight or its gradient) to our layout: ours are PyTorch's
    transposes where PyTorch stores a Linear's weight, and in_proj_weight is [W_Q; W_K; W_V]."""
    p, d = prefix, block.attention.embed_dim
    W, bias = block.attention.in_proj_weight, block.attention.in_proj_bias
    entries = [(p + "ln1.gamma", block.ln1.weight, as_is), (p + "ln1.beta", block.ln1.bias, as_is)]
    for k, name in enumerate("QKV"):
        entries.append((p + f"attention.W_{name}", W, lambda t, k=k: t[k * d:(k + 1) * d].T))
    entries.append((p + "attention.W_O", block.attention.out_proj.weight, transposed))
    for k, name in enumerate("QKV"):
        entries.append((p + f"attention.b_{name}", bias, lambda t, k=k: t[k * d:(k + 1) * d]))
    return entries + [(p + "attention.b_O", block.attention.out_proj.bias, as_is),
                      (p + "ln2.gamma", block.ln2.weight, as_is),
                      (p + "ln2.beta", block.ln2.bias, as_is),
                      (p + "mlp.W1", block.fc1.weight, transposed),
                      (p + "mlp.b1", block.fc1.bias, as_is),
                      (p + "mlp.W2", block.fc2.weight, transposed),
                      (p + "mlp.b2", block.fc2.bias, as_is)]


def randomise(model, rng):
    """Every parameter of `model`, in its parameters() order, normal(0, 0.5) from numpy's `rng`,
    plus 1 for the layer norms' gamma."""
    gammas = [m.weight for m in model.modules() if isinstance(m, torch.nn.LayerNorm)]
    with torch.no_grad():
        for tensor in model.parameters():
            offset = 1.0 if any(tensor is g for g in gammas) else 0.0
            tensor.copy_(torch.from_numpy(rng.normal(size=tuple(tensor.shape)) * 0.5 + offset))


def scheduler(optimizer, warmup, total, start_factor, minimum):
    """SequentialLR(opt, [LinearLR(opt, start_factor, total_iters=warmup),
    CosineAnnealingLR(opt, T_max=total - warmup, eta_min=minimum)], milestones=[warmup]).
    Its switch to the cosine calls the cosine's step(0), which torch deprecates with a
    UserWarning: the scripts silence it."""
    from torch.optim.lr_scheduler import CosineAnnealingLR, LinearLR, SequentialLR
    return SequentialLR(optimizer, [
        LinearLR(optimizer, start_factor=start_factor, end_factor=1.0, total_iters=warmup),
        CosineAnnealingLR(optimizer, T_max=total - warmup, eta_min=minimum)],
        milestones=[warmup])


class Blocks:
    """Named matrices, written as fixture_files.hex_block blocks."""

    def __init__(self):
        self.lines, self.values = [], {}

    def add(self, name, array):
        if isinstance(array, torch.Tensor):
            array = array.detach().numpy()
        # A copy: torch may go on to change the tensor in place (a clipped gradient, a step).
        self.values[name] = np.atleast_2d(np.array(array, dtype=np.float64))
        self.lines += hex_block(name, array)


def same(old, new, noise=None):
    """The same cases, shapes and values within 1e-13 (torch versions and CPUs differ in the
    last bits), or within noise(name) for a case whose numbers are rounding amplified."""
    def tolerance(name):
        return noise(name) if noise else 1e-13
    return set(old) == set(new) and all(
        old[n].shape == a.shape and np.abs(old[n] - a).max() <= tolerance(n)
        for n, a in new.items())


def check_or_write_blocks(path, text, values, noise=None):
    """fixture_files.check_or_write for numbers: `values` (Blocks.values) against the committed
    `path` within 1e-13 (or noise(name)); --write replaces it with `text` only where it differs
    by more."""
    if writing() and not (path.exists() and same(read_hex_blocks(path), values, noise)):
        path.write_text(text, encoding="utf-8", newline="\n")
        print(f"{path.name}: written")
        return True
    if not path.exists() or not same(read_hex_blocks(path), values, noise):
        print(f"{path.name} differs from what torch computes; rerun with --write to replace it")
        return False
    print(f"{path.name}: torch {torch.__version__} agrees with the committed file (1e-13)")
    return True
