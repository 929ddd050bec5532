#!/usr/bin/python3
"""Masks and multi-head attention as PyTorch computes them, in float64, for the C++ tests.

- tests/data/torch_multihead.txt: nn.MultiheadAttention (torch 1.13 in Debian 12, 2.x in
  Debian 13): outputs, weights averaged over heads and per head, a boolean attn_mask (True
  means "may NOT attend"), a key_padding_mask for a batch of two sentences of different
  lengths, and every gradient of a scalar loss through autograd.
- tests/data/torch_sdpa.txt: F.scaled_dot_product_attention (torch 2.0 and later, so Debian
  13): is_causal, a boolean mask (True means "may attend") and an additive float mask.
- tests/golden/ch08_masks_and_heads.torch_masks.txt: the lines of chapter 08's table of mask
  conventions, made from the masks given to torch, whose meaning torch's weights confirm.
- tests/data/torch_fully_masked.txt: what each PyTorch function returns for a query that may
  attend to no key, one line per function and mode, for every torch version that has run this
  script (chapter 08's page shows the table). Each version checks and writes its own lines only.

Run with Debian's python3-torch:

    /usr/bin/python3 tests/data/generate_torch_fixtures.py          # verify
    /usr/bin/python3 tests/data/generate_torch_fixtures.py --write  # write after a change

Values are written as exact hexadecimal doubles in blocks "case NAME ROWS COLS". Verifying
compares with the committed files within 1e-13 (two torch versions may differ in the last
bits) and never writes; --write replaces only a file that differs by more; a torch without
scaled_dot_product_attention skips that file and says so. The inputs and weights come from numpy's default_rng(13), so the C++ tests need no Python.
"""
import pathlib
import sys

import numpy as np
import torch
import torch.nn.functional as F

from fixture_files import check_or_write, hex_block, read_hex_blocks, writing

HERE = pathlib.Path(__file__).resolve().parent
MHA = HERE / "torch_multihead.txt"
SDPA = HERE / "torch_sdpa.txt"
TABLE = HERE.parent / "golden" / "ch08_masks_and_heads.torch_masks.txt"
FULLY_MASKED = HERE / "torch_fully_masked.txt"
N, D, H = 5, 6, 3  # tokens, d_model, heads (d_k = 2)

torch.set_default_dtype(torch.float64)


class Blocks:
    """Named matrices, written as fixture_files.hex_block blocks."""

    def __init__(self):
        self.lines, self.values = [], {}

    def add(self, name, array):
        self.values[name] = np.atleast_2d(np.asarray(array, dtype=np.float64))
        self.lines += hex_block(name, array)

    def text(self, title):
        return f"# {title}, torch {torch.__version__}, numpy {np.__version__}\n" + "\n".join(self.lines) + "\n"


def same(old, new):
    """The same cases, shapes and values within 1e-13 (torch versions differ in the last bits)."""
    return set(old) == set(new) and all(
        old[n].shape == a.shape and np.abs(old[n] - a).max() <= 1e-13 for n, a in new.items())


def module(rng):
    """An nn.MultiheadAttention with random weights; ours are their transposes."""
    mha = torch.nn.MultiheadAttention(D, H, bias=True, batch_first=True)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.from_numpy(rng.normal(size=(3 * D, D)) * 0.5))
        mha.in_proj_bias.copy_(torch.from_numpy(rng.normal(size=3 * D) * 0.1))
        mha.out_proj.weight.copy_(torch.from_numpy(rng.normal(size=(D, D)) * 0.5))
        mha.out_proj.bias.copy_(torch.from_numpy(rng.normal(size=D) * 0.1))
    return mha


def weights(blocks, mha):
    W = mha.in_proj_weight.detach().numpy()
    b = mha.in_proj_bias.detach().numpy()
    for k, name in enumerate("QKV"):  # in_proj_weight is [W_q; W_k; W_v], in that order
        blocks.add(f"W_{name}", W[k * D:(k + 1) * D].T)
        blocks.add(f"b_{name}", b[k * D:(k + 1) * D])
    blocks.add("W_O", mha.out_proj.weight.detach().numpy().T)
    blocks.add("b_O", mha.out_proj.bias.detach().numpy())


