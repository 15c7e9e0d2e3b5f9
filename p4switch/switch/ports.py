"""Switch ports: ``-i N@ifname`` as simple_switch takes it.

Each port is a :class:`netbase.packet_socket.PacketSocketPort` on the interface (the one
packet-socket port the live NIC uses too: safe open order, promiscuous, own transmissions
ignored, 802.1Q tags restored, kernel drops counted by reason).
"""

from __future__ import annotations

MAX_PORT = 510  # v1model ports are 9 bits and 511 is the drop port


def parse_interface(spec: str) -> tuple[int, str]:
    """``N@ifname`` -> (N, ifname), as simple_switch's ``-i`` takes it."""
    num, sep, name = spec.partition("@")
    if not sep or not name or not num.isdigit():
        raise ValueError(f"bad interface {spec!r}: expected PORT@IFNAME, e.g. 1@veth1")
    if int(num) > MAX_PORT:
        raise ValueError(f"bad interface {spec!r}: port numbers go from 0 to {MAX_PORT}")
    return int(num), name
