#!/usr/bin/python3
"""Checks, or with --write writes, numpy_print.txt, numpy_print_2d.txt and numpy_round.txt:
what numpy prints for a set of 1-D and 2-D float arrays, and what np.round returns.

Run from anywhere with Debian's numpy (1.24.2):

    /usr/bin/python3 tests/data/generate_print_fixtures.py          # verify
    /usr/bin/python3 tests/data/generate_print_fixtures.py --write  # write after a change

Without --write the script only checks, and exits 1 if a committed file differs from what
numpy computes. The cases are fixed or drawn from seeded generators, so every run computes the
same text. The C++ test numpy_print_test.cpp reads the files, so the tests never need Python.

Format: one case per block, blocks separated by a blank line.
  in  <values as float.hex(), space separated>
  out <first line of str(array)>
  out <further lines, when numpy wraps the array>
numpy_print_2d.txt has the same blocks for matrices, each opened by its name and shape, then
one `in` line per row:
  case <name> <rows> <cols>
  in  <row 0 as float.hex(), space separated>
  in  <row 1 ...>
  out <first line of str(matrix)>
  out <further lines: one per row, more when a row wraps>
numpy_round.txt has one line per case:  <decimals> <x as float.hex()> <np.round(x, decimals)>
"""
import pathlib
import sys

import numpy as np

from fixture_files import check_or_write
from generate_position_fixtures import sinusoidal  # PE[p, 2i] = sin(p / 10000**(2i/d)), ...

HERE = pathlib.Path(__file__).resolve().parent


def cases():
    yield [0.2, 1.0, 0.7]                       # article 004's scores
    yield [0.2052, 0.4566, 0.3383]              # unrounded weights
    yield [0.734, 0.441]
    yield [1.0] * 5                             # "row sums [1. 1. 1. 1. 1.]"
    yield []
    yield [0.0]
    yield [-0.0, 0.5]
    yield [-1.5, 2.25, 10.0]
    yield [0.125, 0.135, 0.145, 2.675]          # halves that round to even
    yield [1e-5, 1.0]                           # small value: scientific
    yield [0.01, 12.0]                          # max/min ratio above 1000: scientific
    yield [1e8, 1.0]                            # large value: scientific
    yield [1.5e-300, -2.0e300]
    yield [0.123456789012, 3.0]                 # more than 8 digits: cut to 8
    yield [float("nan"), 1.0, float("inf")]
    yield [float("-inf"), 0.25]
    yield [float("nan")]
    yield [123456.789, 0.001]
    yield list(np.arange(40) / 7.0)             # wraps at 75 characters
    rng = np.random.default_rng(2024)
    for decimals in range(0, 7):
        for size in (1, 3, 8, 30):
            yield list(np.round(rng.normal(size=size) * 3, decimals))
    for size in (5, 17, 60):
        yield list(rng.normal(size=size) * 10.0 ** rng.integers(-6, 9))


def block(values):
    text = str(np.array(values, dtype=np.float64))
    lines = ["in " + " ".join(float(v).hex() for v in values)]
    lines += ["out " + line for line in text.split("\n")]
    return "\n".join(lines)


def cases_2d():
    rng = np.random.default_rng(4004)
    yield "pe_4x4", np.round(sinusoidal(4, 4), 4)        # print(np.round(PE, 4))
    yield "pe_10x8", np.round(sinusoidal(10, 8), 4)
    yield "normals_3x8", np.round(rng.normal(size=(3, 8)), 4)
    yield "whole_numbers_2x2", np.array([[1.0, 2.0], [3.0, 4.0]])
    yield "scientific_large_2x3", np.array([[-1.5, 2.5e9, 0.25], [3.0, -0.001, 42.0]])
    yield "scientific_small_2x2", np.array([[1e-5, 1.0], [0.5, -2.0]])
    yield "wrap_1x20", np.round(rng.random((1, 20)), 8)           # one row, wraps
    yield "wrap_3x12", np.round(rng.random((3, 12)), 8)           # every row wraps
    yield "wrap_negative_2x15", np.round(rng.normal(size=(2, 15)) * 100, 8)
    # numbers 8 wide: eight fill a line to exactly 73 characters, the most a row's line holds
    yield "exact_fit_2x20", np.round(rng.normal(size=(2, 20)), 5)
    yield "scientific_wrap_2x9", rng.normal(size=(2, 9)) * 10.0 ** rng.integers(-9, 9, size=(2, 9))
    yield "single_row_1x5", np.round(rng.normal(size=(1, 5)), 4)
    yield "single_column_5x1", np.round(rng.normal(size=(5, 1)), 4)
    yield "one_entry_1x1", np.array([[0.5]])
    yield "nan_inf_2x3", np.array([[np.nan, 1.25, -np.inf], [0.0, np.inf, -3.0]])
    yield "negative_zero_2x2", np.array([[-0.0, 0.5], [1.0, -0.0]])
    yield "empty_0x3", np.zeros((0, 3))
    yield "empty_2x0", np.zeros((2, 0))


def block_2d(name, matrix):
    matrix = np.asarray(matrix, dtype=np.float64)
    rows, cols = matrix.shape
    lines = [f"case {name} {rows} {cols}"]
    lines += ["in " + " ".join(float(v).hex() for v in row) for row in matrix]
    lines += ["out " + line for line in str(matrix).split("\n")]
    return "\n".join(lines)


def round_cases():
    rng = np.random.default_rng(7)
    specials = [0.125, 0.135, 0.145, 2.675, 0.5, 1.5, 2.5, -0.5, -2.5, 0.2052, 0.4566, 0.3383]
    values = specials + list(rng.normal(size=400) * 5)
    for i, x in enumerate(values):
        decimals = i % 7
        yield f"{decimals} {float(x).hex()} {float(np.round(x, decimals)).hex()}"


def main():
    header = f"# str(np.array(values)) from numpy {np.__version__}; made by generate_print_fixtures.py\n"
    body = "\n\n".join(block(v) for v in cases())
    ok = check_or_write(HERE / "numpy_print.txt", header + body + "\n", "numpy")
    header = f"# str(matrix) for 2-D arrays from numpy {np.__version__}; made by generate_print_fixtures.py\n"
    body = "\n\n".join(block_2d(name, m) for name, m in cases_2d())
    ok = check_or_write(HERE / "numpy_print_2d.txt", header + body + "\n", "numpy") and ok
    header = f"# decimals, x, np.round(x, decimals) from numpy {np.__version__}\n"
    ok = check_or_write(HERE / "numpy_round.txt", header + "\n".join(round_cases()) + "\n",
                        "numpy") and ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
