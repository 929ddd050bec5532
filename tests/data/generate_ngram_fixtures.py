#!/usr/bin/python3
"""Reference numbers for the byte n-gram models (lib/text/include/attn/text/ngram.hpp), computed
here by direct counting, without any of the C++:

- tests/data/ngram_fixtures.txt: for n = 1 to 5, trained on tests/data/ngram_sample.txt up to
  its last blank line, the discounts D_1 ... D_n, the bits per byte of the training text and of
  the held-out text (the last paragraph, after the blank line), and the probabilities of a few
  (context, next byte) pairs, all as exact hexadecimal doubles for tests/lib/text/ngram_test.cpp.

Run from anywhere with Debian's python3 (numpy only for fixture_files):

    /usr/bin/python3 tests/data/generate_ngram_fixtures.py          # verify
    /usr/bin/python3 tests/data/generate_ngram_fixtures.py --write  # write after a change

The model is interpolated Kneser-Ney with one discount per order (Chen & Goodman, 1998), as the
header states it: the top order n counts occurrences of each n-gram; each lower order k counts,
for each k-gram, the distinct bytes seen before it; each order's discount is
D = max(m1, 1) / (max(m1, 1) + 2 m2) from the number m_r of k-grams counted r times; order 0 is
uniform over the 256 bytes; a context never seen passes the lower order on. Byte i of a text is
scored with the min(i, n - 1) bytes before it. Without --write the script only checks, and exits
1 if the committed file differs, so running it never changes a file by accident.
"""
import math
import pathlib
import sys
from collections import Counter

from fixture_files import check_or_write, hex_block

HERE = pathlib.Path(__file__).resolve().parent
SAMPLE = HERE / "ngram_sample.txt"
FIXTURES = HERE / "ngram_fixtures.txt"

# (context, next byte). The test (tests/lib/text/ngram_test.cpp) asks the same, in this order.
QUERIES = [
    (b"", ord("e")),           # no context: P_1
    (b"th", ord("e")),         # a common continuation
    (b"the s", ord("e")),      # a context longer than a small model reads
    (b" the", 0xFF),           # a byte never seen: the uniform floor, passed up every order
    (b"zq", ord("x")),         # a context never seen
    (b"caf", 0xC3),            # the first byte of the "é" of "café"
    (b"e s", ord("h")),        # seen, but rarely
    (b"\n", ord("t")),         # after a line break
]


class KneserNey:
    """Interpolated Kneser-Ney, counted directly from the text with dictionaries of bytes."""

    def __init__(self, order, text):
        self.n = order
        # occurrences[k]: how often each k-gram occurs in the text
        occurrences = {k: Counter(text[i:i + k] for i in range(len(text) - k + 1))
                       for k in range(1, order + 2)}
        # count[k]: c_k of each k-gram, k = 1 ... n
        self.count = {order: dict(occurrences[order])}
        for k in range(1, order):
            continuations = Counter()
            for longer in occurrences[k + 1]:  # each distinct (k+1)-gram a + g, once
                continuations[longer[1:]] += 1
            self.count[k] = dict(continuations)
        # the totals of each context h: c_k(h .) and N1+(h .)
        self.total, self.distinct, self.discount = {}, {}, {}
        for k in range(1, order + 1):
            total, distinct = Counter(), Counter()
            for gram, c in self.count[k].items():
                total[gram[:-1]] += c
                distinct[gram[:-1]] += 1 if c > 0 else 0
            self.total[k], self.distinct[k] = total, distinct
            m1 = max(sum(1 for c in self.count[k].values() if c == 1), 1)
            m2 = sum(1 for c in self.count[k].values() if c == 2)
            self.discount[k] = m1 / (m1 + 2 * m2)

    def p(self, k, h, w):
        """P_k(w | h), h being the k - 1 bytes before w."""
        if k == 0:
            return 1 / 256
        lower = self.p(k - 1, h[1:], w)
        total = self.total[k].get(h, 0)
        if total == 0:
            return lower
        c = self.count[k].get(h + bytes([w]), 0)
        D = self.discount[k]
        return (max(c - D, 0) + D * self.distinct[k][h] * lower) / total

    def probability(self, context, w):
        h = context[len(context) - min(len(context), self.n - 1):]
        return self.p(len(h) + 1, h, w)

    def bits_per_byte(self, text):
        bits = 0.0
        for i in range(len(text)):
            bits -= math.log2(self.probability(text[max(i - (self.n - 1), 0):i], text[i]))
        return bits / len(text)


def values():
    training, held_out = SAMPLE.read_bytes().rsplit(b"\n\n", 1)
    lines = []
    for n in range(1, 6):
        model = KneserNey(n, training)
        total = sum(model.probability(b"the s", w) for w in range(256))
        assert abs(total - 1) < 1e-12, (n, total)
        lines += hex_block(f"discounts n={n}", [[model.discount[k] for k in range(1, n + 1)]])
        lines += hex_block(f"bits per byte training n={n}", [[model.bits_per_byte(training)]])
        lines += hex_block(f"bits per byte held-out n={n}", [[model.bits_per_byte(held_out)]])
        lines += hex_block(f"probabilities n={n}",
                           [[model.probability(h, w) for h, w in QUERIES]])
    return lines


def main():
    header = ["# interpolated Kneser-Ney byte n-gram models trained on ngram_sample.txt, "
              "written by tests/data/generate_ngram_fixtures.py",
              "# probabilities, in this order: " + ", ".join(
                  f"P({w:#04x} | {h!r})" for h, w in QUERIES)]
    ok = check_or_write(FIXTURES, "\n".join(header + values()) + "\n", "python")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
