#!/usr/bin/python3
"""Chapter 11's sampler, computed by numpy: tests/data/numpy_sampling.txt, read by
tests/lib/math/sampling_test.cpp (the distributions) and tests/lib/book/sampling_draws_test.cpp
(the tokens drawn).

Run from anywhere with Debian's numpy (1.24.2):

    /usr/bin/python3 tests/data/generate_sampling_fixtures.py          # verify
    /usr/bin/python3 tests/data/generate_sampling_fixtures.py --write  # write after a change

Without --write the script only checks, and exits 1 if the committed file differs from what
numpy computes, so running it never changes a file by accident.

The reference is written here from the definitions, without any of the C++ (the rules are
those of lib/math/include/attn/math/sampling.hpp):
- the order: the logits descending, equal logits by index (np.argsort(-z, kind="stable"));
- temperature: softmax(z / T) as exp((z - max z) / T) normalised by numpy's sum, each exp
  correctly rounded (see exp below); T = 0 is greedy, all the mass on the first largest logit;
- top-k: the first k tokens of the order, renormalised;
- top-p: with c the cumulative mass along the order (c_0 = 0), token j stays iff c_{j-1} < p,
  renormalised; p = 1 is off;
- the draw: rng.choice(V, p=distribution), numpy's own sampler, one per token.

Before writing, the script checks what the C++ relies on: that rng.choice(V, p=q) is
`cdf = q.cumsum(); cdf /= cdf[-1]; cdf.searchsorted(rng.random(), side="right")` and takes one
rng.random() per draw, over many seeds and distributions; and that no case sits on a knife
edge, where a last-bit difference between numpy's exp or sum and C++'s could change which
tokens top-p keeps or which token a draw picks.

Blocks (tests/data/fixture_files.py; a token is written as a double, exactly):
- `logits NAME` (1 x V), `options SETTING` (1 x 3: T, k, p), `draw_seed` (1 x 1);
- `distribution NAME SETTING` (1 x V): what is sampled from;
- `draws NAME SETTING` (1 x DRAWS): the tokens rng.choice draws from it, rng being a fresh
  np.random.default_rng(DRAW_SEED) for every block.
"""
import pathlib
import sys
from decimal import Decimal, localcontext

import numpy as np

from fixture_files import check_or_write, hex_block

HERE = pathlib.Path(__file__).resolve().parent
OUT = HERE / "numpy_sampling.txt"

VOCAB = 50
DRAW_SEED = 2026
DRAWS = 20
EDGE = 1e-12  # the closest a cumulative mass may come to p, or a draw to a token's border


def logit_vectors():
    """{name: logits (V,)}: two smooth vectors and one full of ties."""
    def normal(seed, scale):
        return np.random.default_rng(seed).normal(size=VOCAB) * scale
    # Rounded to halves, seed 12 ties at every place the filters look: the two largest logits
    # (greedy), the 4th to 8th (k = 5) and the 9th to 12th (k = 10).
    ties = np.round(normal(12, 4.0)) / 2
    order = np.argsort(-ties, kind="stable")
    assert ties[order[0]] == ties[order[1]], "no tie at the top"
    assert ties[order[4]] == ties[order[5]] and ties[order[9]] == ties[order[10]], "no tie at k"
    return {"seed1": normal(1, 2.0), "seed2": normal(2, 3.0), "ties": ties}


# (name, T, k, p)
SETTINGS = [
    ("greedy", 0.0, 0, 1.0),
    ("T0.5", 0.5, 0, 1.0),
    ("T1", 1.0, 0, 1.0),
    ("T1.5", 1.5, 0, 1.0),
    ("top_k5", 1.0, 5, 1.0),
    ("top_p0.9", 1.0, 0, 0.9),
    ("T0.7_k10_p0.8", 0.7, 10, 0.8),
    ("T1.5_k5_p0.9", 1.5, 5, 0.9),
]


