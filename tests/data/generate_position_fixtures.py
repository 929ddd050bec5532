#!/usr/bin/python3
"""Chapter 07's reference numbers, computed by numpy:

- tests/golden/ch07_positions.numpy.txt: the start of the chapter's story (order blindness,
  "dog bites man", the sinusoidal table, "dog" with positions). The test ch07.numpy requires
  ch07_positions's stdout to begin with these lines, so those numbers are numpy's at the
  printed digits.
- tests/data/numpy_positions.txt: sinusoidal encodings and rotary embeddings (both layouts) of
  several shapes, as exact hexadecimal doubles, for the unit tests (tests/lib/math/positions_test.cpp).

Run from anywhere with Debian's numpy (1.24.2):

    /usr/bin/python3 tests/data/generate_position_fixtures.py          # verify
    /usr/bin/python3 tests/data/generate_position_fixtures.py --write  # write after a change

Everything is redone here without any of the C++: the random sentences are article 004's
draws (np.random.default_rng(0): X, then W_Q, W_K, W_V, each times 0.5), the encodings are
the papers' formulas. Without --write the script only checks, and exits 1 if a committed file
differs from what numpy computes, so running it never changes a file by accident.
"""
import pathlib
import sys

import numpy as np

from fixture_files import check_or_write, hex_block

HERE = pathlib.Path(__file__).resolve().parent
STORY = HERE.parent / "golden" / "ch07_positions.numpy.txt"
VALUES = HERE / "numpy_positions.txt"


def random_sentence(seed, sentence, d_model=8, d_k=4, d_v=4, scale=0.5):
    rng = np.random.default_rng(seed)
    tokens = sentence.split()
    X = rng.normal(size=(len(tokens), d_model))
    W_Q = rng.normal(size=(d_model, d_k)) * scale
    W_K = rng.normal(size=(d_model, d_k)) * scale
    W_V = rng.normal(size=(d_model, d_v)) * scale
    return X, W_Q, W_K, W_V


def self_attention(X, W_Q, W_K, W_V):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    S = Q @ K.T / np.sqrt(K.shape[1])
    E = np.exp(S - S.max(axis=1, keepdims=True))
    A = E / E.sum(axis=1, keepdims=True)
    return A, A @ V


def sinusoidal(n, d, base=10000.0):
    """PE[p, 2i] = sin(p / base^(2i/d)), PE[p, 2i+1] = cos(p / base^(2i/d))."""
    p = np.arange(n)[:, None]
    i = np.arange(d // 2)[None, :]
    angle = p / base ** (2 * i / d)
    PE = np.zeros((n, d))
    PE[:, 0::2] = np.sin(angle)
    PE[:, 1::2] = np.cos(angle)
    return PE


def rotary(X, positions, layout="interleaved", base=10000.0):
    """Each column pair of row r turned by positions[r] * base^(-2i/d)."""
    d = X.shape[1]
    theta = base ** (-2 * np.arange(d // 2) / d)
    angle = np.asarray(positions, dtype=float)[:, None] * theta[None, :]
    c, s = np.cos(angle), np.sin(angle)
    if layout == "interleaved":
        a, b = X[:, 0::2], X[:, 1::2]
    else:  # halves: column i with column i + d/2 ("rotate_half")
        a, b = X[:, : d // 2], X[:, d // 2:]
    ra, rb = a * c - b * s, a * s + b * c
    Y = np.empty_like(X)
    if layout == "interleaved":
        Y[:, 0::2], Y[:, 1::2] = ra, rb
    else:
        Y[:, : d // 2], Y[:, d // 2:] = ra, rb
    return Y


def text(v):
    return str(np.round(v, 4))


def dog_in_both(X, W, PE):
    reversed_rows = [2, 1, 0]
    _, Z_a = self_attention(X + PE, *W)
    _, Z_b = self_attention(X[reversed_rows] + PE, *W)
    return Z_a[0], Z_b[2]


def story():
    X, *W = random_sentence(0, "dog bites man")
    blind = dog_in_both(X, W, np.zeros((3, 8)))
    placed = dog_in_both(X, W, sinusoidal(3, 8))
    return [
        "Attention cannot see word order", "",
        "\"the cat drank the milk\" (chapter 04, seed 0), reversed: each output row moves with "
        "its token, and nothing else changes", "",
        f"out(dog), no positions:  dog bites man {text(blind[0])}",
        f"{'':26}man bites dog {text(blind[1])}", "",
        "Sinusoidal positions, added to the embeddings", "",
        "np.round(PE, 4), d_model = 4, positions 0 to 3:",
        *str(np.round(sinusoidal(4, 4), 4)).split("\n"), "",
        f"out(dog), positions added: dog bites man {text(placed[0])}",
        f"{'':28}man bites dog {text(placed[1])}",
        f"the two now differ by up to {np.abs(placed[0] - placed[1]).max():.4f}",
    ]


def values():
    """Blocks of exact doubles (fixture_files.hex_block) for tests/lib/math/positions_test.cpp."""
    lines = []
    for n, d in [(4, 4), (3, 8), (10, 512), (50, 128), (1, 2)]:
        lines += hex_block(f"sinusoidal {n} {d}", sinusoidal(n, d))
    rng = np.random.default_rng(7)
    for n, d in [(5, 4), (3, 8), (1, 2), (6, 64)]:
        X = rng.normal(size=(n, d))
        positions = rng.integers(0, 200, size=n).astype(float)
        lines += hex_block(f"input {n} {d}", X)
        lines += hex_block(f"positions {n} {d}", positions[None, :])
        lines += hex_block(f"rotary interleaved {n} {d}", rotary(X, positions))
        lines += hex_block(f"rotary halves {n} {d}", rotary(X, positions, "halves"))
    # Chapter 07's worked RoPE example: q = (1, 2) at m and k = (3, -1) at n, d = 2, theta = 1.
    q, k = np.array([[1.0, 2.0]]), np.array([[3.0, -1.0]])
    offsets = [(5, 3), (2, 0), (10, 8), (3, 5)]
    # Rounded to 12 decimals: numpy 1.24 and 2.2 differ in the sine's last bit.
    scores = [round((rotary(q, [m]) @ rotary(k, [n]).T).item(), 12) for m, n in offsets]
    lines += hex_block("rope worked example (m, n) = (5, 3) (2, 0) (10, 8) (3, 5)", [scores])
    return lines


def main():
    header = (f"# chapter 07's story from numpy {np.__version__}, written by "
              "tests/data/generate_position_fixtures.py; ch07_positions's stdout begins with "
              "the lines below")
    ok = check_or_write(STORY, header + "\n" + "\n".join(story()) + "\n", "numpy")
    ok = check_or_write(VALUES, f"# numpy {np.__version__}: chapter 07's encodings as exact "
                        "doubles, written by tests/data/generate_position_fixtures.py\n"
                        + "\n".join(values()) + "\n", "numpy") and ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
