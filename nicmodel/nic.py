"""The NIC: verbs entry points, frame dispatch, transmit scheduling, PFC obedience.

Sans-IO, like h11: the NIC never owns a socket and never reads a clock. A driver (the live
raw-socket driver, the simulated wire, a test) feeds it frames and the time, and asks it
for frames to put on the wire::

    nic.receive(frame, now_ns)           # every frame that arrives on the port
    frame = nic.poll_transmit(now_ns)    # one frame to send now, or None
    t = nic.next_wakeup(now_ns)          # when to call poll_transmit next (None: only
                                         #   after the next receive or post)

Timers (retransmission, congestion-control timers, RNR waits, pause expiry) fire inside
``poll_transmit`` and ``on_timer``; ``next_wakeup`` includes them, so a driver that sleeps
until ``next_wakeup``, then calls ``poll_transmit`` until it returns None, and does the same
after every ``receive`` and every post, runs the NIC exactly. ``poll_transmit`` returns at
most one frame per serialization time at ``line_rate_bps`` (frame + 24 bytes of preamble,
FCS and gap), picks control packets (ACK/NAK/CNP) before data, and serves the queue pair
that has been allowed to send for the longest (by pacing time from ``cc.rate_bps``, window
from ``cc.window_bytes`` and the in-flight cap, and PFC pause of its priority); QPs that
are ready together are served round robin. Scheduling costs O(log QPs) per packet.

All times are integer nanoseconds of fabric time.
"""

from __future__ import annotations

import dataclasses
import heapq
from collections import deque
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Final

from netbase import pfc
from netbase.ethernet import wire_time_ns
from nicmodel import roce
from nicmodel.actions import Actions
from nicmodel.cc.base import CongestionControl, LineRate
from nicmodel.counters import NicCounters
from nicmodel.qp import QueuePair
from nicmodel.roce import Malformed
from nicmodel.verbs import (
    Access,
    Completion,
    MemoryRegion,
    QpConfig,
    Reliability,
    VerbsError,
    parse_ip,
    parse_mac,
)

__all__ = ["Nic", "parse_mac", "parse_ip"]

# heapq's functions from module Finals: compiled, ``heapq.heappush`` is a look-up of the name in
# the module object at every call (a few a packet)
_heappush: Final = heapq.heappush
_heappop: Final = heapq.heappop


def _current(sched: tuple[int, int] | None, t: int, tag: int) -> bool:
    """A heap entry ``(t, tag, qp)`` is its queue pair's live one (``qp.sched_data`` or
    ``sched_timer``), not superseded: compared field by field, compiled, where comparing the
    tuples made one and went through the generic comparison."""
    return sched is not None and sched[0] == t and sched[1] == tag