def exp(x):
    """e^x for each entry, correctly rounded to the nearest double. np.exp is not: on a processor
    with AVX-512 numpy uses its own exp, elsewhere C's, and the two differ in the last bit of
    about one entry in four, so the file would depend on the machine that wrote it. Rounded
    from 40 correct digits, every machine writes the same bits (and C's exp, within half an ulp
    and a hair, almost always gives them too)."""
    def one(v):
        with localcontext() as context:
            context.prec = 40
            return float(Decimal(float(v)).exp())
    return np.array([one(v) for v in x])


def distribution(z, T, k, p):
    """What sampling.hpp's next_token_distribution computes, written in numpy."""
    order = np.argsort(-z, kind="stable")
    if T == 0.0:
        q = np.zeros_like(z)
        q[order[0]] = 1.0
        return q
    e = exp((z - z.max()) / T)
    q = e / e.sum()
    if 0 < k < z.size:
        q[order[k:]] = 0.0
        q = q / q.sum()
    if p < 1.0:
        before = np.concatenate(([0.0], np.cumsum(q[order])[:-1]))
        assert np.abs(before - p).min() > EDGE, "top-p on a knife edge"
        kept = np.count_nonzero(before < p)  # `before` only grows: the kept tokens are a prefix
        q[order[kept:]] = 0.0
        q = q / q.sum()
    return q


def choice_by_formula(q, u):
    cdf = q.cumsum()
    cdf /= cdf[-1]
    return int(cdf.searchsorted(u, side="right")), cdf


def check_numpys_choice(seeds=200, draws=25):
    """rng.choice(V, p=q) is the formula with rng.random(), one draw per token, never a token of
    probability 0; raises AssertionError otherwise."""
    for seed in range(seeds):
        g = np.random.default_rng(10_000 + seed)  # the distributions; the draws use `seed`
        V = int(g.integers(1, 80))
        q = g.random(V) ** 3
        q[g.random(V) < 0.3] = 0.0
        if q.sum() == 0.0:
            q[0] = 1.0
        q = q / q.sum()
        by_choice, by_formula = np.random.default_rng(seed), np.random.default_rng(seed)
        for _ in range(draws):
            token = by_choice.choice(V, p=q)
            assert token == choice_by_formula(q, by_formula.random())[0], (seed, V)
            assert q[token] > 0.0
        assert by_choice.bit_generator.random_raw() == by_formula.bit_generator.random_raw(), \
            "choice took more than one draw per token"
    print(f"numpy {np.__version__}: rng.choice(V, p=q) is cdf.searchsorted(rng.random(), "
          f"side='right') for {seeds * draws} draws, one rng.random() each")


def draws(q):
    """The tokens rng.choice draws from q, rng a fresh default_rng(DRAW_SEED)."""
    rng, uniforms = np.random.default_rng(DRAW_SEED), np.random.default_rng(DRAW_SEED)
    tokens = [int(rng.choice(q.size, p=q)) for _ in range(DRAWS)]
    for token in tokens:
        u = uniforms.random()
        expected, cdf = choice_by_formula(q, u)
        assert token == expected
        assert np.abs(cdf - u).min() > EDGE, "a draw on a token's border"
    return tokens


def fixture_text():
    lines = [f"# numpy {np.__version__}: tests/data/generate_sampling_fixtures.py"]
    lines += hex_block("draw_seed", [DRAW_SEED])
    for setting, T, k, p in SETTINGS:
        lines += hex_block(f"options {setting}", [T, k, p])
    for name, z in logit_vectors().items():
        lines += hex_block(f"logits {name}", z)
        for setting, T, k, p in SETTINGS:
            q = distribution(z, T, k, p)
            assert abs(q.sum() - 1.0) < 1e-15 and (k == 0 or np.count_nonzero(q) <= k)
            lines += hex_block(f"distribution {name} {setting}", q)
            lines += hex_block(f"draws {name} {setting}", draws(q))
    return "\n".join(lines) + "\n"


def main():
    check_numpys_choice()
    sys.exit(0 if check_or_write(OUT, fixture_text(), "numpy") else 1)


if __name__ == "__main__":
    main()
