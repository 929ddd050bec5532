#!/usr/bin/python3
"""The pieces today's models put into the GPT (for chapter 12), as PyTorch computes them, in float64, for the C++
tests (tests/lib/math/modern_layers_test.cpp and modern_attention_test.cpp):

- RMSNorm: torch.nn.RMSNorm(d, eps=1e-5), its output and the gradients of a scalar loss.
- SwiGLU: the MLP of Llama, W_down(silu(W_gate x) * W_up x), three bias-free nn.Linear.
- Attention with fewer key/value heads than query heads, a sliding window and rotary positions:
  F.scaled_dot_product_attention(q, k, v, attn_mask, enable_gqa=True) between projections
  made by nn.Linear, RoPE written out in torch (the RoFormer paper's interleaved pairs, the
  layout of attn::math::rotary()), and every gradient by autograd. One key/value head is
  multi-query attention; as many as the query heads is ordinary multi-head attention.
- A whole GPT with all of them, "today's block" (tests/lib/gpt/modern_block_test.cpp): RMSNorm
  before each branch and at the end, attention with rotary positions, two key/value heads for
  four query heads and a window of three keys, the SwiGLU MLP, tied embeddings; its logits,
  loss and every parameter's gradient on one sentence, named as attn::gpt::parameters() names
  them; and the same model with attention without biases (nn.Linear(..., bias=False), as in
  Llama and Mistral), its blocks named "gpt_no_biases ..." (attn::gpt's attention_biases =
  false). GPT-2's block, the same model with the other choices, is checked against PyTorch by
  generate_gpt_fixtures.py.
- tests/golden/ch12_todays_attention.torch.txt: the lines of chapter 12's worked example (its
  draws from numpy's default_rng(2026), in the chapter's order: the tokens, W_Q, W_K, W_V, W_O,
  W_gate, W_up, W_down, each matrix's normals divided by the square root of its rows) as
  PyTorch computes them: two heads' attention weights with RoPE (heads of width 4, two rotary
  pairs), two key/value heads for four query heads and a window of three keys, the layer's
  output for the last token, nn.RMSNorm and the SwiGLU MLP of the first token, four decimals
  each. The test ch12.torch holds the chapter's printed lines to them, in order.

torch.nn.RMSNorm needs torch 2.4 or later and enable_gqa 2.5 (Debian 13's python3-torch is 2.6);
Debian 12's torch 1.13 has neither, so there the script says so and checks nothing. Run with
Debian 13's python3-torch:

    /usr/bin/python3 tests/data/generate_modern_fixtures.py          # verify
    /usr/bin/python3 tests/data/generate_modern_fixtures.py --write  # write after a change

Every input and weight comes from numpy's default_rng(37) (the chapter's example's from
default_rng(2026)), so the C++ tests need no Python.
Verifying compares with the committed file within 1e-13 and never writes.
"""
import pathlib
import sys

import numpy as np
import torch
import torch.nn.functional as F

from fixture_files import check_or_write
from torch_pieces import Blocks, as_is, check_or_write_blocks, transposed

HERE = pathlib.Path(__file__).resolve().parent
OUT = HERE / "torch_modern.txt"
EXAMPLE = HERE.parent / "golden" / "ch12_todays_attention.torch.txt"
N = 6                 # tokens
D, H, D_K = 16, 4, 4  # d_model, query heads, head width (two rotary pairs per head)
D_FF = 10             # SwiGLU's hidden width
EPS = 1e-5            # RMSNorm's epsilon, ours and Llama's (torch's default is the dtype's eps)
BASE = 10000.0        # RoPE's base

torch.set_default_dtype(torch.float64)


def tensor(rng, *shape, scale=1.0):
    return torch.from_numpy(rng.normal(size=shape) * scale)


def rms_norm(blocks, rng):
    x = tensor(rng, N, D).requires_grad_(True)
    norm = torch.nn.RMSNorm(D, eps=EPS)
    with torch.no_grad():
        norm.weight.copy_(tensor(rng, D, scale=0.5) + 1.0)
    R = tensor(rng, N, D)
    y = norm(x)
    (y * R).sum().backward()
    for name, value in [("x", x), ("gamma", norm.weight), ("y", y), ("R", R),
                        ("dx", x.grad), ("dgamma", norm.weight.grad)]:
        blocks.add(f"rms_norm {name}", value)


