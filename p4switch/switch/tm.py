"""Traffic manager: the egress queues between ingress and egress, as BMv2's simple_switch has.

Sans-IO: the caller feeds it packets with :meth:`TrafficManager.enqueue` and the current fabric
time, takes packets out with :meth:`TrafficManager.pop` when they may leave, reports the bytes
actually sent with :meth:`TrafficManager.transmitted`, and sleeps until
:meth:`TrafficManager.next_event_ns`. No clock or socket inside, so a manual clock makes every
queue decision reproducible.

BMv2 semantics kept here:
- per egress port ``priority_queues`` queues (``--priority-queues``, default 1); the v1model
  ``priority`` field p selects queue p, queue N-1 is served first (strict priority); a priority
  >= N is dropped, as simple_switch does ("Priority out of range");
- capacity in packets per queue (default 64), tail drop;
- service rate in packets/s per queue (``set_queue_rate``), unlimited by default;
- ``enq_qdepth`` is the port's queue occupancy (packets, all its queues) when the packet
  arrives, before it is added; ``deq_qdepth`` the occupancy left behind when it leaves;
  ``enq_timestamp`` and ``deq_timedelta`` are microseconds (the device's
  ``timestamp_unit_ns`` may choose another unit).
Our additions: a port rate in bits/s (a serializer: a port is busy for the wire time of each
frame it sends, ``WIRE_OVERHEAD_BYTES`` included), MAC-level PFC pause of queues (pfc.py) with
its watchdog, and counters.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from mypy_extensions import i64

from netbase.ethernet import WIRE_OVERHEAD_BYTES
from p4switch.exec.pipeline import QueueMeta
from p4switch.exec.runtime import DROP_PORT
from p4switch.switch.pfc import ClassState, PfcPort, WatchdogConfig

# v1model's port numbers (9 bits): the ports the per-frame paths find by index in a list
# (``TrafficManager._at``, ``Device._counts``) where a dict look-up of a boxed port number cost
# ~110 instructions, six a packet-hop; a port beyond them is looked up in the dict
PORT_NUMBERS: Final = DROP_PORT + 1

DEFAULT_CAPACITY = 64
MAX_PRIORITY_QUEUES = 8
# Speed used to turn pause quanta into time on a port with no rate set (the fabric's scale).
DEFAULT_NOMINAL_SPEED_BPS = 100e9


class Departure(QueueMeta):
    """A packet in a queue of the traffic manager, made when it is queued, and what leaves:
    ``pop`` fills in its dequeue fields and the ``QueueMeta`` fields the egress pipeline reads
    in BMv2 units (``enq_timestamp``, ``enq_qdepth``, ``deq_timedelta``, ``deq_qdepth``), so it
    is passed to egress as it is. (A tuple queued and a Departure made from it at the dequeue
    were two objects a packet and its ints boxed in between.)
    A plain class, not a dataclass: compiled (``netbase.hotpath``), a dataclass keeps the
    interpreted ``__init__`` the dataclasses module writes, 3,600 instructions a packet."""

    __slots__ = ("port", "queue", "item", "length", "enq_ns", "deq_ns", "deq_qbytes")

    def __init__(self, port: int, queue: int, item: Any, length: int, enq_ns: int, enq_qdepth: int) -> None:
        self.port = port
        self.queue = queue
        self.item = item
        self.length = length
        self.enq_ns = enq_ns
        self.enq_qdepth = enq_qdepth  # packets in the port's queues ahead of this one
        # set by pop: when it left, the packets and bytes (frame lengths) left behind it in the
        # port's queues, and enq_ns and the queueing time in the timestamps' unit (the device's
        # timestamp_unit_ns); fields, not properties: egress reads both for every packet
        self.deq_ns = 0
        self.deq_qdepth = 0
        self.deq_qbytes = 0
        self.enq_timestamp = 0
        self.deq_timedelta = 0


def _pace(next_allowed: int, now: int, interval_ns: int) -> int:
    """Next time a paced resource is free after serving at ``now``. Late wake-ups within one
    interval keep the long-run rate (no credit beyond one interval accumulates when idle)."""
    if now - next_allowed < interval_ns:
        return next_allowed + interval_ns
    return now + interval_ns


@dataclass(slots=True)
class EgressQueue:
    """One priority queue of a port: its packets, BMv2-style limits and its counters."""

    capacity: int = DEFAULT_CAPACITY
    rate_pps: float | None = None
    items: deque[Departure] = field(default_factory=deque)
    # the deque's append and popleft bound once (compiled, a deque's method is called by name,
    # looked up on its type each time: ~250 instructions a packet each)
    push: Callable[[Departure], None] = field(init=False, repr=False, compare=False)
    take: Callable[[], Departure] = field(init=False, repr=False, compare=False)
    next_allowed: int = 0
    # when the queue last became non-empty (ns), -1 while it is empty: as an ``int | None`` the
    # time was boxed, an object made and freed, by every packet that found the queue empty
    nonempty_since: int = -1
    enqueued: int = 0
    dequeued: int = 0
    dropped_full: int = 0
    dropped_watchdog: int = 0
    max_depth: int = 0

    def __post_init__(self) -> None:
        self.push = self.items.append
        self.take = self.items.popleft

    def busy_since(self) -> int | None:
        """When the queue became non-empty, None while it is empty (what the PFC watchdog reads)."""
        return None if self.nonempty_since < 0 else self.nonempty_since


@dataclass(slots=True)
class EgressPort:
    """A port's queues and transmitter; ``backlog`` is kept up to date because BMv2's queue
    depth metadata is the port's occupancy and is read for every packet."""

    queues: list[EgressQueue]
    number: int = 0  # the port's number
    rate_bps: float | None = None
    busy_until: int = 0
    pfc: PfcPort = field(default_factory=PfcPort)
    tx_frames: int = 0
    tx_bytes: int = 0
    backlog: int = 0  # packets in all queues of the port
    backlog_bytes: int = 0  # their frame lengths
    # bit p set while queue p holds a packet: pop and next_event_ns look at those queues only,
    # highest priority first, instead of walking all eight for every departure
    ready: int = 0
    armed: bool = False  # a PFC watchdog is configured on some class


