"""P4Runtime binary strings <-> integers of a given bit width.

The spec's canonical form is the shortest big-endian string (zero is one 0x00 byte); servers
must also accept strings padded to the full ``ceil(width / 8)`` bytes, which many clients send.
Anything longer than that, empty, or with bits set beyond ``width`` is INVALID_ARGUMENT.
"""

from __future__ import annotations

from p4switch.p4runtime.errors import invalid


def nbytes(width: int) -> int:
    return max(1, (width + 7) // 8)


def to_int(data: bytes, width: int, what: str) -> int:
    if not data:
        raise invalid(f"{what}: empty bytestring")
    if len(data) > nbytes(width):
        raise invalid(f"{what}: {len(data)} bytes is too long for bitwidth {width}")
    value = int.from_bytes(data, "big")
    if value >> width:
        raise invalid(f"{what}: value 0x{value:x} does not fit in {width} bits")
    return value


def canonical(value: int) -> bytes:
    """Shortest big-endian representation; zero is ``b"\\x00"``."""
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")


def padded(value: int, width: int) -> bytes:
    """Full-width representation (used inside packet headers and P4Info defaults)."""
    return value.to_bytes(nbytes(width), "big")