def multihead():
    rng = np.random.default_rng(13)
    blocks = Blocks()
    mha = module(rng)
    weights(blocks, mha)
    q, k, v = (torch.from_numpy(rng.normal(size=(1, N, D))) for _ in range(3))
    for name, t in zip("qkv", (q, k, v)):
        blocks.add(f"input {name}", t[0])
    causal_blocked = torch.triu(torch.ones(N, N, dtype=torch.bool), diagonal=1)  # True = may not
    blocks.add("attn_mask causal (True = may not attend)", causal_blocked.double())
    for case, mask in [("plain", None), ("causal", causal_blocked)]:
        out, avg = mha(q, k, v, attn_mask=mask, need_weights=True)
        _, per_head = mha(q, k, v, attn_mask=mask, need_weights=True, average_attn_weights=False)
        blocks.add(f"{case} output", out[0].detach())
        blocks.add(f"{case} weights averaged", avg[0].detach())
        for h in range(H):
            blocks.add(f"{case} weights head {h}", per_head[0, h].detach())
    # A batch of two sentences, 5 and 3 tokens long; key_padding_mask True = padding.
    x = torch.from_numpy(rng.normal(size=(2, N, D)))
    lengths = [5, 3]
    padding = torch.tensor([[j >= n for j in range(N)] for n in lengths])
    out, avg = mha(x, x, x, key_padding_mask=padding, need_weights=True)
    for s in range(2):
        blocks.add(f"padded input {s}", x[s])
        blocks.add(f"padded output {s}", out[s].detach())
        blocks.add(f"padded weights averaged {s}", avg[s].detach())
    # Gradients of L = sum(output * R) under the causal mask, by autograd.
    R = torch.from_numpy(rng.normal(size=(1, N, D)))
    qg, kg, vg = (t.clone().requires_grad_(True) for t in (q, k, v))
    mha.zero_grad()
    out, _ = mha(qg, kg, vg, attn_mask=causal_blocked, need_weights=False)
    (out * R).sum().backward()
    blocks.add("gradient R", R[0])
    for name, t in zip("qkv", (qg, kg, vg)):
        blocks.add(f"gradient d_{name}", t.grad[0])
    gW, gb = mha.in_proj_weight.grad.numpy(), mha.in_proj_bias.grad.numpy()
    for i, name in enumerate("QKV"):
        blocks.add(f"gradient W_{name}", gW[i * D:(i + 1) * D].T)
        blocks.add(f"gradient b_{name}", gb[i * D:(i + 1) * D])
    blocks.add("gradient W_O", mha.out_proj.weight.grad.numpy().T)
    blocks.add("gradient b_O", mha.out_proj.bias.grad.numpy())
    return blocks


def sdpa():
    rng = np.random.default_rng(17)
    blocks = Blocks()
    q, k, v = (torch.from_numpy(rng.normal(size=(N, 2))) for _ in range(3))
    for name, t in zip("qkv", (q, k, v)):
        blocks.add(f"input {name}", t)
    allowed = torch.tril(torch.ones(N, N, dtype=torch.bool))  # True = may attend
    additive = torch.zeros(N, N).masked_fill(~allowed, float("-inf"))
    blocks.add("is_causal output", F.scaled_dot_product_attention(q, k, v, is_causal=True))
    blocks.add("bool mask (True = may attend)", allowed.double())
    blocks.add("bool mask output", F.scaled_dot_product_attention(q, k, v, attn_mask=allowed))
    blocks.add("additive mask output", F.scaled_dot_product_attention(q, k, v, attn_mask=additive))
    return blocks


def mask_table():
    """Chapter 08's table of conventions: a causal mask for 3 tokens as each function takes it,
    with torch showing what True means (the weights it gives where the mask is True)."""
    rng = np.random.default_rng(19)
    mha = module(rng)
    x = torch.from_numpy(rng.normal(size=(1, 3, D)))
    sdpa_mask = torch.tril(torch.ones(3, 3, dtype=torch.bool))     # True = may attend
    mha_mask = torch.triu(torch.ones(3, 3, dtype=torch.bool), 1)   # True = may not
    _, w = mha(x, x, x, attn_mask=mha_mask, need_weights=True)
    assert (w[0][mha_mask] == 0).all() and (w[0][~mha_mask] > 0).all(), "True is not 'may not'"
    if hasattr(F, "scaled_dot_product_attention"):
        q = torch.from_numpy(rng.normal(size=(3, 2)))
        out = F.scaled_dot_product_attention(q, q, q, attn_mask=sdpa_mask)
        assert torch.allclose(out[0], q[0]), "True is not 'may attend'"  # row 0 sees itself only

    def rows(grid):
        return " ".join("[" + " ".join(str(int(v)) for v in row) + "]" for row in grid.tolist())

    return [f"  F.scaled_dot_product_attention, bool     True = may attend   {rows(sdpa_mask)}",
            f"  nn.MultiheadAttention attn_mask, bool    True = may NOT      {rows(mha_mask)}"]