def swiglu(blocks, rng):
    x = tensor(rng, N, D).requires_grad_(True)
    gate, up = torch.nn.Linear(D, D_FF, bias=False), torch.nn.Linear(D, D_FF, bias=False)
    down = torch.nn.Linear(D_FF, D, bias=False)
    with torch.no_grad():
        for layer in (gate, up, down):
            layer.weight.copy_(tensor(rng, *layer.weight.shape, scale=0.5))
    R = tensor(rng, N, D)
    y = down(F.silu(gate(x)) * up(x))
    (y * R).sum().backward()
    # Ours are the transposes of nn.Linear's weights: x W, not x W^T.
    for name, value in [("x", x), ("W_gate", gate.weight.T), ("W_up", up.weight.T),
                        ("W_down", down.weight.T), ("y", y), ("R", R), ("dx", x.grad),
                        ("dW_gate", gate.weight.grad.T), ("dW_up", up.weight.grad.T),
                        ("dW_down", down.weight.grad.T)]:
        blocks.add(f"swiglu {name}", value)


def rope(x, positions):
    """x: (heads, n, d_k). Pair (2i, 2i+1) of the row at position m turns by m * BASE^(-2i/d_k)."""
    d_k = x.shape[-1]
    theta = BASE ** (-torch.arange(0, d_k, 2, dtype=torch.float64) / d_k)  # (d_k / 2)
    angle = positions[:, None] * theta[None, :]                           # (n, d_k / 2)
    cos, sin = torch.cos(angle), torch.sin(angle)
    even, odd = x[..., 0::2], x[..., 1::2]
    out = torch.empty_like(x)
    out[..., 0::2] = even * cos - odd * sin
    out[..., 1::2] = even * sin + odd * cos
    return out


def heads_of(x, heads, d_k=D_K):
    """(n, heads * d_k) -> (1, heads, n, d_k): head k is columns k d_k ... (k + 1) d_k - 1."""
    return x.reshape(x.shape[0], heads, d_k).transpose(0, 1).unsqueeze(0)


def attention_case(blocks, rng, name, kv_heads, window, rotary):
    """One layer: Q = query W_Q + b_Q (all h heads), K, V with kv_heads heads, SDPA with a
    causal mask (a band of `window` keys if given), output = concat W_O + b_O."""
    query, key, value = (tensor(rng, N, D).requires_grad_(True) for _ in range(3))
    q_proj, o_proj = torch.nn.Linear(D, D), torch.nn.Linear(D, D)
    k_proj, v_proj = torch.nn.Linear(D, kv_heads * D_K), torch.nn.Linear(D, kv_heads * D_K)
    with torch.no_grad():
        for layer in (q_proj, k_proj, v_proj, o_proj):
            layer.weight.copy_(tensor(rng, *layer.weight.shape, scale=0.5))
            layer.bias.copy_(tensor(rng, *layer.bias.shape, scale=0.1))
    R = tensor(rng, N, D)
    i, j = torch.arange(N)[:, None], torch.arange(N)[None, :]
    # True = may attend, as SDPA reads a boolean mask (nn.MultiheadAttention reads it the other
    # way round: True = may not).
    allowed = j <= i
    if window:
        allowed &= j > i - window
    q, k, v = heads_of(q_proj(query), H), heads_of(k_proj(key), kv_heads), heads_of(v_proj(value), kv_heads)
    if rotary:
        positions = torch.arange(N, dtype=torch.float64)
        q, k = rope(q, positions), rope(k, positions)
    z = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed, enable_gqa=True)
    output = o_proj(z[0].transpose(0, 1).reshape(N, D))
    (output * R).sum().backward()
    p = f"{name} "
    for label, layer in (("Q", q_proj), ("K", k_proj), ("V", v_proj), ("O", o_proj)):
        blocks.add(p + f"W_{label}", layer.weight.T)
        blocks.add(p + f"b_{label}", layer.bias)
    blocks.add(p + "allowed", allowed.double())
    for label, t in (("query", query), ("key", key), ("value", value)):
        blocks.add(p + f"input {label}", t)
    blocks.add(p + "output", output)
    blocks.add(p + "R", R)
    for label, t in (("query", query), ("key", key), ("value", value)):
        blocks.add(p + f"d_{label}", t.grad)
    for label, layer in (("Q", q_proj), ("K", k_proj), ("V", v_proj), ("O", o_proj)):
        blocks.add(p + f"dW_{label}", layer.weight.grad.T)
        blocks.add(p + f"db_{label}", layer.bias.grad)


