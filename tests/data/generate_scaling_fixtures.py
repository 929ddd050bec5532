#!/usr/bin/python3
"""Chapter 05's story, computed by numpy: tests/golden/ch05_scaling.numpy.txt.

Run from anywhere with Debian's numpy (1.24.2):

    /usr/bin/python3 tests/data/generate_scaling_fixtures.py          # verify
    /usr/bin/python3 tests/data/generate_scaling_fixtures.py --write  # write after a change

The experiment is chapter 05's, redone here without any of the C++: standard normals from
np.random.default_rng(5), drawn in the same order (each width's spread pairs, then each
width's saturation probes, then the d_k = 512 grids, then the row-wise grid), measured with
numpy and printed with the chapter's formats. The test ch05.numpy (tests/CMakeLists.txt,
tests/numpy_lines.cmake) runs the chapter and requires its stdout to begin with these lines,
so every printed number of the chapter's story is numpy's, compared at the printed digits.

Without --write the script only checks: if the committed file differs from what numpy computes
it prints the difference and exits 1, so running it never changes a committed file by accident.
"""
import pathlib
import sys

import numpy as np

from fixture_files import check_or_write

HERE = pathlib.Path(__file__).resolve().parent
OUT = HERE.parent / "golden" / "ch05_scaling.numpy.txt"

SEED = 5
WIDTHS = [2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
PAIRS, KEYS, TRIALS = 4000, 16, 200


def softmax_rows(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def sharpness(scores):
    """Largest weight, entropy in nats (0 ln 0 = 0), Frobenius norm of diag(w) - w wᵀ."""
    w = softmax_rows(scores)
    used = w[w > 0]
    jacobian = np.diag(w) - np.outer(w, w)
    return np.array([w.max(), -(used * np.log(used)).sum(), np.linalg.norm(jacobian, "fro")])


def grid_table(queries, keys, grid):
    lines = [" " * 12 + "".join(f"{k:>8}" for k in keys)]
    lines += [f"{q:>10}  " + "".join(f"{v:8.2f}" for v in row) for q, row in zip(queries, grid)]
    return lines


def vector_text(values):
    return "[" + ", ".join(f"{v:.2f}" for v in values) + "]"


def story():
    rng = np.random.default_rng(SEED)
    out = [f"1. The spread of q·k, {PAIRS} pairs per d_k, entries drawn from N(0, 1)",
           "   (var(q·k)/d_k is also the variance of the scaled score q·k/√d_k)", "",
           "   d_k    var(q·k)   var(q·k)/d_k   mean |q·k|"]
    for d in WIDTHS:
        q = rng.normal(size=(PAIRS, d))
        k = rng.normal(size=(PAIRS, d))
        dots = (q * k).sum(axis=1)
        var = dots.var()
        out.append(f"{d:6d}  {var:10.2f}  {var / d:13.3f}  {np.abs(dots).mean():11.2f}")

    out += ["", f"2. One query against {KEYS} keys, mean over {TRIALS} queries per d_k",
            f"   (uniform weights would give max weight {1 / KEYS:.4f}, "
            f"entropy {np.log(KEYS):.3f})",
            "", "          ---------- unscaled ----------   ----------- scaled -----------",
            "   d_k   max weight  entropy  |Jacobian|   max weight  entropy  |Jacobian|"]
    for d in WIDTHS:
        raw, scaled = np.zeros(3), np.zeros(3)
        for _ in range(TRIALS):
            q = rng.normal(size=(1, d))
            K = rng.normal(size=(KEYS, d))
            scores = (q @ K.T)[0]
            raw += sharpness(scores) / TRIALS
            scaled += sharpness(scores * (1 / np.sqrt(d))) / TRIALS
        out.append(f"{d:6d}  {raw[0]:11.3f}  {raw[1]:7.3f}  {raw[2]:10.4f}"
                   f"  {scaled[0]:11.3f}  {scaled[1]:7.3f}  {scaled[2]:10.4f}")

    d = 512
    Q, K = rng.normal(size=(6, d)), rng.normal(size=(8, d))
    raw = softmax_rows(Q @ K.T)
    scaled = softmax_rows(Q @ K.T * (1 / np.sqrt(d)))
    picks_raw, picks_scaled = (raw.max(axis=1) > 0.99).sum(), (scaled.max(axis=1) > 0.99).sum()
    out += ["", f"   at d_k = {d}, six queries, eight keys: rows with a weight above 0.99: "
                f"unscaled {picks_raw}, scaled {picks_scaled}"]

    Q, K = rng.normal(size=(5, 4)), rng.normal(size=(5, 4))
    S = Q @ K.T * (1 / np.sqrt(4))
    per_row = softmax_rows(S)
    whole = softmax_rows(S.reshape(1, -1)).reshape(S.shape)
    names_q, names_k = [f"q{i}" for i in range(1, 6)], [f"k{i}" for i in range(1, 6)]
    out += ["", "3. One score grid, two softmaxes", "", "row-wise softmax"]
    out += grid_table(names_q, names_k, per_row)
    out += ["", "one softmax over the whole grid"] + grid_table(names_q, names_k, whole)
    out += ["", f"row sums    row-wise {vector_text(per_row.sum(axis=1))}",
            f"            whole    {vector_text(whole.sum(axis=1))}",
            f"total       row-wise {per_row.sum():.2f}, whole {whole.sum():.2f}"]
    return out


def main():
    header = (f"# chapter 05's story from numpy {np.__version__} default_rng({SEED}), written by "
              "tests/data/generate_scaling_fixtures.py; ch05_scaling's stdout begins with "
              "the lines below")
    if not check_or_write(OUT, header + "\n" + "\n".join(story()) + "\n", "numpy"):
        sys.exit(1)

if __name__ == "__main__":
    main()
