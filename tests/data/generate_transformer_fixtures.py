#!/usr/bin/python3
"""Chapter 10's transformer as PyTorch computes it, in float64, for the C++ tests.

- tests/data/agreement_sentences.txt: the first sentences of chapter 10's training set
  (default_rng(1)) and held-out set (default_rng(2)), drawn here with numpy exactly as
  attn::agreement::generate() draws them in C++.
- tests/data/torch_transformer.txt: one forward and backward pass of a small model built from
  PyTorch's own modules (nn.Embedding, nn.LayerNorm, nn.MultiheadAttention with a causal
  attn_mask, nn.Linear, nn.GELU, F.cross_entropy): its weights, its batch (three sentences of
  the training set, each run on its own), the loss, the logits and every parameter's gradient
  by autograd. Our weights are PyTorch's transposes where PyTorch stores a Linear's weight.

Run with Debian's python3-torch:

    /usr/bin/python3 tests/data/generate_transformer_fixtures.py          # verify
    /usr/bin/python3 tests/data/generate_transformer_fixtures.py --write  # write after a change

Verifying compares with the committed files (the numbers within 1e-13, since torch versions
differ in the last bits) and never writes. The weights come from numpy's default_rng(23).
"""
import math
import pathlib
import sys

import numpy as np
import torch
import torch.nn.functional as F

from fixture_files import check_or_write, hex_block, read_hex_blocks, writing

HERE = pathlib.Path(__file__).resolve().parent
SENTENCES = HERE / "agreement_sentences.txt"
TORCH = HERE / "torch_transformer.txt"

torch.set_default_dtype(torch.float64)

NOUNS = ["cat", "cats", "dog", "dogs", "bird", "birds", "fox", "foxes", "horse", "horses",
         "mouse", "mice"]
RELATIVE_VERBS = ["saw", "chased", "heard", "followed"]
ADVERBS = ["today", "yesterday", "again"]
ADJECTIVE_VERBS = ["thirsty", "drank", "hungry", "ate", "tired", "slept", "happy", "sang"]
VOCABULARY = [".", "the", "that", "was", "were", "so", "it", "they"] + NOUNS + RELATIVE_VERBS \
    + ADVERBS + ADJECTIVE_VERBS

# The fixture's model: small, so the file stays small, with every kind of layer twice.
V, D, HEADS, LAYERS, D_FF, MAX_LENGTH = len(VOCABULARY), 8, 2, 2, 16, 13


def generate(seed, count):
    """The sentences of attn::agreement::generate(seed, count), as lists of words."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        n1 = int(6 * rng.random())
        n1_plural = rng.random() < 0.5
        n2 = int(6 * rng.random())
        n2_plural = rng.random() < 0.5
        verb = RELATIVE_VERBS[int(4 * rng.random())]
        object_relative = rng.random() >= 0.5
        adverb = int(4 * rng.random())
        adjective = int(4 * rng.random())
        subject, distractor = NOUNS[2 * n1 + n1_plural], NOUNS[2 * n2 + n2_plural]
        words = ["the", subject, "that"]
        words += ["the", distractor, verb] if object_relative else [verb, "the", distractor]
        words += [ADVERBS[adverb - 1]] if adverb else []
        words += ["were" if n1_plural else "was", ADJECTIVE_VERBS[2 * adjective], "so",
                  "they" if n1_plural else "it", ADJECTIVE_VERBS[2 * adjective + 1], "."]
        out.append(words)
    return out


def sentences_text():
    lines = ["# chapter 10's first sentences (seed, words), drawn with numpy by "
             "tests/data/generate_transformer_fixtures.py"]
    for seed in (1, 2):
        lines += [f"{seed} {' '.join(words)}" for words in generate(seed, 20)]
    return "\n".join(lines) + "\n"


def sinusoidal(n, d):
    """Chapter 07's positions: sin in column 2i, cos in column 2i+1."""
    pe = torch.zeros(n, d)
    for p in range(n):
        for i in range(d // 2):
            angle = p / 10000.0 ** (2 * i / d)
            pe[p, 2 * i], pe[p, 2 * i + 1] = math.sin(angle), math.cos(angle)
    return pe


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = torch.nn.LayerNorm(D)
        self.attention = torch.nn.MultiheadAttention(D, HEADS, bias=True, batch_first=True)
        self.ln2 = torch.nn.LayerNorm(D)
        self.fc1, self.fc2 = torch.nn.Linear(D, D_FF), torch.nn.Linear(D_FF, D)

    def forward(self, x):
        n = x.shape[1]
        blocked = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)  # True = may not
        a = self.ln1(x)
        x = x + self.attention(a, a, a, attn_mask=blocked, need_weights=False)[0]
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = torch.nn.Embedding(V, D)
        self.blocks = torch.nn.ModuleList(Block() for _ in range(LAYERS))
        self.lnf = torch.nn.LayerNorm(D)
        self.unembed = torch.nn.Linear(D, V)
        self.register_buffer("pe", sinusoidal(MAX_LENGTH, D))

    def forward(self, tokens):
        x = (self.embedding(tokens) + self.pe[: len(tokens)]).unsqueeze(0)
        for block in self.blocks:
            x = block(x)
        return self.unembed(self.lnf(x))[0]

    def ours(self):
        """(our name, our matrix as a function of the module) in attn::model_parameters()'s
        order; `get` maps a torch tensor (a weight or its gradient) to our layout."""
        entries = [("embedding", self.embedding.weight, lambda t: t)]
        for l, b in enumerate(self.blocks):
            p = f"blocks.{l}."
            W, bias = b.attention.in_proj_weight, b.attention.in_proj_bias
            entries += [(p + "ln1.gamma", b.ln1.weight, lambda t: t),
                        (p + "ln1.beta", b.ln1.bias, lambda t: t)]
            for k, name in enumerate("QKV"):  # in_proj_weight is [W_q; W_k; W_v]
                entries.append((p + f"attention.W_{name}", W, lambda t, k=k: t[k * D:(k + 1) * D].T))
            entries.append((p + "attention.W_O", b.attention.out_proj.weight, lambda t: t.T))
            for k, name in enumerate("QKV"):
                entries.append((p + f"attention.b_{name}", bias, lambda t, k=k: t[k * D:(k + 1) * D]))
            entries += [(p + "attention.b_O", b.attention.out_proj.bias, lambda t: t),
                        (p + "ln2.gamma", b.ln2.weight, lambda t: t),
                        (p + "ln2.beta", b.ln2.bias, lambda t: t),
                        (p + "mlp.W1", b.fc1.weight, lambda t: t.T),
                        (p + "mlp.b1", b.fc1.bias, lambda t: t),
                        (p + "mlp.W2", b.fc2.weight, lambda t: t.T),
                        (p + "mlp.b2", b.fc2.bias, lambda t: t)]
        return entries + [("lnf.gamma", self.lnf.weight, lambda t: t),
                          ("lnf.beta", self.lnf.bias, lambda t: t),
                          ("unembedding", self.unembed.weight, lambda t: t.T),
                          ("unembedding_bias", self.unembed.bias, lambda t: t)]


