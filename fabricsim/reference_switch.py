"""The fast reference switch model: an output-queued switch in plain Python, NOT the P4 program.

Experiments run fabric.p4 on the p4switch device (fabricsim.fabric); this model is the one
non-P4 switch kept, as a fast reference for the NIC's transport tests and CC studies at many
Gb/s of simulated traffic per wall second. It does what the fabric program does to RoCEv2
traffic, at the fidelity the transport needs, in virtual time.

* Forwarding: exact IPv4 destination -> egress port (``add_route``), optionally rewriting
  the Ethernet addresses as a router would.
* Per-port egress queues, one per priority (priority from DSCP, strict priority, queue
  ``num_priorities - 1`` highest, as BMv2), drained at the port's link rate, tail drop at
  ``queue_capacity_bytes``.
* RED-style ECN marking at enqueue on ECN-capable packets (DCQCN's Kmin / Kmax / Pmax):
  mark probability 0 below Kmin, Pmax * (q - Kmin) / (Kmax - Kmin) between, 1 above Kmax.
* INT per p4src/include/INT_LAYOUT.md at dequeue: on RoCEv2 data packets (BTH opcodes of
  SEND / WRITE) the first switch is INT source (shim + INT-MD header + its
  hop, UDP dport 4791 -> 4792), later switches are transit (push one hop while the remaining
  hop count allows, else set the e bit); the packet leaves towards the host with its INT
  (sink set to forward INT to the host), so the receiving NIC can echo it for HPCC.
* PFC (802.1Qbb): bytes buffered per (ingress port, priority) above ``pfc_xoff_bytes`` send
  a pause (quanta 0xFFFF) out of that ingress port, refreshed while still above XON, and a
  resume (time 0) once below ``pfc_xon_bytes``; pause frames received from a neighbour stop
  the matching egress queues for the pause time.
"""

from __future__ import annotations

import random
import struct
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from fabricsim.engine import Simulator
from fabricsim.link import Link
from netbase import pfc
from netbase.ipv4 import set_checksum as set_ipv4_checksum
from nicmodel import int_md
from nicmodel.cc.base import HopInt
from nicmodel.roce import ETH_P_IPV4, OP_DATA, ROCE_UDP_PORT
from nicmodel.verbs import parse_ip


@dataclass
class SwitchConfig:
    """Switch knobs. Byte thresholds are per egress queue (ECN) or per ingress port and
    priority (PFC). Defaults: ECN from the DCQCN paper (Kmin 5 KB, Kmax 200 KB, Pmax 1 %),
    PFC XOFF/XON sized for 100 Gb/s links of a few microseconds."""

    switch_id: int = 1
    num_priorities: int = 8
    queue_capacity_bytes: int = 4 * 1024 * 1024
    ecn: bool = True
    kmin_bytes: int = 5 * 1024
    kmax_bytes: int = 200 * 1024
    pmax: float = 0.01
    int_enabled: bool = True
    int_max_hops: int = 5
    pfc: bool = False
    pfc_priorities: frozenset[int] = frozenset(range(8))
    pfc_xoff_bytes: int = 200 * 1024
    pfc_xon_bytes: int = 100 * 1024
    dscp_to_priority: dict[int, int] = field(default_factory=dict)  # default: dscp >> 3

    def validate(self) -> None:
        if not 1 <= self.num_priorities <= 8:
            raise ValueError("num_priorities must be 1..8")
        if not 0 <= self.kmin_bytes <= self.kmax_bytes:
            raise ValueError("ECN needs 0 <= kmin <= kmax")
        if not 0.0 <= self.pmax <= 1.0:
            raise ValueError("ECN pmax must be in [0, 1]")
        if self.pfc and not 0 <= self.pfc_xon_bytes < self.pfc_xoff_bytes:
            raise ValueError("PFC needs 0 <= xon < xoff")


@dataclass
class PortCounters:
    """One switch port: what its egress sent, marked and dropped, and its queue over time
    (peak and area, so the mean queue needs no sampling)."""

    tx_frames: int = 0
    tx_bytes: int = 0
    ecn_marked: int = 0
    drops: int = 0
    pauses_sent: int = 0
    resumes_sent: int = 0
    pauses_received: int = 0
    paused_ns: int = 0  # pause time of this egress summed over its priorities, fabric ns
    queue_peak_bytes: int = 0
    queue_area: int = 0  # integral of queued bytes over time (byte*ns), for the mean


@dataclass
class _Queued:
    frame: bytearray
    ingress_port: int
    priority: int
    ingress_ns: int


class _Port:
    def __init__(self, index: int, link: Link, num_priorities: int) -> None:
        self.index = index
        self.link = link
        self.queues: list[deque[_Queued]] = [deque() for _ in range(num_priorities)]
        self.queue_bytes = [0] * num_priorities
        self.total_bytes = 0
        self.control: deque[bytes] = deque()  # MAC control frames jump the data queues
        self.paused_until = [0] * num_priorities
        self.tx_scheduled = False
        self.counters = PortCounters()
        self.last_change_ns = 0
        # PFC state as ingress port: bytes buffered per priority, pause state
        self.ingress_bytes = [0] * pfc.PRIORITIES
        self.xoff_sent = [False] * pfc.PRIORITIES


