"""The IPv4 header checksum (RFC 791, computed as RFC 1071 describes): the one
implementation for the NIC's receive check, the simulated switch's ECN marking and the INT
source/transit that grows a packet. Each of them rewrites a header field and must leave a
header that a real host (and tshark) accepts."""

from __future__ import annotations

import struct

_CSUM = struct.Struct("!H")


def checksum(header: bytes | bytearray | memoryview) -> int:
    """Internet checksum of an IPv4 header, its checksum field included as it is: 0 for a
    header whose checksum is right, the value to store when the field holds 0.

    The one's complement sum of the 16-bit words is the header read as one integer modulo
    0xFFFF (2**16 is 1 modulo 0xFFFF), except that a non-zero sum folds to 0xFFFF, not 0:
    one big-integer remainder where summing the unpacked words cost ~4,500 instructions."""
    whole = int.from_bytes(header)
    s = whole % 0xFFFF
    if s == 0 and whole:
        s = 0xFFFF
    return ~s & 0xFFFF


def set_checksum(frame: bytearray, ip_off: int) -> None:
    """Recompute the checksum of the IPv4 header at ``frame[ip_off:]`` in place, after a
    field (ECN bits, total length) changed."""
    end = ip_off + (frame[ip_off] & 0x0F) * 4
    frame[ip_off + 10:ip_off + 12] = b"\0\0"
    _CSUM.pack_into(frame, ip_off + 10, checksum(frame[ip_off:end]))