def describe(row, bias=None):
    """A row of outputs or weights in a word or two: all NaN, all 0, the output projection's
    bias alone (what a row of zeros becomes after out_proj), or other finite values."""
    if torch.isnan(row).all():
        return "NaN"
    if (row == 0).all():
        return "0"
    if bias is not None and torch.equal(row, bias):
        return "out_proj.bias (attention gave 0)"
    return "finite" if torch.isfinite(row).all() else "mixed"


def fully_masked_lines():
    """What torch returns for query row 1 of 3 when the mask lets it attend to no key, function
    by function: self-attention on 3 tokens of width 4 from numpy's default_rng(23), float64."""
    rng = np.random.default_rng(23)
    x = torch.from_numpy(rng.normal(size=(1, 3, 4)))
    allowed = torch.tensor([[1, 0, 0], [0, 0, 0], [1, 1, 1]], dtype=torch.bool)  # row 1: nothing
    version = "torch " + torch.__version__.split("+")[0]
    lines = []
    if hasattr(F, "scaled_dot_product_attention"):
        for kind, mask in [("bool mask", allowed),
                           ("float mask of -inf", torch.zeros(3, 3).masked_fill(~allowed, float("-inf")))]:
            out = F.scaled_dot_product_attention(x, x, x, attn_mask=mask)
            lines.append(f"{version:<15} F.scaled_dot_product_attention, {kind:<27} output {describe(out[0, 1])}")
    else:
        lines.append(f"{version:<15} F.scaled_dot_product_attention: not in this version")
    mha = torch.nn.MultiheadAttention(4, 2, batch_first=True)
    with torch.no_grad():  # a bias that is not 0, so that a row of zeros shows as the bias
        mha.out_proj.bias.copy_(torch.tensor([0.5, -0.25, 0.125, 1.0]))
    bias = mha.out_proj.bias.detach()
    for need_weights in (True, False):
        for mode in ("train", "eval"):
            getattr(mha, mode)()
            with torch.no_grad():
                out, w = mha(x, x, x, attn_mask=~allowed, need_weights=need_weights)
            what = f"need_weights={need_weights}, {mode}() mode"
            weights = f", weights {describe(w[0, 1])}" if need_weights else ""
            lines.append(f"{version:<15} nn.MultiheadAttention, {what:<36} output {describe(out[0, 1], bias)}{weights}")
    return version, lines


def check_or_write_version_lines(path, version, lines):
    """check_or_write for a file whose lines each torch version makes its own: this version's
    lines are compared (and, with --write, replaced); the other versions' are kept as they are."""
    header = ("# What PyTorch returns for a query that may attend to no key (row 1 of a 3 x 3 mask that\n"
              "# allows it nothing), float64, one line per function and mode; each torch version that ran\n"
              "# tests/data/generate_torch_fixtures.py wrote its own lines\n")
    old = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    others = [l for l in old if l and not l.startswith("#") and not l.startswith(version + " ")]
    text = header + "\n".join(sorted(others + lines, key=lambda l: l.split()[1].split("."))) + "\n"
    return check_or_write(path, text, version)


def check_or_write_blocks(path, blocks, title):
    """check_or_write for numbers: equal within 1e-13, since torch versions differ in the last
    bits; --write replaces only a file that differs by more."""
    if writing() and not (path.exists() and same(read_hex_blocks(path), blocks.values)):
        path.write_text(blocks.text(title), encoding="utf-8", newline="\n")
        print(f"{path.name}: written")
        return True
    if not path.exists():
        print(f"{path.name} is missing; rerun with --write")
        return False
    if not same(read_hex_blocks(path), blocks.values):
        print(f"{path.name} differs from what torch computes; rerun with --write to replace it")
        return False
    print(f"{path.name}: torch {torch.__version__} agrees with the committed file (1e-13)")
    return True


def main():
    ok = check_or_write_blocks(MHA, multihead(), "nn.MultiheadAttention in float64")
    table = ("# lines ch08_masks_and_heads must print, made from the masks torch was given, by "
             "tests/data/generate_torch_fixtures.py\n" + "\n".join(mask_table()) + "\n")
    ok = check_or_write(TABLE, table, "torch") and ok
    ok = check_or_write_version_lines(FULLY_MASKED, *fully_masked_lines()) and ok
    if hasattr(F, "scaled_dot_product_attention"):
        ok = check_or_write_blocks(SDPA, sdpa(), "F.scaled_dot_product_attention in float64") and ok
    else:
        print(f"{SDPA.name}: skipped, torch {torch.__version__} has no scaled_dot_product_attention "
              "(torch 2.0 and later, Debian 13)")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
