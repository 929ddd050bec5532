#!/usr/bin/env python3
"""Check, or with --write write, the reference fixtures for tests/lib/numpy/numpy_random_test.cpp and
chapter 04's expected output.

Run from anywhere with Debian's numpy (1.24.2):

    /usr/bin/python3 tests/data/generate_random_fixtures.py          # verify
    /usr/bin/python3 tests/data/generate_random_fixtures.py --write  # write after a change

Without --write the script only checks, and exits 1 if a committed file differs from what
numpy computes.

Two kinds of files:
- tests/data/numpy_random/: numpy's own stream (seed words, PCG64 state, raw outputs,
  uniforms, normals) for several seeds, read by numpy_random_test.cpp;
- tests/golden/ch04_self_attention*.txt: what article 004's Python program prints for a
  (seed, sentence) pair, compared by ctest with what ch04_self_attention prints.

Every file is plain text: one `# comment` header line saying what produced it, then one value
per line. 64/128-bit integers are written as fixed-width hex, doubles as float.hex() so the
C++ side can read them back exactly with std::strtod. Every value comes from a fixed seed, so
every run computes the same text.
"""

import pathlib
import sys

import numpy as np

from fixture_files import check_or_write, writing

HERE = pathlib.Path(__file__).resolve().parent
OUT_DIR = HERE / "numpy_random"

# 0 and 1 are the simplest seeds, 42 the usual one, 2**32 + 5 needs two 32-bit words and
# 2**130 + 12345 needs five, which exercises the "words beyond the pool" mixing step.
SEEDS = [0, 1, 42, 2**32 + 5, 2**130 + 12345]
RAW_COUNT = 300
UNIFORM_COUNT = 300
# 5 x 20,000 = 10^5 normals: enough for about 25 ziggurat tail draws (idx 0) and a few
# thousand wedge/rejection draws across the seeds.
NORMAL_COUNT = 20_000
MATRIX_SHAPE = (3, 4)

NUMPY = f"numpy {np.__version__}"
ORIGIN = f"{NUMPY} np.random.default_rng"


def lines_text(header, values):
    """`# header`, then one value per line, each ending in '\\n'."""
    return f"# {header}\n" + "".join(f"{value}\n" for value in values)


def hex64(value):
    return f"0x{int(value):016x}"


def hex128(value):
    return f"0x{int(value):032x}"


def words_consumed_by_normals(seed, normal_count):
    """How many 64-bit outputs `normal_count` normals use up (ziggurat retries use extra)."""
    rng = np.random.default_rng(seed)
    rng.standard_normal(normal_count)
    next_raw = int(rng.bit_generator.random_raw())
    budget = 2 * normal_count
    raw = np.random.default_rng(seed).bit_generator.random_raw(budget)
    positions = np.flatnonzero(raw == np.uint64(next_raw))
    assert positions.size >= 1, "stream position after the normals not found"
    return int(positions[0]), next_raw


def seed_fixtures(seed):
    """{path: text} of the files in numpy_random/seed_<seed>/."""
    seed_dir = OUT_DIR / f"seed_{seed}"
    where = f"{ORIGIN}({seed})"
    files = {}

    words = np.random.SeedSequence(seed).generate_state(4, np.uint64)
    files[seed_dir / "seed_words.txt"] = lines_text(
        f"SeedSequence({seed}).generate_state(4, np.uint64), {NUMPY}", [hex64(w) for w in words])

    state = np.random.PCG64(seed).state["state"]
    files[seed_dir / "pcg64_state.txt"] = lines_text(
        f"PCG64({seed}).state: line 1 state, line 2 inc; {NUMPY}",
        [hex128(state["state"]), hex128(state["inc"])])

    raw = np.random.default_rng(seed).bit_generator.random_raw(RAW_COUNT)
    files[seed_dir / "next64.txt"] = lines_text(
        f"{where}.bit_generator.random_raw({RAW_COUNT})", [hex64(v) for v in raw])

    uniforms = np.random.default_rng(seed).random(UNIFORM_COUNT)
    files[seed_dir / "uniform.txt"] = lines_text(
        f"{where}.random({UNIFORM_COUNT}) as float.hex()", [float(v).hex() for v in uniforms])

    normals = np.random.default_rng(seed).standard_normal(NORMAL_COUNT)
    files[seed_dir / "normal.txt"] = lines_text(
        f"{where}.standard_normal({NORMAL_COUNT}) as float.hex()",
        [float(v).hex() for v in normals])

    consumed, next_raw = words_consumed_by_normals(seed, NORMAL_COUNT)
    files[seed_dir / "after_normals.txt"] = lines_text(
        f"{where}: after standard_normal({NORMAL_COUNT}), line 1 = 64-bit outputs "
        "consumed (decimal), line 2 = next random_raw() (hex)",
        [consumed, hex64(next_raw)])
    return files


