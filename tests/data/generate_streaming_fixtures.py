#!/usr/bin/python3
"""Chapter 09's reference numbers, computed by numpy:

- tests/golden/ch09_at_scale.numpy.txt: the start of the chapter's story, the online softmax
  worked by hand on scores [1, 3, 2, 5] with V = [[1, 0], [0, 1], [1, 1], [2, 1]] in blocks of
  two keys, and the direct softmax it must equal. The test ch09.numpy requires ch09_at_scale's
  stdout to begin with these lines, so those numbers are numpy's at the printed digits.

Run from anywhere with Debian's numpy:

    /usr/bin/python3 tests/data/generate_streaming_fixtures.py          # verify
    /usr/bin/python3 tests/data/generate_streaming_fixtures.py --write  # write after a change

The recurrence is written out here again from its definition, in float64, without the C++.
Without --write the script only checks, and exits 1 if the committed file differs.
"""
import pathlib
import sys

import numpy as np

from fixture_files import check_or_write

STORY = pathlib.Path(__file__).resolve().parent.parent / "golden" / "ch09_at_scale.numpy.txt"


def story():
    scores = np.array([1.0, 3.0, 2.0, 5.0])
    V = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, 1.0]])
    lines = [f"The online softmax by hand: scores {np.array_str(scores)}, V rows "
             "[1 0] [0 1] [1 1] [2 1], blocks of 2 keys", "",
             "after keys   m         l          O"]
    m, l, O = -np.inf, 0.0, np.zeros(2)
    for k0 in range(0, 4, 2):
        s = scores[k0:k0 + 2]
        m_new = max(m, s.max())
        alpha = np.exp(m - m_new)
        e = np.exp(s - m_new)
        l, O, m = alpha * l + e.sum(), alpha * O + e @ V[k0:k0 + 2], m_new
        lines.append(f"  {k0 + 1}, {k0 + 2}     {m:<8.6f}  {l:<9.6f}  [{O[0]:.6f}, {O[1]:.6f}]")
    out, lse = O / l, m + np.log(l)
    w = np.exp(scores - scores.max())
    direct = (w / w.sum()) @ V
    lines += ["", f"output O / l = [{out[0]:.6f}, {out[1]:.6f}], log-sum-exp m + log l = {lse:.6f}",
              f"direct softmax(scores) V = [{direct[0]:.6f}, {direct[1]:.6f}]"]
    return lines


def main():
    header = (f"# chapter 09's worked online softmax from numpy {np.__version__}, written by "
              "tests/data/generate_streaming_fixtures.py; ch09_at_scale's stdout begins with the "
              "lines below")
    sys.exit(0 if check_or_write(STORY, header + "\n" + "\n".join(story()) + "\n", "numpy") else 1)


if __name__ == "__main__":
    main()
