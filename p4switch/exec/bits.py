"""Bit-level arithmetic of P4 values as Python ints.

Every ``bit<W>`` and ``int<W>`` value lives in the executor as a non-negative int already
masked to its width (two's complement for ``int<W>``), so that equality, table keys and
deparsing never need a conversion. Only the signed operations go through ``to_signed`` (the
generated code inlines the unsigned ones, e.g. ``|+|`` as ``min(a + b, mask)``).
"""

from __future__ import annotations


def to_signed(value: int, width: int) -> int:
    """The signed reading of a ``width``-bit two's complement pattern."""
    if width == 0:
        return 0
    value &= (1 << width) - 1
    return value - (1 << width) if value >> (width - 1) else value


def _saturate_s(r: int, width: int) -> int:
    """Clamp a signed result into ``int<width>`` and give its two's complement pattern."""
    hi = (1 << (width - 1)) - 1
    return max(-hi - 1, min(hi, r)) & ((1 << width) - 1)


def sat_add_s(a: int, b: int, width: int) -> int:
    """Saturating add (``|+|``) of two ``int<width>`` patterns, result as a pattern."""
    return _saturate_s(to_signed(a, width) + to_signed(b, width), width)


def sat_sub_s(a: int, b: int, width: int) -> int:
    """Saturating subtract (``|-|``) of two ``int<width>`` patterns."""
    return _saturate_s(to_signed(a, width) - to_signed(b, width), width)


def shr_s(a: int, b: int, width: int) -> int:
    """Arithmetic shift right of an ``int<width>`` pattern."""
    return (to_signed(a, width) >> min(b, width)) & ((1 << width) - 1)


def div_s(a: int, b: int, width: int) -> int:
    """Signed division truncating toward zero (P4 only allows it on constants, kept for
    completeness of the operator table)."""
    x, y = to_signed(a, width), to_signed(b, width)
    q = abs(x) // abs(y)
    return (q if (x < 0) == (y < 0) else -q) & ((1 << width) - 1)


def mod_s(a: int, b: int, width: int) -> int:
    x, y = to_signed(a, width), to_signed(b, width)
    r = abs(x) % abs(y)
    return (-r if x < 0 else r) & ((1 << width) - 1)


def bytes_of_bits(fields: list[tuple[int, int]]) -> bytes:
    """Concatenate (value, width) pairs MSB first and pad with zero bits to a whole byte at
    the end, the way BMv2 builds the input buffer of hashes and checksums."""
    acc = 0
    nbits = 0
    for value, width in fields:
        acc = (acc << width) | (value & ((1 << width) - 1))
        nbits += width
    pad = (-nbits) % 8
    acc <<= pad
    return acc.to_bytes((nbits + pad) // 8, "big")
