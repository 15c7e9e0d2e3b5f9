"""The switch device: one P4 program, its traffic manager, links and ports, wired together.

This is the object the P4Runtime server drives (see COMMON.md: ``program``, ``p4info``,
``lock``, ``load_pipeline``, ``packet_out``, ``on_packet_in``, ``on_digest``) and the I/O loop
feeds (:meth:`Device.receive` for each frame from a port, :meth:`Device.poll` to run whatever
is due). It owns no socket and reads time only from its clock, so tests drive it with a manual
clock and in-memory ports.

Packet path: port -> [MAC: PFC frames consumed here] -> ingress (V1Pipeline.ingress) ->
traffic manager (queues, priorities, rates, PFC pause) -> egress (V1Pipeline.egress with the
queueing metadata) -> port serializer -> link model (delay, loss) -> port. The CPU port
(``cpu_port``) has no interface: what egress sends there goes to ``on_packet_in``, and
``packet_out`` frames enter ingress with ``ingress_port = cpu_port``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, Protocol, cast

from netbase.clock import Clock, DilatedClock
from netbase.lag import SchedulingLag
from netbase.pfc import is_mac_control
from p4rt.entries import NotFoundError
from p4switch.exec import EgressJob, EgressResult, IngressResult, LoadedProgram, V1Pipeline
from p4switch.exec.externs import Register
from p4switch.frontend import compile_source
from p4switch.p4info import device_config as dc
from p4switch.switch.link import Link
from p4switch.switch.pcap import PcapWriter
from p4switch.switch.tm import DEFAULT_CAPACITY, DEFAULT_NOMINAL_SPEED_BPS, PORT_NUMBERS, Departure, TrafficManager

log = logging.getLogger("p4switch.device")

# Work done per poll before returning to the I/O loop, so receiving is never starved.
POLL_BUDGET: Final = 256
# Frames a batching port is handed at once at most: a long poll's first frames do not wait for
# all of its egress passes (64: what the packet-socket port sends per system call).
TX_BATCH: Final = 64


def check_device_config(device_config: bytes) -> Any:
    """The checked program of a device config; raises ValueError or CompileError."""
    cfg = dc.decode(device_config)
    return compile_source(cfg.source, filename=cfg.name)


class PortIO(Protocol):
    def send(self, frame: bytes) -> bool: ...


class BatchPortIO(PortIO, Protocol):
    """A port that carries many frames per call (the packet-socket port: one ``sendmmsg``).
    The device hands it the frames one poll sends on it together, in order, when the poll ends
    (or as soon as TX_BATCH of them are waiting): what leaves and in which order is the traffic
    manager's decision as before; only the number of system calls changes. Ports without it
    (the simulator's links, whose effects are ordered events in virtual time) get each frame
    when it is sent."""

    def send_frames(self, frames: list[bytes]) -> int: ...


class PortCounts:
    """Frames received on a port and frames that left it (its send succeeded), updated in
    place: compiled, a ``defaultdict`` item's update is three generic dict operations (~540
    instructions), and every hop moved two of them."""

    __slots__ = ("rx", "tx")

    def __init__(self) -> None:
        self.rx = 0
        self.tx = 0


class Device:
    """The switch without its I/O: what the P4Runtime server, the runtime CLI and the I/O loop
    share. Everything they call after start-up takes ``lock``: they run on different threads
    (but ``receive`` and ``poll`` of a device driven from one thread, ``one_thread``)."""

    def __init__(
        self,
        device_id: int = 0,
        cpu_port: int | None = None,
        priority_queues: int = 1,
        clock: Clock | None = None,
        queue_capacity: int = DEFAULT_CAPACITY,
        nominal_speed_bps: float = DEFAULT_NOMINAL_SPEED_BPS,
        link_seed: int = 0,
        check_config: Callable[[bytes], Any] = check_device_config,
        timestamp_unit_ns: int = 1000,
        queue_bytes_register: str | None = None,
        one_thread: bool = False,
    ) -> None:
        """``timestamp_unit_ns``: the unit of the v1model timestamps (``ingress_global_timestamp``,
        ``egress_global_timestamp``, ``enq_timestamp``, ``deq_timedelta``); 1000, BMv2's
        microseconds, by default; the virtual-time fabric uses 1 (HPCC wants nanoseconds).
        ``queue_bytes_register``: the name of a program register, indexed by port, in which the
        device stores the bytes left queued on the port before each egress pass (as
        ``deq_qdepth`` counts packets); a program without it is unaffected. BMv2 keeps no such
        register (p4src/README.md, "Target options").
        ``one_thread``: the driver calls ``receive`` and ``poll`` from the one thread that also
        serves the control plane (the virtual-time fabric), so they need not take ``lock``: two
        Python calls into it cost ~1,000 instructions, one receive and one poll a packet-hop."""
        if timestamp_unit_ns not in (1, 1000):
            raise ValueError(f"timestamp unit must be 1 (ns) or 1000 (us) ns, got {timestamp_unit_ns}")
        self.timestamp_unit_ns = timestamp_unit_ns
        self.queue_bytes_register = queue_bytes_register
        self._queue_bytes: Register | None = None  # that register of the installed program, if it has one
        self.device_id = device_id
        # device config -> checked program; the virtual-time fabric passes a memoised one so
        # that many switches given one program check its source once
        self.check_config = check_config
        self.cpu_port = cpu_port
        # the same as an int (no port is -1): compiled, a port compared with ``int | None`` is
        # boxed and compared generically, every frame sent
        self._cpu = -1 if cpu_port is None else cpu_port
        self.lock = threading.RLock()
        self._one_thread = one_thread
        self.clock: Clock = clock or DilatedClock()
        self.tm = TrafficManager(priority_queues, queue_capacity, nominal_speed_bps)
        self.tm.timestamp_unit_ns = timestamp_unit_ns
        self.link_seed = link_seed
        self.links: dict[int, Link] = {}
        self.ports: dict[int, PortIO] = {}
        # each port's ``send``, bound once (compiled, ``io.send(frame)`` on the protocol looked
        # the method up by name for every frame), by port number
        self._senders: list[Callable[[bytes], bool] | None] = [None] * PORT_NUMBERS
        self._batch_ports: set[int] = set()  # ports that are BatchPortIO
        self._tx_pending: dict[int, list[bytes]] = {}  # their frames sent in the running poll
        self.port_names: dict[int, str] = {}
        self.program: LoadedProgram | None = None
        self.p4info: Any = None  # p4.config.v1.p4info_pb2.P4Info
        self.pipe: V1Pipeline | None = None
        self.on_packet_in: Callable[[bytes], None] | None = None
        self.on_digest: Callable[[Any], None] | None = None
        self.notify: Callable[[], None] | None = None  # wakes the I/O loop (set by the loop)
        # every event by name, 0 when it never happened: a ``defaultdict``, a C type (a
        # ``Counter``'s item update goes through its Python class's slot, ~1,000 instructions,
        # a packet-in's count one of them); the two counters every frame moves are plain
        # ints, folded into ``stats`` on read
        self._stats: defaultdict[str, int] = defaultdict(int)
        self._rx = 0
        self._tx = 0
        self.sched_lag = SchedulingLag()  # how late the I/O loop served due events (live mode)
        self._port_counts: dict[int, PortCounts] = {}  # port_rx and port_tx
        self._counts_by_number: list[PortCounts | None] = [None] * PORT_NUMBERS  # the same, by index
        self._inject: deque[tuple[int, bytes]] = deque()  # packet-outs and recirculations
        # what the pipeline's last ingress/egress pass produced: emptied after each, reused
        # (a pass a callback starts while they still hold an outer pass's output gets its own)
        self._ingress_out = IngressResult()
        self._egress_out = EgressResult()
        self._pcap: dict[tuple[int, str], PcapWriter] = {}
        self._pcap_epoch_ns = 0
        self._trace = log.isEnabledFor(logging.DEBUG)  # per-packet log lines (-L debug), checked once

    # ---- set-up ----------------------------------------------------------------------------
    def add_port(self, port: int, io: PortIO, name: str | None = None) -> None:
        if port == self.cpu_port:
            raise ValueError(f"port {port} is the CPU port; it has no interface")
        if not 0 <= port < PORT_NUMBERS:
            raise ValueError(f"port {port} is not a v1model port number (0..{PORT_NUMBERS - 1})")
        if port in self.ports:
            raise ValueError(f"port {port} is given twice")
        if name is not None and name in self.port_names.values():
            raise ValueError(f"interface {name} is given twice")
        self.ports[port] = io
        self._senders[port] = io.send
        if hasattr(io, "send_frames"):
            self._batch_ports.add(port)
        self.port_names[port] = name or f"port{port}"
        self.tm.port(port)

    def enable_pcap(self, directory: str | Path) -> None:
        """Capture every port in and out into ``DIR/<ifname>_{in,out}.pcap`` (as BMv2 does)."""
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        self._pcap_epoch_ns = time.time_ns() - self.clock.now_ns()
        for port, name in self.port_names.items():
            for direction in ("in", "out"):
                self._pcap[(port, direction)] = PcapWriter(d / f"{name}_{direction}.pcap")

    def _capture(self, port: int, direction: str, frame: bytes, now: int) -> None:
        """Write a frame to its port's capture file, if that port has one (the CPU port has none)."""
        w = self._pcap.get((port, direction))
        if w is not None:
            w.write(frame, self._pcap_epoch_ns + now)

    def close(self) -> None:
        for w in self._pcap.values():
            w.close()
        self._pcap.clear()

    def link(self, port: int) -> Link:
        lk = self.links.get(port)
        if lk is None:
            lk = self.links[port] = Link(seed=self.link_seed + port)
        return lk

    def set_link(self, port: int, rate_bps: float | None = None, delay_ns: int | None = None, loss: float | None = None) -> None:
        with self.lock:
            if rate_bps is not None:
                self.tm.set_port_rate(port, rate_bps)
            self.link(port).configure(delay_ns, loss)
        self.wake()

    def wake(self) -> None:
        if self.notify is not None:
            self.notify()

    # ---- pipeline ------------------------------------------------------------------------
    def load_pipeline(self, p4info: Any, device_config: bytes) -> None:
        """Compile a device config (our JSON with the preprocessed P4 source) and swap it in."""
        self.set_program(LoadedProgram.from_checked(self.check_config(device_config)), p4info)

    def set_program(self, program: LoadedProgram, p4info: Any = None) -> None:
        """Install a loaded program; queued packets of the old one are dropped (counted)."""
        pipe = V1Pipeline(program, cpu_port=self.cpu_port)
        with self.lock:
            self._stats["tm_flushed"] += self.tm.flush()
            self.program, self.p4info, self.pipe = program, p4info, pipe
            self._queue_bytes = self._queue_bytes_of(program)
        log.info("pipeline installed")

    def _queue_bytes_of(self, program: LoadedProgram) -> Register | None:
        """The program's register named by ``queue_bytes_register``, if it has one."""
        if self.queue_bytes_register is None:
            return None
        try:
            return program.register(self.queue_bytes_register)
        except NotFoundError:
            return None

    @property
    def stats(self) -> defaultdict[str, int]:
        """Frames received (``rx``) and sent (``tx``), and every other event by name."""
        s = self._stats
        if self._rx:
            s["rx"] += self._rx
            self._rx = 0
        if self._tx:
            s["tx"] += self._tx
            self._tx = 0
        return s

    # ---- data path -----------------------------------------------------------------------
    def packet_out(self, frame: bytes) -> None:
        """A controller frame (with its packet_out header) enters ingress at the CPU port."""
        if self.cpu_port is None:
            raise ValueError("packet-out needs a CPU port (--cpu-port)")
        with self.lock:
            self._stats["packet_out"] += 1
            self._inject.append((self.cpu_port, bytes(frame)))
        self.wake()

    def receive(self, port: int, frame: bytes) -> None:
        """A frame arrived on ``port`` from the wire."""
        if self._one_thread:
            self._received(port, frame)
            return
        # acquire and release, not ``with``: compiled, a ``with`` on a lock (not a native class)
        # looks up its __enter__ and __exit__ and calls them as Python calls (~1,200 instructions
        # where these two calls take ~1,000)
        lock = self.lock
        lock.acquire()
        try:
            self._received(port, frame)
        finally:
            lock.release()

    def _received(self, port: int, frame: bytes) -> None:
        self._rx += 1
        self._counts(port).rx += 1
        self._receive(port, frame, self.clock.now_ns())

    def _counts(self, port: int) -> PortCounts:
        if 0 <= port < PORT_NUMBERS:  # indexed (always, from ports add_port took)
            counts = self._counts_by_number[port]
            if counts is None:
                counts = self._counts_by_number[port] = self._port_counts[port] = PortCounts()
            return counts
        return self._port_counts.setdefault(port, PortCounts())

    @property
    def port_rx(self) -> defaultdict[int, int]:
        """Frames received per port, as they are now (0 for a port that received none)."""
        return defaultdict(int, {port: c.rx for port, c in list(self._port_counts.items())})

    @property
    def port_tx(self) -> defaultdict[int, int]:
        """Frames that left per port (the port's send succeeded), as they are now."""
        return defaultdict(int, {port: c.tx for port, c in list(self._port_counts.items())})

    def receive_frames(self, port: int, frames: list[bytes]) -> None:
        """Frames that arrived on ``port``, in order (what one read of the port gave): as many
        :meth:`receive` calls, with the lock taken and the counters updated once. Each frame
        still reads the clock when its turn comes, as it would alone."""
        with self.lock:
            self._rx += len(frames)
            self._counts(port).rx += len(frames)
            clock = self.clock
            for frame in frames:
                self._receive(port, frame, clock.now_ns())

    def _receive(self, port: int, frame: bytes, now: int) -> None:
        if self._trace:
            log.debug("port %d: received %d bytes", port, len(frame))
        if self._pcap:
            self._capture(port, "in", frame, now)
        if is_mac_control(frame):  # consumed by the MAC, never seen by P4
            self._stats["rx_mac_control"] += 1
            self.tm.receive_pause(port, frame, now)
            return
        self._ingress(port, frame, now)

    def _ingress(self, port: int, frame: bytes, now: int) -> None:
        if self.pipe is None:
            self._stats["drop_no_pipeline"] += 1
            return
        res = self._ingress_out
        if res.to_egress or res.digests:  # an outer pass's, still in use: a callback re-entered the device
            res = IngressResult()
        try:
            job = self.pipe.ingress_job(port, frame, now // self.timestamp_unit_ns, res)
        except Exception:  # the executor must not raise; if it does, lose one packet, not the switch
            log.exception("ingress failed on a %d-byte frame from port %d", len(frame), port)
            self._stats["pipeline_errors"] += 1
            res.clear()
            return
        if job is not None:  # one unicast job and nothing else
            self._enqueue(job, now)
            return
        if res.digests:
            digests = res.digests.copy()
            res.digests.clear()
            for digest in digests:
                self._stats["digests"] += 1
                if self.on_digest is not None:
                    self.on_digest(digest)
        jobs = res.to_egress
        for job in jobs:
            self._enqueue(job, now)
        jobs.clear()

    def _enqueue(self, job: EgressJob, now: int) -> None:
        if not self.tm.enqueue(job.egress_port, job.priority, job, job.packet_length, now):
            self._stats["drop_tm"] += 1
            if self._trace:
                log.debug("port %d queue %d: dropped by the traffic manager", job.egress_port, job.priority)

    def poll(self) -> int | None:
        """Run what is due now (injected frames, departures, link deliveries); return the
        fabric time of the next thing due, or None when idle. The frames it sends on batching
        ports leave when it is done (BatchPortIO)."""
        if self._one_thread:
            return self._poll()
        lock = self.lock
        lock.acquire()  # not ``with``: see receive
        try:
            return self._poll()
        finally:
            lock.release()

    def _poll(self) -> int | None:
        try:
            return self._run_due()
        finally:
            if self._tx_pending:
                self._flush_tx()

    def _run_due(self) -> int | None:
        now = self.clock.now_ns()
        inject, links, tm = self._inject, self.links, self.tm
        if inject:
            for _ in range(min(len(inject), POLL_BUDGET)):  # packet-outs, recirculations
                port, frame = inject.popleft()
                self._ingress(port, frame, now)
        departures = 0
        while departures < POLL_BUDGET:  # a budget of its own: recirculation cannot starve queues
            dep = tm.pop(now)
            if dep is None:
                break
            self._egress(dep, now)
            departures += 1
        if links:  # the live switch's delay/loss model (set_link); the simulator has none
            for port, lk in links.items():
                for frame in lk.due(now):
                    self._wire_send(port, frame)
        if inject or departures == POLL_BUDGET:
            return now
        nxt = tm.next_event_ns(now)
        for lk in links.values():
            t = lk.next_due()
            if t is not None and (nxt is None or t < nxt):
                nxt = t
        return nxt

    def _egress(self, dep: Departure, now: int) -> None:
        if self.pipe is None:  # the pipeline was removed while the packet waited in a queue
            self._stats["drop_no_pipeline"] += 1
            return
        unit = self.timestamp_unit_ns
        if self._queue_bytes is not None:
            self._queue_bytes.p_write(dep.port, dep.deq_qbytes)
        out = self._egress_out
        if out.transmit or out.to_egress or out.recirculate:  # in use by an outer pass, as in _ingress
            out = EgressResult()
        try:  # a Departure is the QueueMeta egress reads
            frame = self.pipe.egress_frame(dep.item, dep, now // unit, out)
        except Exception:
            log.exception("egress failed on port %d", dep.port)
            self._stats["pipeline_errors"] += 1
            out.clear()
            return
        if frame is not None:  # a plain transmission, to the port it was queued for
            self._transmit(dep.port, frame, now)
            return
        if out.transmit:
            try:  # emptied even if a packet-in handler raises: no frame is sent twice
                for port, frame in out.transmit:
                    self._transmit(port, frame, now)
            finally:
                out.transmit.clear()
        if out.to_egress:
            for job in out.to_egress:
                self._enqueue(job, now)
            out.to_egress.clear()
        if out.recirculate:
            for port, frame in out.recirculate:
                self._stats["recirculated"] += 1
                self._inject.append((port, frame))
            out.recirculate.clear()

    def _transmit(self, port: int, frame: bytes, now: int) -> None:
        if self._trace:
            log.debug("port %d: transmitting %d bytes", port, len(frame))
        self.tm.transmitted(port, len(frame), now)
        if self._pcap:
            self._capture(port, "out", frame, now)
        if port == self._cpu:
            self._stats["packet_in"] += 1
            if self.on_packet_in is not None:
                self.on_packet_in(frame)
            return
        lk = self.links.get(port) if self.links else None  # a look-up only where links are emulated
        if lk is not None and (lk.delay_ns or lk.loss or lk.next_due() is not None):
            if not lk.submit(frame, now):
                self._stats["drop_link_loss"] += 1
            return
        self._wire_send(port, frame)

    def _wire_send(self, port: int, frame: bytes) -> None:
        if self._batch_ports and port in self._batch_ports:
            pending = self._tx_pending.get(port)
            if pending is None:
                self._tx_pending[port] = [frame]
            else:
                pending.append(frame)
                if len(pending) >= TX_BATCH:
                    del self._tx_pending[port]
                    self._send_batch(port, pending)
            return
        send = self._senders[port] if 0 <= port < PORT_NUMBERS else None
        if send is None:
            self._stats["drop_no_port"] += 1
        else:
            self._count_tx(port, 1 if send(frame) else 0, 1)

    def _flush_tx(self) -> None:
        """Hand each batching port the frames of this poll it has not had yet, in the order
        they were sent."""
        pending, self._tx_pending = self._tx_pending, {}
        for port, frames in pending.items():
            self._send_batch(port, frames)

    def _send_batch(self, port: int, frames: list[bytes]) -> None:
        io = cast(BatchPortIO, self.ports[port])
        self._count_tx(port, io.send_frames(frames), len(frames))

    def _count_tx(self, port: int, sent: int, frames: int) -> None:
        """Of ``frames`` handed to ``port``, ``sent`` left; the kernel refused the others (the
        port counts them by reason: its kernel tx drops)."""
        self._tx += sent
        self._counts(port).tx += sent
        if sent < frames:
            self._stats["tx_errors"] += frames - sent