def matrix_fixture():
    """{path: text} of numpy_random/normal_3x4_seed0.txt."""
    matrix = np.random.default_rng(0).normal(size=MATRIX_SHAPE)
    rows, cols = MATRIX_SHAPE
    return {OUT_DIR / "normal_3x4_seed0.txt": lines_text(
        f"{ORIGIN}(0).normal(size=({rows}, {cols})) flattened in C order "
        "(row by row) as float.hex()",
        [float(v).hex() for v in matrix.ravel(order="C")])}


# ---------------------------------------------------------------------------------------
# Chapter 04: the article's experiment, rerun for other seeds and sentences.
# ---------------------------------------------------------------------------------------
GOLDEN_DIR = HERE.parent / "golden"

# Article 004's printed output for seed 0 and "the cat drank the milk", quoted verbatim.
ARTICLE_BLOCK = """X shape (5, 8) -> Z shape (5, 4)

attention weights (rows = queries, cols = keys)
                 the     cat   drank     the    milk
       the      0.03    0.32    0.12    0.51    0.02
       cat      0.56    0.13    0.05    0.02    0.24
     drank      0.45    0.31    0.02    0.08    0.14
       the      0.08    0.15    0.50    0.16    0.11
      milk      0.02    0.38    0.20    0.39    0.02

row sums [1. 1. 1. 1. 1.]
"""

# (file suffix, seed, sentence); "" is the article's own run.
CHAPTER_04_RUNS = [
    ("", 0, "the cat drank the milk"),
    (".seed1", 1, "the cat drank the milk"),
    (".nimbus", 42, "why did my Nimbus export fail"),
    (".thirteen_words", 7, "the cat drank the milk because it was thirsty and then it slept"),
    (".long_token", 2**70 + 3, "supercalifragilistic attention"),
    (".one_word", 5, "alone"),
]


def article_program_output(seed, sentence):
    """What the article's program prints for `seed` and `sentence` (same draws, same format)."""
    rng = np.random.default_rng(seed)
    tokens = sentence.split()
    n, d_model, d_k, d_v = len(tokens), 8, 4, 4
    X = rng.normal(size=(n, d_model))
    W_Q = rng.normal(size=(d_model, d_k)) * 0.5
    W_K = rng.normal(size=(d_model, d_k)) * 0.5
    W_V = rng.normal(size=(d_model, d_v)) * 0.5
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    shifted = np.exp(scores - scores.max(axis=-1, keepdims=True))
    A = shifted / shifted.sum(axis=-1, keepdims=True)
    Z = A @ V
    lines = [f"X shape {X.shape} -> Z shape {Z.shape}", "",
             "attention weights (rows = queries, cols = keys)",
             " " * 12 + "".join(f"{t:>8}" for t in tokens)]
    lines += [f"{tok:>10}  " + "".join(f"{w:8.2f}" for w in row) for tok, row in zip(tokens, A)]
    lines += ["", f"row sums {np.round(A.sum(axis=1), 6)}"]
    return "\n".join(lines) + "\n"


def chapter_04_goldens():
    """{path: text} of chapter 04's expected outputs and the list of its extra runs."""
    assert article_program_output(0, "the cat drank the milk") == ARTICLE_BLOCK, \
        "numpy no longer reproduces the article's block"
    files = {GOLDEN_DIR / f"ch04_self_attention{suffix}.txt": article_program_output(seed, sentence)
             for suffix, seed, sentence in CHAPTER_04_RUNS}
    # The list of extra runs, read by chapters/CMakeLists.txt to add one ctest per run.
    files[GOLDEN_DIR / "ch04_self_attention.runs"] = lines_text(
        "name|seed|sentence: ch04 runs whose golden file this script wrote",
        [f"{suffix[1:]}|{seed}|{sentence}" for suffix, seed, sentence in CHAPTER_04_RUNS
         if suffix])
    return files


def main():
    files = chapter_04_goldens()
    files[OUT_DIR / "seeds.txt"] = lines_text(
        f"decimal seeds with a seed_<seed>/ folder, written with {NUMPY}", SEEDS)
    files.update(matrix_fixture())
    for seed in SEEDS:
        files.update(seed_fixtures(seed))
    ok, folder = True, None
    for path, text in files.items():
        if path.parent != folder:  # every seed's folder holds files of the same names
            folder = path.parent
            print(f"{folder.relative_to(HERE.parent.parent)}/")
            if writing():
                folder.mkdir(parents=True, exist_ok=True)
        ok = check_or_write(path, text, "numpy") and ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
