#!/usr/bin/python3
"""Chapter 11's tokenizer, computed again in plain Python: tests/data/bpe_merges.txt.

A byte-level BPE (attn/text/bpe.hpp) is trained here on tests/data/bpe_sample.txt to a
vocabulary of VOCAB_SIZE tokens, and a held-out text is split into pieces and encoded with it.
The file holds the merges in the order learned, the pieces and the ids; the C++ test
(tests/lib/text/bpe_test.cpp) trains on the same sample and must find the same, merge for merge.

Run from anywhere with Debian's Python:

    /usr/bin/python3 tests/data/generate_bpe_fixtures.py          # verify
    /usr/bin/python3 tests/data/generate_bpe_fixtures.py --write  # write after a change

Nothing here comes from the C++: the pieces come from a regular expression (the C++ scans byte
by byte), and training recounts every pair of every piece before each merge (the C++ keeps the
counts up to date). Without --write the script only checks, and exits 1 if the committed file
differs from what it computes.
"""
import collections
import pathlib
import re
import sys

from fixture_files import check_or_write

HERE = pathlib.Path(__file__).resolve().parent
SAMPLE = HERE / "bpe_sample.txt"
MERGES = HERE / "bpe_merges.txt"
VOCAB_SIZE = 512

# The held-out text: words of the sample and others, digits, punctuation, runs of whitespace,
# UTF-8, and bytes that are not UTF-8 at all (NUL, a control byte, 0xFF, a lone 0xC3).
HELD_OUT = (b"On the 3rd day  the miller's caf\xc3\xa9 opened:\tno wheat, no rye!\n\n"
            b"  \x00\x01 \xff\xfe\xc3 there, 1,204\r\n  sacks (of barley) ...thaw. \n")

# pretokenize() in bpe.hpp: an optional space, then letters (bytes 0x80 and up count as
# letters), or digits, or other non-whitespace bytes; else whitespace, less a last space that
# starts the next piece.
PIECE = re.compile(
    rb"[ ]?[A-Za-z\x80-\xff]+|[ ]?[0-9]+|[ ]?[^\sA-Za-z0-9\x80-\xff]+|\s+(?= \S)|\s+")


def pieces(text):
    found = PIECE.findall(text)
    assert b"".join(found) == text
    return found


def merge(tokens, pair, made):
    """Every occurrence of `pair` in `tokens` replaced by `made`, left to right."""
    out, i = [], 0
    while i < len(tokens):
        if tuple(tokens[i:i + 2]) == pair:
            out.append(made)
            i += 2
        else:
            out.append(tokens[i])
            i += 1
    return out


def train(text, vocab_size):
    """The merges, in order: each time the most frequent adjacent pair within the pieces, ties
    going to the smallest (left id, right id)."""
    counts = collections.Counter(pieces(text))
    words = {piece: list(piece) for piece in counts}
    merges = []
    while 256 + len(merges) < vocab_size:
        pairs = collections.Counter()
        for piece, tokens in words.items():
            for pair in zip(tokens, tokens[1:]):
                pairs[pair] += counts[piece]
        if not pairs:
            break
        best = min(pairs, key=lambda pair: (-pairs[pair], pair))
        made = 256 + len(merges)
        merges.append(best)
        words = {piece: merge(tokens, best, made) for piece, tokens in words.items()}
    return merges


def encode(text, merges):
    """GPT-2's rule: in each piece, merge the pair of lowest rank until none is a merge."""
    rank = {pair: k for k, pair in enumerate(merges)}
    ids = []
    for piece in pieces(text):
        tokens = list(piece)
        while len(tokens) > 1:
            ranked = [rank[pair] for pair in zip(tokens, tokens[1:]) if pair in rank]
            if not ranked:
                break
            k = min(ranked)
            tokens = merge(tokens, merges[k], 256 + k)
        ids += tokens
    return ids


def printable(data):
    """printable() in bpe.hpp: bytes as Python writes them between a bytes object's quotes."""
    named = {0x5C: "\\\\", 0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"}
    return "".join(named.get(b, chr(b) if 0x20 <= b <= 0x7E else f"\\x{b:02x}") for b in data)


def fixture():
    merges = train(SAMPLE.read_bytes(), VOCAB_SIZE)
    vocabulary = [bytes([b]) for b in range(256)]
    for left, right in merges:
        vocabulary.append(vocabulary[left] + vocabulary[right])
    ids = encode(HELD_OUT, merges)
    assert b"".join(vocabulary[i] for i in ids) == HELD_OUT
    lines = [
        "# A byte-level BPE trained in plain Python on tests/data/bpe_sample.txt, written by",
        "# tests/data/generate_bpe_fixtures.py. Lines: the vocabulary size; each merge as",
        "# `merge ID LEFT RIGHT \"BYTES\"` (BYTES as attn::text::printable writes them); the",
        "# held-out text in hexadecimal; its pieces in hexadecimal; its token ids.",
        f"vocab_size {256 + len(merges)}",
    ]
    for k, (left, right) in enumerate(merges):
        lines.append(f"merge {256 + k} {left} {right} \"{printable(vocabulary[256 + k])}\"")
    lines.append(f"text {HELD_OUT.hex()}")
    lines.append("pieces " + " ".join(piece.hex() for piece in pieces(HELD_OUT)))
    lines.append("ids " + " ".join(str(i) for i in ids))
    return "\n".join(lines) + "\n"


def main():
    sys.exit(0 if check_or_write(MERGES, fixture(), "the Python reference") else 1)


if __name__ == "__main__":
    main()
