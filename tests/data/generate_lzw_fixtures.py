#!/usr/bin/python3
"""Chapter 11's LZW streams, written by a plain Python encoder: tests/data/lzw_streams.txt.

attn::kjv::unlzw() (chapters/11_small_gpt/kjv.hpp) decodes the streams of Unix `compress`
that Debian's bible.data holds. This script encodes known texts the way `compress -b 16`
writes them, and the C++ test (tests/chapters/11_small_gpt/kjv_test.cpp) must decode each
stream to its text, byte for byte. The format, as compress 4.x writes it:

- codes start 9 bits wide and grow by one bit, up to 16, when the next free code no longer
  fits; they are packed least significant bit first;
- codes go out in groups of eight (n_bits bytes of n_bits-bit codes); when the width changes
  or the dictionary is cleared, the group being written is padded to its full n_bits bytes;
- block mode: code 256 clears the dictionary and the first free code is 257. compress clears
  only when its dictionary is full and the ratio drops; this encoder can also clear wherever it
  is told to (CLEAR_AT), which the format allows and every decoder follows.

Each stream is checked against another decoder before it is written: `gzip -dc` decodes it,
given the 3-byte header 1F 9D 90 (the magic, then block mode and 16 bits), and must give the
text back.

Run from anywhere with Debian's Python:

    /usr/bin/python3 tests/data/generate_lzw_fixtures.py          # verify
    /usr/bin/python3 tests/data/generate_lzw_fixtures.py --write  # write after a change
    /usr/bin/python3 tests/data/generate_lzw_fixtures.py --bible  # print bible.data's numbers

Without --write the script only checks, and exits 1 if the committed file differs from what it
computes (or if gzip disagrees with the encoder).
"""
import pathlib
import subprocess
import sys

from fixture_files import check_or_write

HERE = pathlib.Path(__file__).resolve().parent
STREAMS = HERE / "lzw_streams.txt"

FIRST_WIDTH, LAST_WIDTH = 9, 16
CLEAR, FIRST_FREE = 256, 257
HEADER = bytes([0x1F, 0x9D, 0x80 | LAST_WIDTH])  # compress's magic; block mode, 16 bits


