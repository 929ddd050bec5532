#!/usr/bin/python3
"""Writes numpy_print.txt and numpy_round.txt: what numpy prints for a set of 1-D float
arrays, and what np.round returns.

Run from anywhere with Debian's numpy:  /usr/bin/python3 tests/data/generate_print_fixtures.py
The output is deterministic; running it again changes no byte. The C++ test
numpy_print_test.cpp reads the file, so the tests never need Python.

Format: one case per block, blocks separated by a blank line.
  in  <values as float.hex(), space separated>
  out <first line of str(array)>
  out <further lines, when numpy wraps the array>
numpy_round.txt has one line per case:  <decimals> <x as float.hex()> <np.round(x, decimals)>
"""
import pathlib

import numpy as np

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
    (HERE / "numpy_print.txt").write_text(header + body + "\n")
    header = f"# decimals, x, np.round(x, decimals) from numpy {np.__version__}\n"
    (HERE / "numpy_round.txt").write_text(header + "\n".join(round_cases()) + "\n")


if __name__ == "__main__":
    main()
