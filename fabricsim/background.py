"""Best-effort background traffic in virtual time: the simulator's counterpart of the TCP
(iperf3) traffic a live mixed-traffic run sends between Mininet hosts.

A ``BackgroundFlow`` sends TCP segments (IPv4 protocol 6, DSCP 0: the fabric classifies
them to priority 0, best effort, where no PFC is enabled) from one host to another. It
is deliberately simple: it fills whatever its host's uplink leaves free, up to a fraction
of the line rate, and is loss-tolerant: segments the switches drop on priority 0 are gone
(the receiver counts the sequence gaps) and nothing is resent, so no pause and no
retransmission ever comes from it. The host's uplink serves its RoCE NIC first and the
background only when the NIC has nothing to send, as an RNIC schedules the RoCE traffic
class above the host's TCP.

The receiving host (``BackgroundSink``) takes the segments before its NIC sees them (the
kernel's share of the interface) and keeps their arrival times, so a report can say how
much the background got while the RoCE workload ran and after it.
"""

from __future__ import annotations

import bisect
import struct
from dataclasses import dataclass, field

from netbase.ipv4 import set_checksum
from nicmodel.verbs import parse_mac

ETH_HLEN = 14
IP_HLEN = 20
TCP_HLEN = 20
IP_PROTO_TCP = 6
SEGMENT_BYTES = 1460  # TCP payload of a 1500-byte IP MTU, as iperf3 sends on Ethernet
SOURCE_PORT = 40000
IPERF_PORT = 5201


def _ip(text: str) -> bytes:
    return bytes(int(x) for x in text.split("."))


def is_background(frame: bytes) -> bool:
    """A TCP segment over IPv4 (untagged): background traffic, not the RoCE NIC's."""
    return len(frame) >= ETH_HLEN + IP_HLEN and frame[12:14] == b"\x08\x00" and frame[23] == IP_PROTO_TCP


@dataclass
class BackgroundFlow:
    """One best-effort sender from ``src`` to ``dst`` between ``start_ns`` and ``stop_ns``,
    at most ``rate_bps``; frames addressed to the sender's gateway (the leaf routes on IP)."""

    src: str
    dst: str
    src_mac: str
    gateway_mac: str
    src_ip: str
    dst_ip: str
    rate_bps: float
    start_ns: int
    stop_ns: int
    sport: int = SOURCE_PORT
    seq: int = 0
    segments_sent: int = 0
    bytes_sent: int = 0
    _next_ns: int = 0
    _template: bytearray = field(default_factory=bytearray)

    def __post_init__(self) -> None:
        if not 0 < self.rate_bps < float("inf") or self.stop_ns <= self.start_ns:
            raise ValueError("a background flow needs a positive rate and must stop after it starts")
        self._next_ns = self.start_ns
        total = IP_HLEN + TCP_HLEN + SEGMENT_BYTES
        eth = parse_mac(self.gateway_mac) + parse_mac(self.src_mac) + b"\x08\x00"
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, 0, 0x4000, 64, IP_PROTO_TCP, 0,
                         _ip(self.src_ip), _ip(self.dst_ip))
        tcp = struct.pack("!HHIIBBHHH", self.sport, IPERF_PORT, 0, 0, TCP_HLEN // 4 << 4, 0x18, 65535, 0, 0)
        self._template = bytearray(eth + ip + tcp + bytes(SEGMENT_BYTES))

    def next_wakeup(self, now_ns: int) -> int | None:
        """When the next segment may leave (None: the flow is over)."""
        return None if max(self._next_ns, now_ns) >= self.stop_ns else max(self._next_ns, now_ns)

    def poll_transmit(self, now_ns: int) -> bytes | None:
        """The next segment if it is due now, else None."""
        if now_ns < self._next_ns or self._next_ns >= self.stop_ns or now_ns >= self.stop_ns:
            return None
        frame = self._template
        struct.pack_into("!H", frame, ETH_HLEN + 4, self.segments_sent & 0xFFFF)  # IP id
        set_checksum(frame, ETH_HLEN)
        struct.pack_into("!I", frame, ETH_HLEN + IP_HLEN + 4, self.seq & 0xFFFFFFFF)
        self.seq += SEGMENT_BYTES
        self.segments_sent += 1
        self.bytes_sent += SEGMENT_BYTES
        # paced at rate_bps of IP bytes: a fill at the line rate never waits for this
        self._next_ns = max(self._next_ns, now_ns) + round(len(frame) * 8e9 / self.rate_bps)
        return bytes(frame)


@dataclass
class BackgroundSink:
    """What one host received of background flows: per sender, arrival times and the
    cumulative payload bytes, and the segments lost on the way (sequence gaps)."""

    times: dict[str, list[int]] = field(default_factory=dict)
    cum_bytes: dict[str, list[int]] = field(default_factory=dict)
    expected: dict[str, int] = field(default_factory=dict)
    lost: dict[str, int] = field(default_factory=dict)

    def receive(self, frame: bytes, now_ns: int) -> None:
        src = ".".join(str(b) for b in frame[ETH_HLEN + 12:ETH_HLEN + 16])
        seq = struct.unpack_from("!I", frame, ETH_HLEN + IP_HLEN + 4)[0]
        payload = len(frame) - ETH_HLEN - IP_HLEN - TCP_HLEN
        exp = self.expected.get(src, 0)
        if seq > exp:
            self.lost[src] = self.lost.get(src, 0) + (seq - exp) // SEGMENT_BYTES
        self.expected[src] = max(exp, seq + payload)
        times = self.times.setdefault(src, [])
        cum = self.cum_bytes.setdefault(src, [])
        times.append(now_ns)
        cum.append((cum[-1] if cum else 0) + payload)

    def bytes_between(self, src_ip: str, t0_ns: int, t1_ns: int) -> int:
        """Payload bytes from ``src_ip`` that arrived in [t0_ns, t1_ns)."""
        times, cum = self.times.get(src_ip, []), self.cum_bytes.get(src_ip, [])

        def upto(t: int) -> int:
            i = bisect.bisect_left(times, t)
            return cum[i - 1] if i else 0

        return upto(t1_ns) - upto(t0_ns)
