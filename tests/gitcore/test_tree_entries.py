"""A tree's entries read as stored, strictly: the quick reader gives what the entry-by-entry
reader gives, every well-formed tree read whole, every malformed one refused, whatever
byte is wrong."""

from __future__ import annotations

import random

import pytest

from git_checkpoint.gitcore.formats import raw_entries, strict_entries


def _tree(rng: random.Random, count: int) -> bytes:
    modes = [b"100644", b"100755", b"120000", b"40000", b"160000", b"0100644"]
    out = b""
    for n in range(count):
        name = bytes(rng.choice(b"abc .\n\xff\\") for _ in range(rng.randint(1, 6)))
        oid = bytes(rng.randrange(256) for _ in range(20))  # may hold NULs, spaces, slashes
        out += rng.choice(modes) + b" " + name + str(n).encode() + b"\0" + oid
    return out


def test_a_well_formed_tree_is_read_entry_by_entry() -> None:
    rng = random.Random(7)
    for _ in range(300):
        raw = _tree(rng, rng.randint(0, 12))
        assert raw_entries(raw) == strict_entries(raw)


@pytest.mark.parametrize("seed", range(4))
def test_any_byte_changed_or_cut_reads_as_the_strict_parser_reads_it(seed: int) -> None:
    rng = random.Random(seed)
    refused = 0
    for _ in range(2000):
        raw = bytearray(_tree(rng, rng.randint(1, 6)))
        at = rng.randrange(len(raw))
        how = rng.randrange(3)
        if how == 0:
            raw[at] = rng.choice(b"/\0 x7")
        elif how == 1:
            del raw[at:]
        else:
            del raw[at]
        try:
            want: object = strict_entries(bytes(raw))
        except ValueError as exc:
            want = type(exc)
            refused += 1
        try:
            got: object = raw_entries(bytes(raw))
        except ValueError as exc:
            got = type(exc)
        assert got == want, bytes(raw)
    assert refused > 500  # the damage reaches the parser's refusals, not only names