class TodayBlock(torch.nn.Module):
    """A pre-norm block of today's choices: PyTorch's own RMSNorm, Linear and SDPA, with the
    rotary positions of rope() above, written out."""

    def __init__(self, kv_heads, window, bias):
        super().__init__()
        self.kv_heads, self.window, self.bias = kv_heads, window, bias
        self.ln1, self.ln2 = torch.nn.RMSNorm(D, eps=EPS), torch.nn.RMSNorm(D, eps=EPS)
        self.q, self.o = torch.nn.Linear(D, D, bias=bias), torch.nn.Linear(D, D, bias=bias)
        self.k = torch.nn.Linear(D, kv_heads * D_K, bias=bias)
        self.v = torch.nn.Linear(D, kv_heads * D_K, bias=bias)
        self.gate = torch.nn.Linear(D, D_FF, bias=False)
        self.up = torch.nn.Linear(D, D_FF, bias=False)
        self.down = torch.nn.Linear(D_FF, D, bias=False)

    def forward(self, x):
        n = x.shape[0]
        a = self.ln1(x)
        positions = torch.arange(n, dtype=torch.float64)
        q = rope(self.q(a).reshape(n, H, D_K).transpose(0, 1), positions)
        k = rope(self.k(a).reshape(n, self.kv_heads, D_K).transpose(0, 1), positions)
        v = self.v(a).reshape(n, self.kv_heads, D_K).transpose(0, 1)
        i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
        allowed = (j <= i) & (j > i - self.window)
        z = F.scaled_dot_product_attention(q[None], k[None], v[None], attn_mask=allowed,
                                           enable_gqa=True)[0]
        x = x + self.o(z.transpose(0, 1).reshape(n, D))
        b = self.ln2(x)
        return x + self.down(F.silu(self.gate(b)) * self.up(b))

    def named(self, prefix):
        """(our name, tensor, to our layout) in attn::gpt::parameters()'s order."""
        t, same = transposed, as_is  # ours are the transposes of nn.Linear's weights
        biases = [(prefix + "attention.b_Q", self.q.bias, same),
                  (prefix + "attention.b_K", self.k.bias, same),
                  (prefix + "attention.b_V", self.v.bias, same),
                  (prefix + "attention.b_O", self.o.bias, same)] if self.bias else []
        return ([(prefix + "ln1.gamma", self.ln1.weight, same),
                 (prefix + "attention.W_Q", self.q.weight, t),
                 (prefix + "attention.W_K", self.k.weight, t),
                 (prefix + "attention.W_V", self.v.weight, t),
                 (prefix + "attention.W_O", self.o.weight, t)]
                + biases
                + [(prefix + "ln2.gamma", self.ln2.weight, same),
                   (prefix + "swiglu.W_gate", self.gate.weight, t),
                   (prefix + "swiglu.W_up", self.up.weight, t),
                   (prefix + "swiglu.W_down", self.down.weight, t)])


GPT_V, GPT_LAYERS, GPT_KV, GPT_WINDOW, GPT_MAX = 11, 2, 2, 3, 8


def today_gpt(blocks, rng, model="gpt", bias=True):
    """Embedding, two TodayBlocks, a final RMSNorm and the tied output layer, on one sentence;
    its attention's four nn.Linear with biases or without (bias=False, as Llama's)."""
    embedding = torch.nn.Parameter(tensor(rng, GPT_V, D, scale=0.5))
    layers = [TodayBlock(GPT_KV, GPT_WINDOW, bias) for _ in range(GPT_LAYERS)]
    final = torch.nn.RMSNorm(D, eps=EPS)
    named = [("embedding", embedding, as_is)]
    for l, block in enumerate(layers):
        named += block.named(f"blocks.{l}.")
    named.append(("lnf.gamma", final.weight, as_is))
    with torch.no_grad():
        for name, param, _ in named:
            offset = 1.0 if name.endswith("gamma") else 0.0
            param.copy_(tensor(rng, *param.shape, scale=0.5) + offset)
    sentence = rng.integers(0, GPT_V, size=GPT_MAX + 1)
    tokens, targets = torch.from_numpy(sentence[:-1]), torch.from_numpy(sentence[1:])
    x = embedding[tokens]
    for block in layers:
        x = block(x)
    logits = final(x) @ embedding.T
    loss = F.cross_entropy(logits, targets)
    loss.backward()
    blocks.add(f"{model} config", [GPT_V, D, H, GPT_LAYERS, D_FF, GPT_MAX, GPT_KV, GPT_WINDOW])
    blocks.add(f"{model} sentence", sentence.astype(np.float64))
    blocks.add(f"{model} logits", logits)
    blocks.add(f"{model} loss", [loss.item()])
    for name, param, ours in named:
        blocks.add(f"{model} weight {name}", ours(param))
        blocks.add(f"{model} gradient {name}", ours(param.grad))


# (name, key/value heads, window or None, rotary)
ATTENTION_CASES = [
    ("mha", H, None, False),
    ("gqa", 2, None, False),
    ("mqa", 1, None, False),
    ("window", 2, 3, False),
    ("rope", 2, None, True),
    ("today", 2, 3, True),  # all three together
]


