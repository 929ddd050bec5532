"""What the fixture scripts in tests/data share.

- hex_block / read_hex_blocks / parse_hex_blocks: the format the C++ tests read (tests/fixture_blocks.hpp): a line
  "case NAME ROWS COLS", then ROWS lines of exact hexadecimal doubles.
- check_or_write: a script verifies by default, printing the difference and returning False
  when the committed file differs from what the reference computes; with --write it replaces
  the file. So running a script never changes a committed file by accident.
"""
import difflib
import sys

import numpy as np


def hex_block(name, matrix):
    """The lines of one block; a vector is written as one row."""
    a = np.atleast_2d(np.asarray(matrix, dtype=np.float64))
    return [f"case {name} {a.shape[0]} {a.shape[1]}"] + [
        " ".join(float(v).hex() for v in row) for row in a]


def read_hex_blocks(path):
    """Every block of a file, by name, as numpy arrays."""
    return parse_hex_blocks(path.read_text(encoding="utf-8"))


def parse_hex_blocks(text):
    """Every block of a text in that format, by name, as numpy arrays."""
    blocks, lines = {}, text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("case "):
            *name, rows, cols = line[5:].split()
            rows, cols = int(rows), int(cols)
            blocks[" ".join(name)] = np.array(
                [[float.fromhex(v) for v in lines[i + 1 + r].split()] for r in range(rows)]
            ).reshape(rows, cols)
    return blocks


def writing():
    return "--write" in sys.argv[1:]


def check_or_write(path, text, reference):
    """Compares the committed `path` with `text`, which `reference` ("numpy") computed."""
    old = path.read_text(encoding="utf-8") if path.exists() else None
    if old == text:
        print(f"{path.name}: {reference} agrees with the committed file")
        return True
    if writing():
        path.write_text(text, encoding="utf-8", newline="\n")
        print(f"{path.name}: written")
        return True
    sys.stdout.writelines(difflib.unified_diff(
        (old or "").splitlines(True), text.splitlines(True), "committed", reference))
    print(f"{path.name} differs from what {reference} computes; rerun with --write to replace it")
    return False
