"""Frames fabric.p4 receives and sends, for its STF generator and PTF suite.

Standard formats come from scapy (Ethernet/IPv4/UDP, RoCEv2 BTH, 802.1Qbb); the INT layout
(p4src/include/INT_LAYOUT.md) and the telemetry report (p4src/README.md) are packed here with
``struct``, independently of the P4 code they check.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from scapy.contrib.mac_control import MACControlClassBasedFlowControl
from scapy.contrib.roce import BTH
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

ROCE_PORT = 4791
INT_PORT = 4792
REPORT_PORT = 32766
PFC_DST = "01:80:c2:00:00:01"
OP_WRITE_ONLY = 0x0A
OP_ACK = 0x11
OP_CNP = 0x81
DSCP_ROCE = 26
ECT0 = 2
HOP_BYTES = 32
_HOP = struct.Struct("!IHHIIIIII")
_MD = struct.Struct("!IHHHH")
_REPORT = struct.Struct("!BBHIII")


def roce(src_ip: str = "10.0.1.1", dst_ip: str = "10.0.2.2", *, sport: int = 49152, dqpn: int = 0x11,
         psn: int = 0, opcode: int = OP_WRITE_ONLY, dscp: int = DSCP_ROCE, ecn: int = ECT0,
         src_mac: str = "00:00:00:00:01:01", dst_mac: str = "02:00:00:00:00:01", ttl: int = 64,
         payload: bytes = b"\x00" * 32) -> bytes:
    """A RoCEv2 frame (UDP checksum 0, as RoCEv2 NICs send it)."""
    pkt = (Ether(src=src_mac, dst=dst_mac) / IP(src=src_ip, dst=dst_ip, tos=(dscp << 2) | ecn, ttl=ttl)
           / UDP(sport=sport, dport=ROCE_PORT, chksum=0) / BTH(opcode=opcode, dqpn=dqpn, psn=psn) / payload)
    return bytes(pkt)


def udp(src_ip: str = "10.0.1.1", dst_ip: str = "10.0.2.2", *, sport: int = 1234, dport: int = 80,
        dscp: int = 0, ecn: int = 0, src_mac: str = "00:00:00:00:01:01", dst_mac: str = "02:00:00:00:00:01",
        ttl: int = 64, payload: bytes = b"fabric-test-data") -> bytes:
    pkt = (Ether(src=src_mac, dst=dst_mac) / IP(src=src_ip, dst=dst_ip, tos=(dscp << 2) | ecn, ttl=ttl)
           / UDP(sport=sport, dport=dport) / payload)
    return bytes(pkt)


def routed(frame: bytes, src_mac: str, dst_mac: str, ecn: int | None = None) -> bytes:
    """``frame`` as the switch forwards it: next-hop MACs, TTL - 1, [ECN], IPv4 checksum."""
    pkt = Ether(frame)
    pkt[Ether].src = src_mac
    pkt[Ether].dst = dst_mac
    pkt[IP].ttl -= 1
    if ecn is not None:
        pkt[IP].tos = (pkt[IP].tos & 0xFC) | ecn
    del pkt[IP].chksum
    return bytes(pkt)


@dataclass(frozen=True)
class Hop:
    """One INT hop record (INT_LAYOUT.md, 8 words)."""

    switch_id: int
    ingress_port: int
    egress_port: int
    hop_latency: int = 0
    queue_id: int = 0
    queue_occupancy: int = 0
    ingress_tstamp: int = 0
    egress_tstamp: int = 0
    egress_tx_bytes: int = 0
    egress_link_rate: int = 0

    def pack(self) -> bytes:
        return _HOP.pack(self.switch_id, self.ingress_port, self.egress_port, self.hop_latency,
                         (self.queue_id << 24) | self.queue_occupancy, self.ingress_tstamp,
                         self.egress_tstamp, self.egress_tx_bytes, self.egress_link_rate)

    @classmethod
    def unpack(cls, data: bytes) -> Hop:
        sw, ip, ep, lat, q, its, ets, tx, rate = _HOP.unpack(data[:HOP_BYTES])
        return cls(sw, ip, ep, lat, q >> 24, q & 0xFFFFFF, its, ets, tx, rate)


@dataclass(frozen=True)
class IntStack:
    remaining_hop_cnt: int
    hops: list[Hop]
    e: int = 0
    udp_dport: int = ROCE_PORT
    m: int = 0  # MTU exceeded: a hop had no room for its record


def _udp_offset(frame: bytes) -> int:
    return 14 + (frame[14] & 0x0F) * 4


def _fix_lengths(frame: bytearray, grow: int) -> None:
    ip = 14
    total = struct.unpack_from("!H", frame, ip + 2)[0] + grow
    struct.pack_into("!H", frame, ip + 2, total)
    u = _udp_offset(bytes(frame))
    struct.pack_into("!H", frame, u + 4, struct.unpack_from("!H", frame, u + 4)[0] + grow)
    struct.pack_into("!H", frame, ip + 10, 0)
    ihl = (frame[ip] & 0x0F) * 4
    s = sum(struct.unpack(f"!{ihl // 2}H", bytes(frame[ip:ip + ihl])))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    struct.pack_into("!H", frame, ip + 10, ~s & 0xFFFF)


def with_int(frame: bytes, stack: IntStack) -> bytes:
    """``frame`` (plain RoCEv2) carrying ``stack``: shim, INT-MD header and hops after UDP,
    UDP dport 4792, IPv4/UDP lengths grown and the IPv4 checksum recomputed."""
    out = bytearray(frame)
    u = _udp_offset(frame)
    words = 3 + 8 * len(stack.hops)
    shim = bytes([0x10 | 0x04, words]) + struct.pack("!H", stack.udp_dport)
    word0 = (2 << 28) | (stack.e << 26) | (stack.m << 25) | (8 << 8) | stack.remaining_hop_cnt
    md = _MD.pack(word0, 0xFF00, 0, 0x0AF1, 0)
    body = shim + md + b"".join(h.pack() for h in stack.hops)
    out[u + 8:u + 8] = body
    struct.pack_into("!H", out, u + 2, INT_PORT)
    _fix_lengths(out, len(body))
    return bytes(out)


def parse_int(frame: bytes) -> IntStack | None:
    """The INT stack of a frame with UDP dport 4792, else None."""
    u = _udp_offset(frame)
    if struct.unpack_from("!H", frame, u + 2)[0] != INT_PORT:
        return None
    shim = u + 8
    words = frame[shim + 1]
    udp_dport = struct.unpack_from("!H", frame, shim + 2)[0]
    word0 = struct.unpack_from("!I", frame, shim + 4)[0]
    nhops = (words - 3) // 8
    first = shim + 16
    hops = [Hop.unpack(frame[first + i * HOP_BYTES:]) for i in range(nhops)]
    return IntStack(word0 & 0xFF, hops, (word0 >> 26) & 1, udp_dport, m=(word0 >> 25) & 1)


def pfc(src_mac: str, priority: int, quanta: int) -> bytes:
    """An 802.1Qbb frame for one priority (quanta 0 = resume), 60 bytes."""
    fields = {f"c{priority}_enabled": 1, f"c{priority}_pause_time": quanta}
    return bytes(Ether(dst=PFC_DST, src=src_mac) / MACControlClassBasedFlowControl(**fields))


def parse_pfc(frame: bytes) -> tuple[int, list[int]] | None:
    """(class-enable vector, 8 pause times) of a PFC frame as scapy dissects it, else None."""
    pkt = Ether(frame)
    if MACControlClassBasedFlowControl not in pkt:
        return None
    body = pkt[MACControlClassBasedFlowControl]
    vector = sum(getattr(body, f"c{c}_enabled") << c for c in range(8))
    return vector, [getattr(body, f"c{c}_pause_time") for c in range(8)]


@dataclass(frozen=True)
class Report:
    """Telemetry report header (p4src/README.md) and the inner frame it carries."""

    hop_count: int
    switch_id: int
    seq_no: int
    ingress_tstamp: int
    inner: bytes


def parse_report(frame: bytes) -> Report | None:
    pkt = Ether(frame)
    if UDP not in pkt or pkt[UDP].dport != REPORT_PORT:
        return None
    body = bytes(pkt[UDP].payload)
    verkind, hops, _, sw, seq, ts = _REPORT.unpack(body[:16])
    if verkind != 0x11:
        return None
    return Report(hops, sw, seq, ts, body[16:])


def report(inner: bytes, *, hop_count: int, switch_id: int, seq_no: int, ingress_tstamp: int, src_mac: str,
           dst_mac: str, src_ip: str, dst_ip: str) -> bytes:
    """A telemetry report around ``inner`` (the frame as the sink received it, INT including the
    sink's hop, cut after the BTH)."""
    header = _REPORT.pack(0x11, hop_count, 0, switch_id, seq_no, ingress_tstamp)
    pkt = (Ether(src=src_mac, dst=dst_mac) / IP(src=src_ip, dst=dst_ip, ttl=64, id=0, flags=0)
           / UDP(sport=REPORT_PORT, dport=REPORT_PORT, chksum=0) / (header + inner))
    return bytes(pkt)
