#!/usr/bin/python3
"""Writes numpy_print_random.txt and numpy_round_random.txt: what numpy prints for random
float64 arrays and matrices, and what np.round returns for random numbers, so that
tests/lib/numpy/numpy_print_fixture_test.cpp can check attn::numpy's array_str, matrix_str and round
against numpy over many more values than the hand-picked cases of generate_print_fixtures.py.

Run from anywhere with Debian's numpy (1.24.2):

    /usr/bin/python3 tests/data/generate_print_random_fixtures.py          # verify
    /usr/bin/python3 tests/data/generate_print_random_fixtures.py --write  # write after a change

Without --write the script only checks, and exits 1 if a committed file differs from what
numpy computes. The cases are drawn from np.random.default_rng(SEED), so they are the same on
every run. The values mix many magnitudes (sign * 10**uniform(-323, 308)), narrow windows of
magnitudes around the positional/scientific boundaries, uniform(-1, 1), whole numbers, values
rounded to 1..8 decimals as the chapters round them, ties such as x.5 and x.125, subnormals,
-0.0 and, now and then, nan, inf and -inf.

numpy_print_random.txt: one `#` header line, then blocks separated by a blank line. A 1-D
array (str(np.array(values))):
  array <name> <length>
  in  <values as float.hex(), space separated>
  out <first line of str(array)>
  out <further lines, when numpy wraps the array>
A matrix (str(matrix)), one `in` line per row:
  matrix <name> <rows> <cols>
  in  <row 0 as float.hex(), space separated>
  in  <row 1 ...>
  out <first line of str(matrix)>
  out <further lines: one per row, more when a row wraps>
numpy_round_random.txt: one `#` header line, then one line per case, as numpy_round.txt:
  <decimals> <x as float.hex()> <np.round(x, decimals) as float.hex()>

The C++ test expects exactly ARRAYS arrays, MATRICES matrices and ROUNDS rounding cases; change
it with these numbers.
"""
import pathlib
import sys

import numpy as np

from fixture_files import check_or_write

HERE = pathlib.Path(__file__).resolve().parent
PRINT_FILE = HERE / "numpy_print_random.txt"
ROUND_FILE = HERE / "numpy_round_random.txt"

SEED = 20260017  # issue 17
ARRAYS = 240
MATRICES = 60
ROUNDS = 1200

SPECIALS = [0.0, -0.0, np.nan, np.inf, -np.inf]
# The edges of numpy's choice of notation: scientific from 1e8 up, below 1e-4, or when the
# largest magnitude is more than 1000 times the smallest.
BOUNDARIES = [1e8, np.nextafter(1e8, 0), 1e-4, np.nextafter(1e-4, 1), np.nextafter(1e-4, 0),
              1000.0, 1.0, 0.001, 99999999.5, 0.99999999995, 9.999999995, 2.2250738585072014e-308,
              np.finfo(np.float64).max, -np.finfo(np.float64).max]


def sign(rng, n):
    return np.where(rng.random(n) < 0.5, -1.0, 1.0)


def draw(rng, n, style):
    """n values of one style."""
    if style == "magnitudes":  # anything from subnormal to near the largest double
        return sign(rng, n) * 10.0 ** rng.uniform(-323, 308.25, n)
    if style == "window":  # magnitudes within a few decades: often positional, near its edges
        low = rng.uniform(-7, 10)
        return sign(rng, n) * 10.0 ** rng.uniform(low, low + rng.uniform(0, 4), n)
    if style == "uniform":
        return rng.uniform(-1, 1, n)
    if style == "whole":
        return rng.integers(-10 ** int(rng.integers(1, 10)), 10 ** int(rng.integers(1, 10)),
                            n).astype(np.float64)
    if style == "rounded":  # as the chapters print np.round(x, k)
        scale = 10.0 ** int(rng.integers(-3, 5))
        return np.round(rng.normal(size=n) * scale, int(rng.integers(1, 9)))
    if style == "ties":  # halves, eighths, sixteenths: exact binary values at decimal ties
        step = 2.0 ** -int(rng.integers(1, 5))
        return (rng.integers(-2000, 2000, n) + step * rng.integers(0, int(1 / step), n)) \
            * 10.0 ** int(rng.integers(-2, 3))
    if style == "subnormal":  # from 5e-324 up, as many with few significant bits as with many
        return sign(rng, n) * np.floor(2.0 ** rng.uniform(0, 52, n)) * 2.0 ** -1074
    if style == "boundary":
        return np.array(BOUNDARIES)[rng.integers(0, len(BOUNDARIES), n)] * sign(rng, n)
    raise ValueError(style)


