"""The IPv4 header checksum (RFC 791, computed as RFC 1071 describes): the one
implementation for the NIC's receive check, the simulated switch's ECN marking and the INT
source/transit that grows a packet. Each of them rewrites a header field and must leave a
header that a real host (and tshark) accepts."""

from __future__ import annotations

import struct

from librt.strings import read_i16_be

_CSUM = struct.Struct("!H")


def checksum(header: bytes | bytearray | memoryview) -> int:
    """Internet checksum of an IPv4 header, its checksum field included as it is: 0 for a
    header whose checksum is right, the value to store when the field holds 0."""
    return checksum_at(bytes(header), 0, len(header))


def checksum_at(frame: bytes, off: int, length: int) -> int:
    """``checksum`` of the ``length``-byte header at ``frame[off:]``, read in place: its
    16-bit words (librt's big-endian reads, compiled to C; signed, so masked back) summed, the
    carries folded back in twice (RFC 1071). A received frame's check costs ~720 instructions
    so, the call from the NIC's module included, where the header's slice read as one integer
    modulo 0xFFFF cost ~1,800."""
    total = 0
    for i in range(off, off + length, 2):
        total += int(read_i16_be(frame, i)) & 0xFFFF
    total = (total & 0xFFFF) + (total >> 16)
    total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def set_checksum(frame: bytearray, ip_off: int) -> None:
    """Recompute the checksum of the IPv4 header at ``frame[ip_off:]`` in place, after a
    field (ECN bits, total length) changed."""
    end = ip_off + (frame[ip_off] & 0x0F) * 4
    frame[ip_off + 10:ip_off + 12] = b"\0\0"
    _CSUM.pack_into(frame, ip_off + 10, checksum(frame[ip_off:end]))