# Chapter 12's worked example (chapters/12_todays_attention/main.cpp, the_example()).
EX_SEED, EX_N, EX_D, EX_H, EX_KV, EX_WINDOW, EX_HIDDEN = 2026, 5, 16, 4, 2, 3, 24
PER_LINE = 8  # numbers to a printed line


def decimals(row):
    """A row as the chapter prints it: each number as fmt's {:7.4f}, eight to a line, each line
    indented by two spaces."""
    values = [f"{value:7.4f}" for value in row.tolist()]
    return ["  " + " ".join(values[k:k + PER_LINE]) for k in range(0, len(values), PER_LINE)]


def chapter_example():
    """The chapter's example lines, computed by torch from the chapter's numpy draws."""
    rng = np.random.default_rng(EX_SEED)
    d_k = EX_D // EX_H

    def scaled(rows, cols):  # normals over the square root of the fan-in, as the chapter draws
        return torch.from_numpy(rng.normal(size=(rows, cols)) / np.sqrt(rows))

    x = torch.from_numpy(rng.normal(size=(EX_N, EX_D)))
    w_q, w_k, w_v, w_o = scaled(EX_D, EX_D), scaled(EX_D, EX_KV * d_k), scaled(EX_D, EX_KV * d_k), \
        scaled(EX_D, EX_D)
    w_gate, w_up, w_down = scaled(EX_D, EX_HIDDEN), scaled(EX_D, EX_HIDDEN), scaled(EX_HIDDEN, EX_D)
    positions = torch.arange(EX_N, dtype=torch.float64)
    q = rope(heads_of(x @ w_q, EX_H, d_k)[0], positions).unsqueeze(0)   # (1, h, n, d_k)
    k = rope(heads_of(x @ w_k, EX_KV, d_k)[0], positions).unsqueeze(0)  # (1, g, n, d_k)
    v = heads_of(x @ w_v, EX_KV, d_k)
    i, j = torch.arange(EX_N)[:, None], torch.arange(EX_N)[None, :]
    band = (j <= i) & (j > i - EX_WINDOW)  # True = may attend
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=band, enable_gqa=True)
    output = out[0].transpose(0, 1).reshape(EX_N, EX_D) @ w_o
    # SDPA returns no weights: the same scores, softmaxed, with the key/value heads repeated
    # as enable_gqa pairs them (query head k reads key/value head k // (h / g)).
    k_each = k.repeat_interleave(EX_H // EX_KV, dim=1)
    scores = (q @ k_each.transpose(-2, -1)) / np.sqrt(d_k)
    weights = torch.softmax(scores.masked_fill(~band, float("-inf")), dim=-1)[0]
    v_each = v.repeat_interleave(EX_H // EX_KV, dim=1)[0]
    assert torch.allclose(weights @ v_each, out[0], rtol=0, atol=1e-12), "weights disagree with SDPA"
    norm = torch.nn.RMSNorm(EX_D, eps=EPS)  # its weight starts at ones
    mlp = (F.silu(x[0] @ w_gate) * (x[0] @ w_up)) @ w_down
    lines = ["# lines ch12_todays_attention must print, computed by PyTorch from the chapter's "
             "numpy draws, by tests/data/generate_modern_fixtures.py"]
    lines += [decimals(weights[0, r])[0] + "   " + decimals(weights[1, r])[0][2:]
              for r in range(EX_N)]
    lines += ["The layer's output for the last token:"] + decimals(output[EX_N - 1])
    lines += ["RMSNorm (gamma 1) of the first token:"] + decimals(norm(x[0]).detach())
    lines += [f"SwiGLU (hidden width {EX_HIDDEN}) of the first token:"] + decimals(mlp)
    return "\n".join(lines) + "\n"


def main():
    major, minor = (int(part) for part in torch.__version__.split(".")[:2])
    if (major, minor) < (2, 5):
        print(f"torch {torch.__version__} has no enable_gqa (2.5 and later have it): nothing "
              "checked; run this script with Debian 13's python3-torch")
        return 0
    rng = np.random.default_rng(37)
    blocks = Blocks()
    rms_norm(blocks, rng)
    swiglu(blocks, rng)
    for case in ATTENTION_CASES:
        attention_case(blocks, rng, *case)
    today_gpt(blocks, rng)
    today_gpt(blocks, rng, "gpt_no_biases", bias=False)
    text = (f"# chapter 12's pieces, torch {torch.__version__}, numpy {np.__version__}\n"
            + "\n".join(blocks.lines) + "\n")
    ok = check_or_write_blocks(OUT, text, blocks.values)
    ok = check_or_write(EXAMPLE, chapter_example(), "torch") and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
