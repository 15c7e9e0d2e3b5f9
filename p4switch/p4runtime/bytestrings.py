"""P4Runtime binary strings <-> integers of a given bit width.

The spec's canonical form is the shortest big-endian string (zero is one 0x00 byte); servers
must also accept strings padded to the full ``ceil(width / 8)`` bytes, which many clients send.
Anything longer than that, empty, or with bits set beyond ``width`` is INVALID_ARGUMENT.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from p4switch.p4info.model import byte_width
from p4switch.p4info.model import padded_bytes as padded  # the full-width form, shared with P4Info
from p4switch.p4runtime.errors import invalid

__all__ = ["canonical", "padded", "to_int", "values_by_id"]


def to_int(data: bytes, width: int, what: str) -> int:
    """The value of a byte string sent for a ``width``-bit field; ``what`` names the field
    in the INVALID_ARGUMENT message."""
    if not data:
        raise invalid(f"{what}: empty bytestring")
    if len(data) > byte_width(width):
        raise invalid(f"{what}: {len(data)} bytes is too long for bitwidth {width}")
    value = int.from_bytes(data, "big")
    if value >> width:
        raise invalid(f"{what}: value 0x{value:x} does not fit in {width} bits")
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
    missing = [info.name for info_id, info in infos.items() if info_id not in values]
    if missing:
        raise invalid(f"{what}: missing {kind} {', '.join(missing)}")
    return values