class Groups:
    """compress's output(): codes packed LSB first into groups of eight codes."""

    def __init__(self):
        self.out = bytearray()
        self.group = 0       # the bits of the group being filled
        self.group_bits = 0  # how many
        self.width = FIRST_WIDTH

    def code(self, code):
        assert 0 <= code < (1 << self.width), (code, self.width)
        self.group |= code << self.group_bits
        self.group_bits += self.width
        if self.group_bits == 8 * self.width:  # eight codes: a whole group
            self.out += self.group.to_bytes(self.width, "little")
            self.group, self.group_bits = 0, 0

    def new_width(self, width):
        """A width change or a clear: the group so far goes out padded to n_bits bytes."""
        if self.group_bits > 0:
            self.out += self.group.to_bytes(self.width, "little")
        self.group, self.group_bits = 0, 0
        self.width = width

    def end(self):
        """The last codes, in as few bytes as hold them (not padded to a group)."""
        self.out += self.group.to_bytes((self.group_bits + 7) // 8, "little")
        self.group, self.group_bits = 0, 0
        return bytes(self.out)


def compress(text, clear_at=()):
    """compress's LZW of `text`, without the 3-byte header, and the codes written with their
    widths. For each input position in `clear_at`, the first time a string is written at or
    after it the dictionary is cleared instead of growing (what compress's cl_block() does when
    its dictionary is full)."""
    pending = sorted(clear_at)
    out = Groups()
    codes = []  # every code written, with its width, for the record
    if not text:
        return out.end(), codes
    table = {}  # (prefix code, byte) -> code
    free = FIRST_FREE

    def output(code):
        codes.append((code, out.width))
        out.code(code)
        # compress checks after writing: the next code needs more bits if free > maxcode.
        if out.width < LAST_WIDTH and free > (1 << out.width) - 1:
            out.new_width(out.width + 1)

    entry = text[0]
    for i in range(1, len(text)):
        byte = text[i]
        if (entry, byte) in table:
            entry = table[(entry, byte)]
            continue
        output(entry)
        if pending and i >= pending[0]:
            pending.pop(0)
            table.clear()
            free = FIRST_FREE
            codes.append((CLEAR, out.width))
            out.code(CLEAR)
            out.new_width(FIRST_WIDTH)
        elif free < (1 << LAST_WIDTH):
            table[(entry, byte)] = free
            free += 1
        entry = byte
    output(entry)
    return out.end(), codes


def gzip_decodes(stream):
    """What `gzip -dc` makes of the stream behind compress's header."""
    return subprocess.run(["gzip", "-dc"], input=HEADER + stream, capture_output=True,
                          check=True).stdout


def lcg_bytes(seed, count, alphabet):
    """Bytes drawn from `alphabet` by a 64-bit linear congruential generator (Knuth's MMIX
    constants), so that the texts need no library whose output could change."""
    state, out = seed, bytearray()
    for _ in range(count):
        state = (6364136223846793005 * state + 1442695040888963407) % (1 << 64)
        out.append(alphabet[(state >> 33) % len(alphabet)])
    return bytes(out)


WORDS = (b"In the beginning God created the heaven and the earth. And the earth was without "
         b"form, and void; and darkness was upon the face of the deep. And the Spirit of God "
         b"moved upon the face of the waters. And God said, Let there be light: and there was "
         b"light.\n")

# (name, text, input positions to clear at, what the case is for)
CASES = [
    ("empty", b"", (), "no code at all"),
    ("one_byte", b"A", (), "one 9-bit code in a 2-byte stream"),
    ("tobeornot", b"TOBEORNOTTOBEORTOBEORNOT", (), "the textbook example: codes 257 and up"),
    ("kwkwk_run", b"a" * 40, (), "a run of one byte: every code is the one being defined"),
    ("kwkwk_pair", b"abababababababab", (), "abab...: the KwKwK case after a pair"),
    ("every_byte", bytes(range(256)) + bytes(range(255, -1, -1)), (),
     "NUL, 0x7F and 0x80-0xFF are bytes like any other; the last code is 10 bits wide"),
    ("genesis_9_10_11", WORDS * 12, (),
     "English, repeated: past 511 and 1023 entries, so 9-, 10- and 11-bit codes"),
    ("random_to_12_bits", lcg_bytes(11, 3000, bytes(range(256))), (),
     "random bytes: about one code per byte, up to 12 bits"),
    ("clear_at_9_bits", b"abcabcabcabc" + b"aaaaaaa" + b"abcabcabc", (12,),
     "a clear while codes are 9 bits wide, then a KwKwK run right after it"),
    ("clear_at_10_and_11_bits", lcg_bytes(5, 2600, b"abcdefghijklmnop \n"), (700, 2000),
     "clears while codes are 10 and 11 bits wide: each pads its group, then 9 bits again"),
]


def fixture():
    lines = [
        "# LZW streams as Unix compress writes them (9 to 16-bit codes, block mode, no 3-byte",
        "# header), written by tests/data/generate_lzw_fixtures.py and each decoded by gzip -dc",
        "# before it was written. Per case: `case NAME`, a comment saying what it is for,",
        "# `widths` (the code widths the encoder wrote), `text HEX` (the decoded bytes) and",
        "# `stream HEX` (the compressed bytes); an empty field is written as `-`.",
    ]
    for name, text, clear_at, purpose in CASES:
        stream, codes = compress(text, clear_at)
        decoded = gzip_decodes(stream)
        if decoded != text:
            sys.exit(f"{name}: gzip -dc decodes the stream to {len(decoded)} bytes, not the "
                     f"{len(text)} of its text")
        clears = [width for code, width in codes if code == CLEAR]
        assert len(clears) == len(clear_at), name
        widths = sorted({width for _, width in codes})
        lines += [f"case {name}", f"# {purpose}; {len(codes)} code{'' if len(codes) == 1 else 's'}"
                  + (f", clears at widths {clears}" if clears else ""),
                  f"widths {' '.join(str(w) for w in widths) or '-'}",
                  f"text {text.hex() or '-'}", f"stream {stream.hex() or '-'}"]
    return "\n".join(lines) + "\n"


def bible(path="/usr/lib/bible.data"):
    """--bible: the numbers kjv_test.cpp expects of Debian's bible.data, decoded by gzip -dc
    window by window (the header: 84 bytes, a big-endian window count at byte 88, then the
    windows' start offsets and the end of the last)."""
    data = pathlib.Path(path).read_bytes()
    windows = int.from_bytes(data[88:92], "big")
    offsets = [int.from_bytes(data[92 + 4 * w:96 + 4 * w], "big") for w in range(windows + 1)]
    text = b"".join(gzip_decodes(data[offsets[w]:offsets[w + 1]]) for w in range(windows))
    fnv = 0xCBF29CE484222325
    for byte in text:
        fnv = ((fnv ^ byte) * 0x100000001B3) % (1 << 64)
    lines = text.split(b"\n")
    print(f"{path}: {windows} windows, {len(text)} bytes, FNV-1a 0x{fnv:016x}")
    print(f"line 0: {lines[0]!r}\nline 1: {lines[1]!r}\nlast line: {lines[-2]!r}")


def main():
    if "--bible" in sys.argv[1:]:
        bible()
        return
    sys.exit(0 if check_or_write(STREAMS, fixture(), "the Python encoder") else 1)


if __name__ == "__main__":
    main()
