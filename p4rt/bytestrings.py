"""P4Runtime binary strings <-> integers of a given bit width.

The spec's canonical form is the shortest big-endian string (zero is one 0x00 byte), and that is
what we send. A receiver must accept any length as long as the value fits (P4Runtime 1.4.1,
section 8.3: a ``bit<9>`` value may come as ``\x00\x00\x05``, so clients written for an older,
narrower program keep working); an empty string, or a value with bits set beyond ``width``, is
OUT_OF_RANGE.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from p4rt.errors import Code, P4RuntimeError, invalid

__all__ = ["byte_width", "canonical", "padded", "to_int", "values_by_id"]


def byte_width(width: int) -> int:
    """Bytes of a full-width byte string for a ``width``-bit value (at least one)."""
    return max(1, (width + 7) // 8)


def padded(value: int, width: int) -> bytes:
    """``value`` as a full-width byte string: the form p4c writes into P4Info (initial
    default action arguments, serializable enum members)."""
    return value.to_bytes(byte_width(width), "big")


def to_int(data: bytes, width: int, what: str) -> int:
    """The value of a byte string received for a ``width``-bit field, whatever its length;
    ``what`` names the field in the OUT_OF_RANGE message."""
    if not data:
        raise P4RuntimeError(Code.OUT_OF_RANGE, f"{what}: empty bytestring")
    value = int.from_bytes(data, "big")
    if value >> width:
        raise P4RuntimeError(Code.OUT_OF_RANGE, f"{what}: value 0x{value:x} does not fit in {width} bits")
    return value


def canonical(value: int) -> bytes:
    """Shortest big-endian representation; zero is ``b"\\x00"``."""
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")


def values_by_id(infos: Mapping[int, Any], items: Iterable[tuple[int, bytes]], what: str,
                 kind: str) -> dict[int, int]:
    """Decode the ``(id, bytestring)`` pairs of action parameters or packet metadata against
    their P4Info descriptions (``infos``: id -> message with ``name`` and ``bitwidth``).

    P4Runtime names these by id, so the same three mistakes are possible everywhere: an id
    the P4Info does not have, one given twice, one left out. Each is INVALID_ARGUMENT.
    """
    values: dict[int, int] = {}
    for item_id, data in items:
        info = infos.get(item_id)
        if info is None:
            raise invalid(f"{what}: unknown {kind} id {item_id}")
        if item_id in values:
            raise invalid(f"{what}: {kind} {info.name} given twice")
        values[item_id] = to_int(data, info.bitwidth, f"{what} {kind} {info.name}")
    if len(values) != len(infos):  # every id in values is one of infos', once
        missing = [info.name for info_id, info in infos.items() if info_id not in values]
        raise invalid(f"{what}: missing {kind} {', '.join(missing)}")
    return values
