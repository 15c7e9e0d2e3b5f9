"""The IPv4 header checksum (RFC 791, computed as RFC 1071 describes): the one
implementation for the NIC's receive check, the simulated switch's ECN marking and the INT
source/transit that grows a packet. Each of them rewrites a header field and must leave a
header that a real host (and tshark) accepts."""

from __future__ import annotations

import struct

_WORDS_20 = struct.Struct("!10H")  # the option-less header: the per-packet case, kept fast
_CSUM = struct.Struct("!H")


def checksum(header: bytes | bytearray | memoryview) -> int:
    """Internet checksum of an IPv4 header, its checksum field included as it is: 0 for a
    header whose checksum is right, the value to store when the field holds 0."""
    s = sum(_WORDS_20.unpack(header) if len(header) == 20
            else struct.unpack(f"!{len(header) // 2}H", header))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def set_checksum(frame: bytearray, ip_off: int) -> None:
    """Recompute the checksum of the IPv4 header at ``frame[ip_off:]`` in place, after a
    field (ECN bits, total length) changed."""
    end = ip_off + (frame[ip_off] & 0x0F) * 4
    frame[ip_off + 10:ip_off + 12] = b"\0\0"
    _CSUM.pack_into(frame, ip_off + 10, checksum(frame[ip_off:end]))
