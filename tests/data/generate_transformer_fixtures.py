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

from fixture_files import check_or_write
from torch_pieces import Block, Blocks, as_is, block_parameters, check_or_write_blocks, randomise, \
    transposed

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


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = torch.nn.Embedding(V, D)
        self.blocks = torch.nn.ModuleList(Block(D, HEADS, D_FF) for _ in range(LAYERS))
        self.lnf = torch.nn.LayerNorm(D)
        self.unembed = torch.nn.Linear(D, V)
        self.register_buffer("pe", sinusoidal(MAX_LENGTH, D))

    def forward(self, tokens):
        x = (self.embedding(tokens) + self.pe[: len(tokens)]).unsqueeze(0)
        for block in self.blocks:
            x = block(x)
        return self.unembed(self.lnf(x))[0]

    def ours(self):
        """(our name, torch tensor, get) in attn::gpt::parameters()'s order; `get` maps a
        torch tensor (a weight or its gradient) to our layout."""
        entries = [("embedding", self.embedding.weight, as_is)]
        for l, b in enumerate(self.blocks):
            entries += block_parameters(f"blocks.{l}.", b)
        return entries + [("lnf.gamma", self.lnf.weight, as_is),
                          ("lnf.beta", self.lnf.bias, as_is),
                          ("unembedding", self.unembed.weight, transposed),
                          ("unembedding_bias", self.unembed.bias, as_is)]


def transformer():
    """Weights, batch, loss, logits and gradients of one step, as named hex blocks."""
    model = Model()
    randomise(model, np.random.default_rng(23))
    batch = [torch.tensor([VOCABULARY.index(w) for w in words]) for words in generate(1, 3)]
    # The mean over every predicted token of the batch, each sentence run on its own.
    logits = [model(s[:-1]) for s in batch]
    loss = F.cross_entropy(torch.cat(logits), torch.cat([s[1:] for s in batch]))
    model.zero_grad()
    loss.backward()

    blocks = Blocks()
    add = blocks.add
    add("config", [V, D, HEADS, LAYERS, D_FF, MAX_LENGTH])
    for s, sentence in enumerate(batch):
        add(f"sentence {s}", sentence.double())
    for name, tensor, get in model.ours():
        add(f"weight {name}", get(tensor.detach()))
    add("loss", [loss.item()])
    add("logits", torch.cat(logits).detach())
    for name, tensor, get in model.ours():
        add(f"gradient {name}", get(tensor.grad))
    text = (f"# one step of chapter 10's transformer in float64, torch {torch.__version__}, "
            f"numpy {np.__version__}, by tests/data/generate_transformer_fixtures.py\n"
            + "\n".join(blocks.lines) + "\n")
    return text, blocks.values


def main():
    ok = check_or_write(SENTENCES, sentences_text(), "numpy")
    ok = check_or_write_blocks(TORCH, *transformer()) and ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