STYLES = ["magnitudes", "window", "window", "uniform", "whole", "rounded", "rounded", "ties",
          "subnormal", "boundary"]


def values(rng, n):
    """n values: one style for the whole array, or one per entry, sometimes with specials."""
    if n == 0:
        return np.zeros(0)
    if rng.random() < 0.25:  # a mix of styles, entry by entry
        out = np.array([draw(rng, 1, STYLES[rng.integers(0, len(STYLES))])[0] for _ in range(n)])
    else:
        out = draw(rng, n, STYLES[rng.integers(0, len(STYLES))])
    if rng.random() < 0.2:  # a few zeros, -0.0, nan or infinities
        for i in rng.integers(0, n, int(rng.integers(1, 4))):
            out[i] = SPECIALS[rng.integers(0, len(SPECIALS))]
    return out.astype(np.float64)


def hex_line(row):
    return "in " + " ".join(float(v).hex() for v in row)


def out_lines(array):
    return ["out " + line for line in str(array).split("\n")]


def print_blocks(rng):
    blocks = []
    for i in range(ARRAYS):
        a = values(rng, int(rng.integers(0, 41)))
        blocks.append("\n".join([f"array a{i:03d} {a.size}", hex_line(a)] + out_lines(a)))
    for i in range(MATRICES):
        rows, cols = int(rng.integers(1, 7)), int(rng.integers(1, 13))
        if i % 20 == 19:  # now and then a matrix with no entries
            rows, cols = (0, cols) if i % 40 == 19 else (rows, 0)
        m = values(rng, rows * cols).reshape(rows, cols)
        blocks.append("\n".join([f"matrix m{i:03d} {rows} {cols}"]
                                + [hex_line(row) for row in m] + out_lines(m)))
    return blocks


def round_lines(rng):
    lines = []
    for _ in range(ROUNDS):
        decimals = int(rng.integers(0, 9))
        kind = rng.random()
        if kind < 0.1:  # so large that x * 10**decimals overflows or drops the fraction
            x = sign(rng, 1)[0] * 10.0 ** rng.uniform(15, 308.25)
        else:
            x = values(rng, 1)[0]
        rounded = np.round(np.array([x]), decimals)[0]
        lines.append(f"{decimals} {float(x).hex()} {float(rounded).hex()}")
    return lines


def main():
    rng = np.random.default_rng(SEED)
    with np.errstate(over="ignore", invalid="ignore"):
        blocks = print_blocks(rng)
        rounds = round_lines(rng)
    header = (f"# str(a) for random float64 arrays from numpy {np.__version__}, "
              f"default_rng({SEED}): {ARRAYS} arrays, {MATRICES} matrices; "
              "made by generate_print_random_fixtures.py\n")
    ok = check_or_write(PRINT_FILE, header + "\n\n".join(blocks) + "\n", "numpy")
    header = (f"# decimals, x, np.round(x, decimals) from numpy {np.__version__}, "
              f"default_rng({SEED}): {ROUNDS} cases; made by generate_print_random_fixtures.py\n")
    ok = check_or_write(ROUND_FILE, header + "\n".join(rounds) + "\n", "numpy") and ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
