"""What the mypyc backend's generated code reads frames and writes headers with: checksum inputs
and headers in small-int chunks of the fields (``bit_chunks``), each exactly that slice of the
fields' bit string (zero-padded); headers written to a ``BytesWriter`` in big-endian words
(``word_writes``); fields read from the frame's words (``word_read``). The generated statements
run here as Python, with librt's word functions (the same ones mypyc compiles to C)."""

from __future__ import annotations

import random

import pytest
from librt.strings import BytesWriter, read_i16_be, read_i32_be, write_i16_be, write_i32_be

from p4switch.exec.codegen import bit_chunks, deparse_chunk_sizes, word_read, word_writes

LIBRT = {"read_i16_be": read_i16_be, "read_i32_be": read_i32_be, "write_i16_be": write_i16_be,
         "write_i32_be": write_i32_be}

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
def test_header_words_written_are_the_packed_fields(layout: list[tuple[str, int]]) -> None:
    rng = random.Random(7)
    total = sum(w for _, w in layout)
    nbytes = -(-total // 8)
    sizes = deparse_chunk_sizes(nbytes)
    assert sum(sizes) == 8 * nbytes
    writes = word_writes("out", bit_chunks(layout, sizes), sizes)
    for _ in range(300):
        values = {name: rng.getrandbits(w) for name, w in layout}
        packed = 0
        for name, w in layout:
            packed = packed << w | values[name]
        packed <<= nbytes * 8 - total
        out = BytesWriter()
        for line in writes:  # top bits set included: the words' sign handling
            exec(line, {**LIBRT, **values, "out": out})
        assert out.getvalue() == packed.to_bytes(nbytes)


@pytest.mark.parametrize("nbytes", range(1, 8))
@pytest.mark.parametrize("first", [0, 1, 3])
def test_word_read_is_the_big_endian_value_of_the_bytes(first: int, nbytes: int) -> None:
    rng = random.Random(first * 8 + nbytes)
    expr = word_read(first, nbytes)
    for _ in range(300):
        d = rng.randbytes(16)
        o = rng.randrange(0, 6)
        assert eval(expr, {**LIBRT, "d": d, "o": o}) == int.from_bytes(d[o + first:o + first + nbytes])
