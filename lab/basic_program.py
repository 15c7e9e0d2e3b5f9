"""The basic L3 program (``lab/programs/basic.p4``) and what it does to a packet, in one
place for the PTF suite, the switch tests, the Mininet demo and the switch benchmark."""

from __future__ import annotations

from pathlib import Path

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

BASIC_P4 = Path(__file__).resolve().parent / "programs" / "basic.p4"
SWITCH_MAC = "00:00:00:00:aa:01"
TABLE = "BasicIngress.ipv4_lpm"
FORWARD = "BasicIngress.ipv4_forward"
TO_CPU = "BasicIngress.send_to_cpu"
PORT_COUNTER = "BasicIngress.port_rx"
QDEPTH_REGISTER = "BasicEgress.enq_qdepth_seen"
CPU_PORT = 255


def udp_frame(dst_ip: str, payload: bytes = b"hello p4switch!!", ttl: int = 64, src_mac: str = "00:00:00:00:01:01") -> Ether:
    return (Ether(dst=SWITCH_MAC, src=src_mac) / IP(src="10.0.1.1", dst=dst_ip, ttl=ttl)
            / UDP(sport=1234, dport=80) / payload)


def routed(frame: Ether | bytes, next_hop_mac: str) -> Ether:
    """What basic.p4 sends for ``frame``: MACs rewritten, TTL decremented, checksum recomputed."""
    pkt = Ether(bytes(frame))
    pkt[Ether].src = pkt[Ether].dst
    pkt[Ether].dst = next_hop_mac
    pkt[IP].ttl -= 1
    del pkt[IP].chksum
    return Ether(bytes(pkt))