class Switch:
    """An output-queued switch connected to ``Link``s (one transmit link per port)."""

    def __init__(self, sim: Simulator, config: SwitchConfig | None = None, seed: int = 1) -> None:
        self.sim = sim
        self.config = config or SwitchConfig()
        self.config.validate()
        self.mac = b"\x02\xfe\x00\x00\x00" + bytes([self.config.switch_id & 0xFF])  # PFC source
        self.rng = random.Random(seed)
        self.ports: dict[int, _Port] = {}
        self.routes: dict[bytes, tuple[int, bytes | None, bytes | None]] = {}
        self.malformed = 0
        self.unroutable = 0
        self.rx_frames = 0

    # -- wiring -------------------------------------------------------------------------
    def add_port(self, index: int, link: Link) -> None:
        """Port ``index`` transmits on ``link``; frames arriving on it go to ``receive``."""
        if index in self.ports:
            raise ValueError(f"port {index} already exists")
        self.ports[index] = _Port(index, link, self.config.num_priorities)

    def add_route(
        self, ipv4: str, port: int, dst_mac: bytes | None = None, src_mac: bytes | None = None
    ) -> None:
        if port not in self.ports:
            raise ValueError(f"route to unknown port {port}")
        self.routes[parse_ip(ipv4)] = (port, dst_mac, src_mac)

    def receiver(self, port: int) -> Callable[[bytes], None]:
        """The callable a link delivers frames arriving on ``port`` to."""
        return lambda frame: self.receive(port, frame)

    # -- ingress ------------------------------------------------------------------------
    def receive(self, in_port: int, frame: bytes) -> None:
        self.rx_frames += 1
        now = self.sim.now
        if len(frame) < 14:
            self.malformed += 1
            return
        ethertype = struct.unpack_from("!H", frame, 12)[0]
        if ethertype == pfc.ETH_P_MAC_CONTROL:
            self._on_pause(in_port, frame)
            return
        if ethertype != ETH_P_IPV4 or len(frame) < 34 or frame[14] >> 4 != 4:
            self.malformed += 1
            return
        route = self.routes.get(bytes(frame[30:34]))
        if route is None:
            self.unroutable += 1
            return
        out_port, dst_mac, src_mac = route
        port = self.ports[out_port]
        buf = bytearray(frame)
        if dst_mac is not None:
            buf[0:6] = dst_mac
        if src_mac is not None:
            buf[6:12] = src_mac
        dscp = buf[15] >> 2
        cfg = self.config
        prio = cfg.dscp_to_priority.get(dscp, dscp >> 3) % cfg.num_priorities
        size = len(buf)
        if port.queue_bytes[prio] + size > cfg.queue_capacity_bytes:
            port.counters.drops += 1
            return
        if cfg.ecn and buf[15] & 0x3 in (1, 2) and self._red_mark(port.queue_bytes[prio]):
            buf[15] |= 0x3
            set_ipv4_checksum(buf, 14)
            port.counters.ecn_marked += 1
        self._account(port, now)
        port.queues[prio].append(_Queued(buf, in_port, prio, now))
        port.queue_bytes[prio] += size
        port.total_bytes += size
        port.counters.queue_peak_bytes = max(port.counters.queue_peak_bytes, port.total_bytes)
        ingress = self.ports.get(in_port)
        if ingress is not None:
            ingress.ingress_bytes[prio] += size
            self._pfc_check(ingress, prio)
        self._kick(port)

    def _red_mark(self, qbytes: int) -> bool:
        cfg = self.config
        if qbytes <= cfg.kmin_bytes:
            return False
        if qbytes >= cfg.kmax_bytes:
            return True
        p = cfg.pmax * (qbytes - cfg.kmin_bytes) / max(1, cfg.kmax_bytes - cfg.kmin_bytes)
        return self.rng.random() < p

    # -- egress -------------------------------------------------------------------------
    def _kick(self, port: _Port) -> None:
        if not port.tx_scheduled:
            port.tx_scheduled = True
            self.sim.at(max(self.sim.now, port.link.busy_until), self._transmit, port)

    def _transmit(self, port: _Port) -> None:
        port.tx_scheduled = False
        now = self.sim.now
        if not port.link.idle_at(now):
            self._kick(port)
            return
        if port.control:
            port.link.transmit(port.control.popleft())
            self._kick(port)
            return
        for prio in range(len(port.queues) - 1, -1, -1):
            queue = port.queues[prio]
            if queue and port.paused_until[prio] <= now:
                break
        else:
            wake = [t for p, t in enumerate(port.paused_until) if port.queues[p] and t > now]
            if wake:  # everything queued is paused: look again when the first pause ends
                port.tx_scheduled = True
                self.sim.at(min(wake), self._transmit, port)
            return
        item = queue.popleft()
        self._account(port, now)
        size = len(item.frame)
        port.queue_bytes[prio] -= size
        port.total_bytes -= size
        ingress = self.ports.get(item.ingress_port)
        if ingress is not None:
            ingress.ingress_bytes[prio] -= size
            self._pfc_check(ingress, prio)
        frame = self._stamp(port, item, len(queue)) if self.config.int_enabled else bytes(item.frame)
        port.counters.tx_frames += 1
        port.counters.tx_bytes += len(frame)
        port.link.transmit(frame)
        if port.total_bytes or port.control:
            self._kick(port)

    def _stamp(self, port: _Port, item: _Queued, qdepth_after: int) -> bytes:
        """INT source/transit on SEND and WRITE packets; everything else passes unchanged."""
        frame = item.frame
        ihl = (frame[14] & 0x0F) * 4
        udp = 14 + ihl
        if frame[23] != 17 or len(frame) < udp + 9:
            return bytes(frame)
        dport = (frame[udp + 2] << 8) | frame[udp + 3]
        if not (dport == int_md.INT_UDP_PORT or (dport == ROCE_UDP_PORT and frame[udp + 8] in OP_DATA)):
            return bytes(frame)
        now = self.sim.now
        hop = HopInt(
            switch_id=self.config.switch_id,
            ingress_port=item.ingress_port,
            egress_port=port.index,
            hop_latency_us=(now - item.ingress_ns) // 1000,
            queue_id=item.priority,
            qdepth_pkts=qdepth_after,
            ingress_ts_us=(item.ingress_ns // 1000) & 0xFFFFFFFF,
            egress_ts_us=(now // 1000) & 0xFFFFFFFF,
            tx_bytes=port.counters.tx_bytes & 0xFFFFFFFF,  # egress_tx_bytes: 32 bits, wraps
            link_rate_mbps=int(port.link.config.rate_bps // 1_000_000),
        )
        try:
            return int_md.push_hop(bytes(frame), hop, self.config.int_max_hops)
        except ValueError:
            self.malformed += 1  # a bad INT stack from upstream: forward as it is
            return bytes(frame)

    def _account(self, port: _Port, now: int) -> None:
        """Integrate queued bytes over time (mean queue) before the queue changes."""
        port.counters.queue_area += port.total_bytes * (now - port.last_change_ns)
        port.last_change_ns = now

    # -- PFC ----------------------------------------------------------------------------
    def _pfc_check(self, ingress: _Port, prio: int) -> None:
        cfg = self.config
        if not cfg.pfc or prio not in cfg.pfc_priorities:
            return
        level = ingress.ingress_bytes[prio]
        if not ingress.xoff_sent[prio] and level >= cfg.pfc_xoff_bytes:
            ingress.xoff_sent[prio] = True
            self._send_pause(ingress, prio, 0xFFFF)
        elif ingress.xoff_sent[prio] and level <= cfg.pfc_xon_bytes:
            ingress.xoff_sent[prio] = False
            self._send_pause(ingress, prio, 0)

    def _send_pause(self, ingress: _Port, prio: int, quanta: int) -> None:
        ingress.control.append(pfc.build(self.mac, {prio: quanta}))
        if quanta:
            ingress.counters.pauses_sent += 1
            # refresh before the pause runs out while the ingress is still congested
            refresh = pfc.quanta_to_ns(quanta, ingress.link.config.rate_bps) // 2
            self.sim.after(refresh, self._pfc_refresh, ingress, prio)
        else:
            ingress.counters.resumes_sent += 1
        self._kick(ingress)

    def _pfc_refresh(self, ingress: _Port, prio: int) -> None:
        if ingress.xoff_sent[prio]:
            self._send_pause(ingress, prio, 0xFFFF)

    def _on_pause(self, in_port: int, frame: bytes) -> None:
        port = self.ports.get(in_port)
        try:
            parsed = pfc.parse(frame)
        except ValueError:
            parsed = None
        if port is None or parsed is None:
            self.malformed += 1
            return
        now = self.sim.now
        port.counters.pauses_received += 1
        for prio in parsed.enabled():
            if prio >= len(port.paused_until):
                continue
            until = now + pfc.quanta_to_ns(parsed.quanta[prio], port.link.config.rate_bps)
            if port.paused_until[prio] > now:
                port.counters.paused_ns -= port.paused_until[prio] - now  # replaced early
            port.counters.paused_ns += until - now
            port.paused_until[prio] = until
        self._kick(port)

    # -- observation --------------------------------------------------------------------
    def port_stats(self, index: int) -> dict[str, float]:
        port = self.ports[index]
        self._account(port, self.sim.now)
        c = port.counters
        now = max(1, self.sim.now)
        return {
            "tx_frames": c.tx_frames,
            "tx_bytes": c.tx_bytes,
            "ecn_marked": c.ecn_marked,
            "drops": c.drops,
            "pauses_sent": c.pauses_sent,
            "resumes_sent": c.resumes_sent,
            "pauses_received": c.pauses_received,
            "paused_ns": c.paused_ns,
            "queue_bytes": port.total_bytes,
            "queue_peak_bytes": c.queue_peak_bytes,
            "queue_mean_bytes": c.queue_area / now,
        }

    def total_drops(self) -> int:
        return sum(p.counters.drops for p in self.ports.values())