def transformer():
    """Weights, batch, loss, logits and gradients of one step, as named hex blocks."""
    model = Model()
    rng = np.random.default_rng(23)
    with torch.no_grad():  # every parameter random, layer norms' gamma around 1
        for tensor in model.parameters():
            offset = 1.0 if tensor.dim() == 1 and any(
                tensor is m.weight for m in model.modules() if isinstance(m, torch.nn.LayerNorm)) else 0.0
            tensor.copy_(torch.from_numpy(rng.normal(size=tuple(tensor.shape)) * 0.5 + offset))
    batch = [torch.tensor([VOCABULARY.index(w) for w in words]) for words in generate(1, 3)]
    # The mean over every predicted token of the batch, each sentence run on its own.
    logits = [model(s[:-1]) for s in batch]
    loss = F.cross_entropy(torch.cat(logits), torch.cat([s[1:] for s in batch]))
    model.zero_grad()
    loss.backward()

    lines = [f"# one step of chapter 10's transformer in float64, torch {torch.__version__}, "
             f"numpy {np.__version__}, by tests/data/generate_transformer_fixtures.py"]
    values = {}

    def add(name, array):
        values[name] = np.atleast_2d(np.asarray(array, dtype=np.float64))
        lines.extend(hex_block(name, array))

    add("config", [V, D, HEADS, LAYERS, D_FF, MAX_LENGTH])
    for s, sentence in enumerate(batch):
        add(f"sentence {s}", sentence.double())
    for name, tensor, get in model.ours():
        add(f"weight {name}", get(tensor.detach()))
    add("loss", [loss.item()])
    add("logits", torch.cat(logits).detach())
    for name, tensor, get in model.ours():
        add(f"gradient {name}", get(tensor.grad))
    return "\n".join(lines) + "\n", values


def same(old, new):
    return set(old) == set(new) and all(
        old[n].shape == a.shape and np.abs(old[n] - a).max() <= 1e-13 for n, a in new.items())


def main():
    ok = check_or_write(SENTENCES, sentences_text(), "numpy")
    text, values = transformer()
    if writing() and not (TORCH.exists() and same(read_hex_blocks(TORCH), values)):
        TORCH.write_text(text, encoding="utf-8", newline="\n")
        print(f"{TORCH.name}: written")
    elif not TORCH.exists() or not same(read_hex_blocks(TORCH), values):
        print(f"{TORCH.name} differs from what torch computes; rerun with --write to replace it")
        ok = False
    else:
        print(f"{TORCH.name}: torch {torch.__version__} agrees with the committed file (1e-13)")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