class TrafficManager:
    """Every egress port's queues. Ports appear on first use, with the defaults that
    all-port settings (``port=None``) last set, so a rate set before a port exists applies."""

    def __init__(
        self,
        priority_queues: int = 1,
        capacity: int = DEFAULT_CAPACITY,
        nominal_speed_bps: float = DEFAULT_NOMINAL_SPEED_BPS,
    ) -> None:
        if not 1 <= priority_queues <= MAX_PRIORITY_QUEUES:
            raise ValueError(f"priority queues must be 1..{MAX_PRIORITY_QUEUES}, got {priority_queues}")
        self.priority_queues = priority_queues
        self.timestamp_unit_ns = 1000  # of the queueing metadata's timestamps (Device sets it)
        self.nominal_speed_bps = nominal_speed_bps
        self._default_capacity = [capacity] * priority_queues
        self._default_rate: list[float | None] = [None] * priority_queues
        self.ports: dict[int, EgressPort] = {}
        self._by_number: list[EgressPort | None] = [None] * PORT_NUMBERS  # the same, by index
        self.dropped_bad_priority = 0
        # Packets already queued when a watchdog declares a storm: the enqueue that accepted
        # them returned True, so only this switch-wide count makes them show up in the totals.
        self.dropped_watchdog_flush = 0
        # port service order, rotated for fairness between ports: the ports themselves, not their
        # numbers (a dict look-up of each port a departure walks past)
        self._rr: list[EgressPort] = []
        # Packets queued on all ports, and ports with a PFC watchdog armed: with neither,
        # pop and next_event_ns have nothing to look at (most calls, in a lightly loaded fabric).
        self._backlog = 0
        self._armed_ports = 0

    # ---- configuration -------------------------------------------------------------------
    def port(self, port: int) -> EgressPort:
        p = self.ports.get(port)
        if p is None:
            p = EgressPort([EgressQueue(capacity=c, rate_pps=r) for c, r in zip(self._default_capacity, self._default_rate)],
                           port)
            self.ports[port] = p
            self._rr.append(p)
            if 0 <= port < PORT_NUMBERS:
                self._by_number[port] = p
        return p

    def _at(self, port: int) -> EgressPort:
        """``port(port)``, for the per-frame paths: by index where it can be."""
        if 0 <= port < PORT_NUMBERS:
            p = self._by_number[port]
            if p is not None:
                return p
        return self.port(port)

    def _targets(self, port: int | None, priority: int | None) -> Iterable[tuple[EgressQueue | None, int]]:
        if priority is not None and not 0 <= priority < self.priority_queues:
            raise ValueError(f"priority {priority} out of range (0..{self.priority_queues - 1})")
        prios = range(self.priority_queues) if priority is None else [priority]
        ports = list(self.ports.values()) if port is None else [self.port(port)]
        for pr in prios:
            if port is None:
                yield None, pr  # the default for ports created later
            for p in ports:
                yield p.queues[pr], pr

    def set_queue_rate(self, rate_pps: float | None, port: int | None = None, priority: int | None = None) -> None:
        """Service rate of queues in packets/s (None or 0 = unlimited); all ports if ``port`` is None."""
        if rate_pps is not None and rate_pps < 0:
            raise ValueError("queue rate must not be negative")
        self._configure("rate_pps", self._default_rate, rate_pps or None, port, priority)

    def set_queue_depth(self, packets: int, port: int | None = None, priority: int | None = None) -> None:
        """Capacity of queues in packets; all ports if ``port`` is None."""
        if packets < 0:
            raise ValueError("queue depth must not be negative")
        self._configure("capacity", self._default_capacity, packets, port, priority)

    def _configure(self, attr: str, defaults: list[Any], value: Any, port: int | None, priority: int | None) -> None:
        """Set ``attr`` of the targeted queues; with ``port`` None also the default of later ports."""
        for q, pr in self._targets(port, priority):
            if q is None:
                defaults[pr] = value
            else:
                setattr(q, attr, value)

    def set_port_rate(self, port: int, rate_bps: float | None) -> None:
        """Link rate of a port's transmitter in bits/s (None or 0 = unlimited)."""
        if rate_bps is not None and rate_bps < 0:
            raise ValueError("port rate must not be negative")
        self.port(port).rate_bps = rate_bps or None

    def set_watchdog(self, port: int, cls: int | None, config: WatchdogConfig | None) -> None:
        """Arm (or with None disarm) the PFC watchdog of one class or all classes of a port."""
        p = self.port(port)
        classes = p.pfc.classes
        for c in range(len(classes)) if cls is None else [cls]:
            st = classes[c]
            st.watchdog = config
            if config is None:
                st.storm = False
        p.armed = any(st.watchdog is not None for st in classes)
        self._armed_ports = sum(other.armed for other in self.ports.values())

    # ---- data path -----------------------------------------------------------------------
    def enqueue(self, port: int, priority: int, item: Any, length: int, now: int) -> bool:
        """Queue a packet for ``port``; False when it is dropped (tail drop, bad priority,
        or a queue whose PFC watchdog drops)."""
        if not 0 <= priority < self.priority_queues:
            self.dropped_bad_priority += 1
            return False
        p = self._at(port)
        if p.armed:
            self._watchdog(p, now)
        q = p.queues[priority]
        st = p.pfc.classes[priority]
        if st.storm and st.watchdog is not None and st.watchdog.action == "drop":
            q.dropped_watchdog += 1
            return False
        depth = len(q.items)
        if depth >= q.capacity:
            q.dropped_full += 1
            return False
        q.push(Departure(port, priority, item, length, now, p.backlog))
        p.ready |= 1 << priority
        p.backlog += 1
        p.backlog_bytes += length
        self._backlog += 1
        if q.nonempty_since < 0:
            q.nonempty_since = now
        q.enqueued += 1
        if depth >= q.max_depth:
            q.max_depth = depth + 1
        return True

    def pop(self, now: int) -> Departure | None:
        """One packet that may leave now (ports served round-robin), or None. A port sends
        from its highest-priority queue that has a packet, is not rate-limited now and whose
        class PFC does not pause (a storm the watchdog declared ignores the pause)."""
        if not self._backlog and not self._armed_ports:
            return None
        rr = self._rr
        for i, p in enumerate(rr):
            if p.armed:
                self._watchdog(p, now)
            ready = p.ready
            if not ready or p.busy_until > now:
                continue
            classes = p.pfc.classes
            queues = p.queues
            while ready:  # the non-empty queues, highest priority first
                pr = ready.bit_length() - 1
                q = queues[pr]
                if q.next_allowed <= now:
                    st = classes[pr]
                    if st.paused_until <= now or st.storm:  # ClassState.blocks, inline (per packet)
                        break
                ready ^= 1 << pr
            else:
                continue
            rr.append(rr.pop(i))
            dep = q.take()
            p.backlog -= 1
            p.backlog_bytes -= dep.length
            self._backlog -= 1
            q.dequeued += 1
            if not q.items:
                q.nonempty_since = -1
                p.ready ^= 1 << pr
            if q.rate_pps:
                q.next_allowed = _pace(q.next_allowed, now, int(1e9 / q.rate_pps))
            unit = self.timestamp_unit_ns
            enq_ns = dep.enq_ns
            dep.deq_ns = now
            dep.deq_qdepth = p.backlog
            dep.deq_qbytes = p.backlog_bytes
            dep.enq_timestamp = enq_ns // unit
            dep.deq_timedelta = (now - enq_ns) // unit
            return dep
        return None

    def transmitted(self, port: int, nbytes: int, now: int) -> None:
        """The egress pipeline sent ``nbytes`` on ``port`` at ``now``: occupy the serializer."""
        p = self._at(port)
        p.tx_frames += 1
        p.tx_bytes += nbytes
        if p.rate_bps:
            # the frame's bits in ns at the port's rate, rounded up, in 64-bit ints: compiled, a
            # product past 2**31 leaves the tagged ints' fast path for the big-int multiplication
            frame: i64 = nbytes + WIRE_OVERHEAD_BYTES
            rate: i64 = int(p.rate_bps)
            p.busy_until = _pace(p.busy_until, now, (frame * 8_000_000_000 + rate - 1) // rate)

    def receive_pause(self, port: int, frame: bytes, now: int) -> None:
        """A MAC-control frame (EtherType 0x8808) arrived on ``port``: pause/resume that
        port's egress queues. The watchdog runs before (a storm may end with the old state)
        and after (a new pause may start one) so both transitions happen at ``now``."""
        p = self.port(port)
        self._watchdog(p, now)
        p.pfc.receive(frame, now, p.rate_bps or self.nominal_speed_bps)
        self._watchdog(p, now)

    def _watchdog(self, p: EgressPort, now: int) -> None:
        for pr, q in enumerate(p.queues):
            st = p.pfc.classes[pr]
            if st.watchdog is None:
                continue
            if st.watchdog_step(now, q.busy_since()) == "storm" and st.watchdog.action == "drop":
                n = len(q.items)
                q.dropped_watchdog += n
                self.dropped_watchdog_flush += n
                p.backlog -= n
                self._backlog -= n
                p.backlog_bytes -= sum(e.length for e in q.items)
                q.items.clear()
                q.nonempty_since = -1
                p.ready &= ~(1 << pr)

    def next_event_ns(self, now: int) -> int | None:
        """Earliest fabric time at which :meth:`pop` may return something or a watchdog acts."""
        if not self._backlog and not self._armed_ports:
            return None
        best: int | None = None
        for p in self.ports.values():
            if not p.ready and not p.armed:
                continue
            classes = p.pfc.classes
            queues = p.queues
            busy = p.busy_until
            look = (1 << len(queues)) - 1 if p.armed else p.ready  # every class's watchdog, or the busy queues
            while look:
                pr = look.bit_length() - 1
                look ^= 1 << pr
                q = queues[pr]
                st: ClassState = classes[pr]
                if st.watchdog is not None:
                    t = st.watchdog_deadline(q.busy_since())
                    if t is not None and (best is None or t < best):
                        best = t
                if not q.items:
                    continue
                t = q.next_allowed if q.next_allowed > busy else busy
                if st.blocks(now) and st.paused_until > t:
                    t = st.paused_until
                if best is None or t < best:
                    best = t
        return None if best is None else max(best, now)

    def flush(self) -> int:
        """Drop every queued packet (pipeline swap); returns how many."""
        n = 0
        for p in self.ports.values():
            for q in p.queues:
                n += len(q.items)
                q.items.clear()
                q.nonempty_since = -1
            p.ready = 0
            p.backlog = 0
            p.backlog_bytes = 0
        self._backlog = 0
        return n