class Nic:
    """One RoCEv2 RNIC port.

    ``cnp_interval_ns``: the notification point sends at most one CNP per QP per interval
    (DCQCN's 50 us). ``cnp_dscp``/``cnp_priority``: DSCP and PFC class of CNPs (None =
    the QP's priority). ``verify_icrc``: check the ICRC of received packets. ``max_mtu``:
    the largest IB MTU the port carries (an Ethernet MTU of 1500 fits 1024, 9000 fits 4096);
    queue pairs may not ask for more.

    ``roce_extensions``: whether the NIC may put this model's extensions on the wire (SACK
    and duplicate reports, INT echo: bytes after the AETH flagged in BTH reserved bits, see
    README "Our extensions to the ACK"). A hardware RNIC would not accept them. With False
    every frame is standard RoCEv2: selective-repeat queue pairs fall back to Go-Back-N (the
    standard PSN-sequence NAK) and HPCC, which needs the INT echo, is refused."""

    def __init__(self, mac: bytes | str, ip: bytes | str, line_rate_bps: float = 100e9, *,
                 cnp_interval_ns: int = 50_000, cnp_dscp: int = 48,
                 cnp_priority: int | None = None, verify_icrc: bool = True,
                 max_mtu: int = 4096, roce_extensions: bool = True) -> None:
        if line_rate_bps <= 0:
            raise VerbsError("line rate must be positive")
        if max_mtu not in (256, 512, 1024, 2048, 4096):
            raise VerbsError(f"max MTU {max_mtu} is not an IB MTU (256..4096)")
        if cnp_priority is not None and not 0 <= cnp_priority <= 7:
            raise VerbsError("CNP priority must be 0..7")
        if not 0 <= cnp_dscp <= 63 or cnp_interval_ns < 0:
            raise VerbsError("CNP DSCP must be 0..63 and the CNP interval >= 0")
        self.mac = parse_mac(mac)
        self.ip = parse_ip(ip)
        self.line_rate_bps = float(line_rate_bps)
        self.cnp_interval_ns = cnp_interval_ns
        self.cnp_dscp = cnp_dscp
        self.cnp_priority = cnp_priority
        self.verify_icrc = verify_icrc
        self.max_mtu = max_mtu
        self.roce_extensions = roce_extensions
        self.counters = NicCounters()
        self.now_ns = 0  # latest time the driver told us
        self._qps: dict[int, QueuePair] = {}
        # Scheduling is event-driven so that its cost does not grow with the number of QPs:
        # a heap of (time a QP may send next, tag, QP) and a heap of (time its next timer
        # fires, tag, QP). Each QP has at most one live entry per heap (``qp.sched_data`` /
        # ``qp.sched_timer`` hold its (time, tag)); superseded entries are skipped when popped.
        # Among QPs ready at the same time the earliest-queued goes first: round robin.
        self._data_heap: list[tuple[int, int, QueuePair]] = []
        self._timer_heap: list[tuple[int, int, QueuePair]] = []
        self._tag = 0  # the newest entry's tag (compiled, an int; ``itertools.count`` was a call)
        self._next_qpn = 0x11
        self._mrs: dict[int, MemoryRegion] = {}
        self._next_key = 0x100
        self._next_addr = 0x1_0000_0000
        self._cq: deque[Completion] = deque()
        self._ctrl: deque[QueuePair] = deque()
        self._port_free_ns = 0
        self._wire_ns: dict[int, int] = {}  # frame length -> its time on the port: a few sizes
        self._pause_until = [0] * pfc.PRIORITIES
        self._pause_start = [0] * pfc.PRIORITIES
        self._pause_acc = [0] * pfc.PRIORITIES

    # ------------------------------------------------------------------ verbs

    def register_mr(self, buffer: bytearray | bytes | None = None, *, length: int | None = None,
                    addr: int | None = None, access: Access = Access.ALL) -> MemoryRegion:
        """Register ``buffer`` (or, with ``length`` only, a sink region without storage)
        at virtual address ``addr`` (default: a fresh page-aligned address). The buffer must
        be a bytearray, which the NIC writes into; bytes are refused with a VerbsError."""
        if buffer is not None:
            if not isinstance(buffer, bytearray):
                raise VerbsError("a memory region's buffer must be a bytearray")
            length = len(buffer)
        elif length is None or length < 0:
            raise VerbsError("give a bytearray or a non-negative length")
        if addr is None:
            addr = self._next_addr
            self._next_addr += (length + 0xFFF) & ~0xFFF or 0x1000
        elif not 0 <= addr < 1 << 64:
            raise VerbsError("address must fit 64 bits")
        key = self._next_key
        self._next_key += 1
        mr = MemoryRegion(key, addr, length, buffer, access)
        self._mrs[key] = mr
        return mr

    def deregister_mr(self, mr: MemoryRegion) -> None:
        if self._mrs.pop(mr.rkey, None) is None:
            raise VerbsError(f"{mr!r} is not registered here")

    def mr_for_rkey(self, rkey: int) -> MemoryRegion | None:
        return self._mrs.get(rkey)

    @property
    def memory_regions(self) -> Mapping[int, MemoryRegion]:
        """Registered regions by rkey, read only (what a responder may write into)."""
        return MappingProxyType(self._mrs)

    def create_qp(self, config: QpConfig | None = None, cc: CongestionControl | None = None,
                  qpn: int | None = None) -> QueuePair:
        """A new RC queue pair (state RESET until :meth:`QueuePair.connect`). ``cc`` defaults
        to no congestion control (line rate)."""
        if qpn is None:
            while self._next_qpn in self._qps:
                self._next_qpn += 1
            qpn = self._next_qpn
            self._next_qpn += 1
        elif not 1 < qpn < 1 << 24 or qpn in self._qps:
            raise VerbsError(f"QPN {qpn} is reserved, out of range or in use")
        config = config or QpConfig()
        if config.mtu > self.max_mtu:
            raise VerbsError(f"QP MTU {config.mtu} exceeds the port's {self.max_mtu}")
        if not self.roce_extensions:
            if cc is not None and cc.name == "hpcc":
                raise VerbsError("HPCC needs the INT echo in ACKs, which standard RoCEv2 "
                                 "(roce_extensions=False) cannot carry")
            if config.reliability is Reliability.SELECTIVE_REPEAT:
                config = dataclasses.replace(config, reliability=Reliability.GO_BACK_N)
        qp = QueuePair(self, qpn, config, cc or LineRate(self.line_rate_bps))
        self._qps[qpn] = qp
        self.touch(qp)
        return qp

    def destroy_qp(self, qpn: int) -> None:
        qp = self._qps.pop(qpn, None)
        if qp is None:
            raise VerbsError(f"no QP {qpn}")
        qp.sched_data = qp.sched_timer = None
        if qp.in_ctrl:
            self._ctrl.remove(qp)
            qp.in_ctrl = False

    def qp(self, qpn: int) -> QueuePair:
        try:
            return self._qps[qpn]
        except KeyError:
            raise VerbsError(f"no QP {qpn}") from None

    @property
    def qps(self) -> Iterable[QueuePair]:
        return self._qps.values()

    def poll_cq(self, max_entries: int | None = None) -> list[Completion]:
        """Take up to ``max_entries`` completions (all when None), oldest first."""
        cq = self._cq
        if not cq:
            return []  # most polls (a driver polls after every frame)
        n = len(cq) if max_entries is None else min(max_entries, len(cq))
        return [cq.popleft() for _ in range(n)]

    # the doorbell of verbs posts, and what queue pairs' Actions ask for
    def complete(self, c: Completion) -> None:
        self._cq.append(c)

    def _apply(self, qp: QueuePair, out: Actions) -> None:
        """Do what a queue pair's event handler asked: queue its completions and schedule
        its control frame."""
        if out.completions:
            self._cq.extend(out.completions)
        if out.control:
            self.want_control(qp)

    def want_control(self, qp: QueuePair) -> None:
        """``qp`` has an ACK/NAK/CNP to send."""
        if not qp.in_ctrl:
            qp.in_ctrl = True
            self._ctrl.append(qp)

    def touch(self, qp: QueuePair) -> None:
        """Re-evaluate when ``qp`` may send and when its next timer fires; called after
        anything that can change either (posts, ACKs, sends, timers, pauses)."""
        if qp.qpn not in self._qps:
            return
        t = qp.send_ready_at(self.now_ns)
        if t is None:
            qp.sched_data = None
        else:
            pause = self._pause_until[qp.priority]
            if pause > t:
                t = pause
            cur = qp.sched_data
            if cur is None or cur[0] != t:
                tag = self._tag = self._tag + 1
                qp.sched_data = (t, tag)
                _heappush(self._data_heap, (t, tag, qp))
        t = qp.next_timer()
        if t is None:
            qp.sched_timer = None
        else:
            cur = qp.sched_timer
            if cur is None or cur[0] != t:
                tag = self._tag = self._tag + 1
                qp.sched_timer = (t, tag)
                _heappush(self._timer_heap, (t, tag, qp))

    # ------------------------------------------------------------------ driver: receive

    def receive(self, frame: bytes, now_ns: int) -> None:
        """Process one received frame. Bad frames are counted in ``counters.drops`` by
        reason and dropped; nothing raises."""
        self.now_ns = now_ns
        cnt = self.counters
        cnt.frames_received += 1
        if pfc.is_mac_control(frame):  # consumed by the MAC: PFC/PAUSE obeyed, others counted
            try:
                self._on_pause(pfc.parse(frame), now_ns)
            except ValueError:
                cnt.drops["bad_mac_control"] += 1
            return
        try:
            p = roce.parse(frame, self.mac, self.ip, self.verify_icrc)
        except Malformed as e:
            if e.reason in roce.HOST_STACK_REASONS:
                cnt.host_frames += 1
            else:
                cnt.drops[e.reason] += 1
            return
        qp = self._qps.get(p.dqpn)
        if qp is None:
            cnt.drops["bad_qpn"] += 1
            return
        if not qp.ready():
            cnt.drops["qp_not_ready"] += 1
            return
        if p.src_ip != qp.dest_ip:
            cnt.drops["wrong_source"] += 1
            return
        if (p.pkey & 0x7FFF) != (qp.config.pkey & 0x7FFF):
            cnt.drops["bad_pkey"] += 1
            return
        op = p.opcode
        try:
            if op in roce.OP_DATA:
                self._apply(qp, qp.on_data(p, now_ns))
            elif op == roce.Opcode.ACKNOWLEDGE:
                self._apply(qp, qp.on_ack(p, now_ns))
                self.touch(qp)
            else:
                qp.on_cnp(now_ns)
                self.touch(qp)
        except Malformed as e:
            cnt.drops[e.reason] += 1

    def _on_pause(self, f: pfc.PauseFrame, now_ns: int) -> None:
        """802.1Qbb: each enabled class is paused for its time from now (replacing any
        earlier pause); a time of 0 resumes it."""
        self.counters.pause_frames_received += 1
        for prio in f.enabled():
            self.counters.pause_frames_by_prio[prio] += 1
            until = now_ns + pfc.quanta_to_ns(f.quanta[prio], self.line_rate_bps)
            if self._pause_until[prio] > now_ns:  # still paused: the same interval goes on
                self._pause_until[prio] = until
            else:
                self._pause_acc[prio] += self._pause_until[prio] - self._pause_start[prio]
                self._pause_start[prio] = now_ns
                self._pause_until[prio] = until
        enabled = f.class_enable
        for qp in self._qps.values():
            if enabled >> qp.priority & 1:
                qp.sched_data = None  # its send time moves with the pause: reschedule
                self.touch(qp)

    def paused(self, priority: int, now_ns: int) -> bool:
        """Whether PFC holds ``priority`` at ``now_ns`` (nothing of that class may leave)."""
        return self._pause_until[priority] > now_ns

    def pause_ns(self, priority: int, now_ns: int) -> int:
        """Total time ``priority`` has been paused up to ``now_ns``."""
        start, until = self._pause_start[priority], self._pause_until[priority]
        return self._pause_acc[priority] + max(0, min(now_ns, until) - start)

    # ------------------------------------------------------------------ driver: transmit

    def on_timer(self, now_ns: int) -> None:
        """Fire every timer due at ``now_ns`` (also done by ``poll_transmit``)."""
        self.now_ns = now_ns
        heap = self._timer_heap
        due = []
        while heap and heap[0][0] <= now_ns:
            t, tag, qp = _heappop(heap)
            if _current(qp.sched_timer, t, tag):  # else superseded
                qp.sched_timer = None
                due.append(qp)
        for qp in due:  # each QP once per call, even if a timer re-arms itself for "now"
            self._apply(qp, qp.run_timers(now_ns))
            self.touch(qp)

    def poll_transmit(self, now_ns: int) -> bytes | None:
        """The next frame to put on the wire at ``now_ns``, or None (port busy, nothing
        allowed to go). Call it repeatedly until None."""
        timers = self._timer_heap
        if timers and timers[0][0] <= now_ns:
            self.on_timer(now_ns)
        else:
            self.now_ns = now_ns  # what on_timer does when nothing is due (most calls)
        if now_ns < self._port_free_ns:
            return None
        frame = self._next_control(now_ns) or self._next_data(now_ns)
        if frame is not None:
            self.counters.frames_sent += 1
            n = len(frame)
            wire = self._wire_ns.get(n)
            if wire is None:
                wire = self._wire_ns[n] = int(wire_time_ns(n, self.line_rate_bps))
            self._port_free_ns = now_ns + wire
        return frame

    def _next_control(self, now_ns: int) -> bytes | None:
        ctrl = self._ctrl
        for _ in range(len(ctrl)):
            qp = ctrl[0]
            if not qp.has_control() or not qp.ready():
                ctrl.popleft()
                qp.in_ctrl = False
                continue
            if self._pause_until[qp.control_priority()] > now_ns:
                ctrl.rotate(-1)
                continue
            frame = qp.next_control_frame()
            if not qp.has_control():
                ctrl.popleft()
                qp.in_ctrl = False
            return frame
        return None

    def _next_data(self, now_ns: int) -> bytes | None:
        heap = self._data_heap
        while heap and heap[0][0] <= now_ns:
            t, tag, qp = _heappop(heap)
            if not _current(qp.sched_data, t, tag):
                continue  # superseded
            qp.sched_data = None
            ready = qp.send_ready_at(now_ns)
            if ready is not None and ready <= now_ns and self._pause_until[qp.priority] <= now_ns:
                frame = qp.next_data_frame(now_ns)
            else:
                frame = None
            self.touch(qp)
            if frame is not None:
                return frame
        return None

    def next_wakeup(self, now_ns: int) -> int | None:
        """Earliest time at which ``poll_transmit`` may return a frame or a timer fires;
        None when only a received frame or a new post can create work."""
        best: int | None = None
        for qp in self._ctrl:
            if qp.has_control() and qp.ready():
                t = max(self._port_free_ns, self._pause_until[qp.control_priority()])
                if best is None or t < best:
                    best = t
        heap = self._data_heap
        while heap and not _current(heap[0][2].sched_data, heap[0][0], heap[0][1]):
            _heappop(heap)
        if heap:
            t = max(heap[0][0], self._port_free_ns)
            if best is None or t < best:
                best = t
        heap = self._timer_heap
        while heap and not _current(heap[0][2].sched_timer, heap[0][0], heap[0][1]):
            _heappop(heap)
        if heap and (best is None or heap[0][0] < best):
            best = heap[0][0]
        return best

    # ------------------------------------------------------------------ observability

    def stats(self, now_ns: int) -> dict:
        """NIC and per-QP counters as plain data (for JSON export)."""
        d = self.counters.as_dict()
        d["pause_ns"] = [self.pause_ns(p, now_ns) for p in range(pfc.PRIORITIES)]
        d["qps"] = {qp.qpn: qp.counters.as_dict() for qp in self._qps.values()}
        return d
