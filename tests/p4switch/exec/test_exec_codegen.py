"""``codegen.bit_chunks``: the mypyc backend packs headers and checksum inputs in small-int
chunks (headers with one ``struct`` format); each chunk must be exactly that slice of the
fields' bit string (zero-padded)."""

from __future__ import annotations

import random
import struct

import pytest

from p4switch.exec.codegen import bit_chunks, deparse_chunk_format, deparse_chunk_sizes

LAYOUTS = [
    [("a", 4), ("b", 4), ("c", 8), ("d", 3), ("e", 13)],  # IPv4-like: fields inside and across bytes
    [("a", 1), ("b", 70), ("c", 5)],  # a field wider than a machine word, 76 bits: padded
    [("a", 48)],
    [("a", 3)],
]


@pytest.mark.parametrize("size", [8, 16])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_chunks_are_the_slices_of_the_packed_fields(layout: list[tuple[str, int]], size: int) -> None:
    rng = random.Random(size)
    total = sum(w for _, w in layout)
    padded = -(-total // size) * size
    exprs = bit_chunks(layout, size)
    assert len(exprs) == padded // size
    for _ in range(300):
        values = {name: rng.getrandbits(w) for name, w in layout}
        packed = 0
        for name, w in layout:
            packed = packed << w | values[name]
        packed <<= padded - total
        want = [packed >> (padded - size * (i + 1)) & ((1 << size) - 1) for i in range(padded // size)]
        assert [eval(e, {}, values) for e in exprs] == want


@pytest.mark.parametrize("layout", LAYOUTS)
def test_chunks_of_listed_sizes_as_the_deparser_packs(layout: list[tuple[str, int]]) -> None:
    rng = random.Random(7)
    total = sum(w for _, w in layout)
    nbytes = -(-total // 8)
    sizes = deparse_chunk_sizes(nbytes)
    exprs = bit_chunks(layout, sizes)
    for _ in range(300):
        values = {name: rng.getrandbits(w) for name, w in layout}
        packed = 0
        for name, w in layout:
            packed = packed << w | values[name]
        packed <<= nbytes * 8 - total
        got = struct.pack(">" + deparse_chunk_format(nbytes), *(eval(e, {}, values) for e in exprs))
        assert got == packed.to_bytes(nbytes)
