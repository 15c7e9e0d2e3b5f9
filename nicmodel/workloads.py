"""Traffic: flow-size distributions, Poisson arrivals, and the workload runners.

Flow-size CDFs are the HPCC paper's data, shipped in ``nicmodel/data/flow_size_cdf`` (its
README gives their provenance); a CDF of one's own is a file path. Sampling follows that
README: draw u in [0, 100) and interpolate linearly between the two CDF points around it. Poisson arrivals at
load L on hosts of bandwidth B: mean inter-arrival = mean flow size * 8 / (L * B), per
source host, destinations uniform among the other hosts.
"""

from __future__ import annotations

import bisect
import functools
import random
from collections.abc import Callable
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

import numpy as np
from numpy.random import PCG64  # numpy would load it on first use: 49M instructions inside a (small) run

from nicmodel.nic import Nic, parse_ip, parse_mac
from nicmodel.qp import QueuePair
from nicmodel.settings import NicSettings
from nicmodel.stats import MessageRecord, RunStats
from nicmodel.verbs import Completion, MemoryRegion, WcOpcode, WcStatus

CDF_FILES = {
    "websearch": "WebSearch_distribution.txt",
    "fbhdp": "FbHdp_distribution.txt",
    "alistorage": "AliStorage2019.txt",
    "googlerpc": "GoogleRPC2008.txt",
}


CDF_PACKAGE_DIR = ("data", "flow_size_cdf")  # inside the nicmodel package


@dataclass(frozen=True)
class FlowSizeCdf:
    """An empirical flow-size CDF: sizes in bytes, cumulative percent, both increasing."""

    name: str
    sizes: tuple[float, ...]
    percents: tuple[float, ...]

    @classmethod
    def load(cls, name_or_path: str) -> FlowSizeCdf:
        """Load by short name (websearch, fbhdp, alistorage, googlerpc) or file path."""
        key = name_or_path.lower()
        if key in CDF_FILES:
            return cls.parse(files("nicmodel").joinpath(*CDF_PACKAGE_DIR, CDF_FILES[key]).read_text(), name=key)
        path = Path(name_or_path)
        if not path.is_file():
            raise ValueError(f"unknown flow-size CDF {name_or_path!r}: give one of {sorted(CDF_FILES)} or a file path")
        return cls.parse(path.read_text(), name=path.stem)

    @classmethod
    def parse(cls, text: str, name: str = "custom") -> FlowSizeCdf:
        sizes: list[float] = []
        percents: list[float] = []
        for lineno, line in enumerate(text.splitlines(), 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            parts = line.split()
            try:
                size, pct = float(parts[0]), float(parts[1])
            except (IndexError, ValueError) as exc:
                raise ValueError(f"{name}:{lineno}: expected '<bytes> <percent>', got {line!r}") from exc
            if sizes and (size < sizes[-1] or pct < percents[-1]):
                raise ValueError(f"{name}:{lineno}: CDF points must not decrease")
            sizes.append(size)
            percents.append(pct)
        if len(sizes) < 2 or percents[-1] != 100:
            raise ValueError(f"{name}: a CDF needs at least two points and must end at 100 %")
        return cls(name, tuple(sizes), tuple(percents))

    def sample(self, rng: random.Random) -> int:
        """One flow size in bytes (at least 1)."""
        return self.size_at(rng.random() * 100)

    def size_at(self, u: float) -> int:
        """The size at cumulative percent ``u`` in [0, 100), interpolated linearly."""
        i = bisect.bisect_right(self.percents, u)
        i = min(max(i, 1), len(self.percents) - 1)
        p0, p1 = self.percents[i - 1], self.percents[i]
        s0, s1 = self.sizes[i - 1], self.sizes[i]
        x = s1 if p1 == p0 else s0 + (u - p0) * (s1 - s0) / (p1 - p0)
        return max(1, round(x))

    def mean(self) -> float:
        """Mean flow size of the interpolated distribution (uniform within each segment)."""
        total = 0.0
        for i in range(1, len(self.sizes)):
            total += (self.percents[i] - self.percents[i - 1]) / 100 * (self.sizes[i] + self.sizes[i - 1]) / 2
        return total


@dataclass(frozen=True)
class FlowArrival:
    t_ns: int
    src: int
    dst: int
    size: int


def poisson_arrivals(
    cdf: FlowSizeCdf,
    hosts: int,
    load: float,
    bandwidth_bps: float,
    *,
    duration_ns: int | None = None,
    flows_per_host: int | None = None,
    rng: random.Random,
    start_ns: int = 0,
) -> list[FlowArrival]:
    """Flows of every source host (0..hosts-1), sorted by time. Stops at ``duration_ns``
    after ``start_ns`` or after ``flows_per_host`` flows per host (at least one given)."""
    if hosts < 2:
        raise ValueError("Poisson traffic needs at least 2 hosts")
    if not 0 < load <= 1:
        raise ValueError(f"load must be in (0, 1], got {load}")
    if bandwidth_bps <= 0:
        raise ValueError("bandwidth must be positive")
    if duration_ns is None and flows_per_host is None:
        raise ValueError("give duration_ns or flows_per_host")
    mean_gap_ns = cdf.mean() * 8 / (load * bandwidth_bps) * 1e9
    flows: list[FlowArrival] = []
    for src in range(hosts):
        t = float(start_ns)
        n = 0
        while True:
            t += rng.expovariate(1 / mean_gap_ns)
            if duration_ns is not None and t >= start_ns + duration_ns:
                break
            if flows_per_host is not None and n >= flows_per_host:
                break
            dst = rng.randrange(hosts - 1)
            dst += dst >= src
            flows.append(FlowArrival(int(t), src, dst, cdf.sample(rng)))
            n += 1
    flows.sort(key=lambda f: (f.t_ns, f.src))
    return flows


# =========================================================================== workloads
#
# A workload runs as one ``Endpoint`` per host, each driving only its own NIC, so the same
# code runs in the simulator (all endpoints in one process) and live (one per NIC process).
# Endpoints need no out-of-band exchange: every rank builds its NIC state the same way —
# queue pair towards rank j has QPN ``QPN_BASE + j``, first PSN 0, and the memory regions
# are registered in the same order at the same addresses — so a rank knows its peers' QPNs,
# addresses and rkeys from its own. The NIC must be fresh (no earlier registrations).
#
# Endpoints are sans-IO like the NIC: the driver calls ``start(now)``, then ``poll(now)``
# after every NIC event, and wakes it at ``next_wakeup()`` (Poisson arrivals).

QPN_BASE = 0x100
FLOW_QPN_BASE = 0x1_0000  # qp_per_flow: flow i (in the job's arrival order) uses QPN FLOW_QPN_BASE + i at both ends
RECV_ADDR = 0x10_0000_0000  # where every rank registers its receive region
SEND_ADDR = 0x20_0000_0000
KINDS = ("p2p", "incast", "alltoall", "allreduce", "poisson")


@dataclass(frozen=True)
class Peer:
    """A host of the job: its rank (index in the job), IP and MAC."""

    rank: int
    ip: str
    mac: str


@dataclass
class WorkloadSpec:
    """What to run; the same spec is given to every host (only ``rank`` differs).

    kind: p2p (``src`` sends ``count`` messages of ``size`` to ``dst``), incast (every rank
    but ``dst`` sends ``size`` to ``dst``), alltoall (every rank sends ``size`` to every
    other), allreduce (ring all-reduce of a ``size``-byte buffer per rank: 2(N-1) steps of
    size/N-byte WRITE-with-immediate to the next rank, each step after the previous step's
    chunk from the previous rank arrived; byte-wise sum mod 256), poisson (flows from
    ``cdf`` at ``load`` of ``bandwidth_bps`` for ``duration_ns`` or ``flows_per_host``).
    qp_per_flow: poisson flows each get a queue pair of their own (as RDMA applications and
    ns-3 open one per flow), so a short flow never waits behind a long one to the same peer;
    False reuses one queue pair per peer.
    stagger_ns: rank r starts its p2p/incast/alltoall messages r * stagger_ns late.
    start_delay_ns: every rank waits this long (fabric ns) before its first message, so
    that live hosts started one after another all have their queue pairs up in time.
    verify: keep real buffers (integrity can be checked); False uses sink regions (no
    storage: large simulations). Poisson always uses sinks.
    """

    kind: str
    peers: list[Peer]
    rank: int
    size: int = 64 * 1024
    count: int = 1
    src: int = 0
    dst: int = 0
    cdf: str = "websearch"
    load: float = 0.5
    bandwidth_bps: float | None = None
    duration_ns: int | None = None
    flows_per_host: int | None = None
    seed: int = 1
    verify: bool = True
    qp_per_flow: bool = False
    stagger_ns: int = 0
    start_delay_ns: int = 0

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> WorkloadSpec:
        """Build and validate from JSON-like data (the management API's ``spec``)."""
        if not isinstance(d, dict):
            raise ValueError("workload spec must be an object")
        known = {f for f in cls.__dataclass_fields__}
        unknown = sorted(set(d) - known)
        if unknown:
            raise ValueError(f"unknown workload field(s) {unknown}; valid: {sorted(known)}")
        peers_in = d.get("peers")
        if not isinstance(peers_in, list) or not peers_in:
            raise ValueError("workload spec needs 'peers': a list of {rank, ip, mac}")
        peers = []
        for i, p in enumerate(peers_in):
            if not isinstance(p, dict) or "ip" not in p or "mac" not in p:
                raise ValueError(f"peer {i} must be an object with ip and mac (and rank)")
            peers.append(Peer(int(p.get("rank", i)), str(p["ip"]), str(p["mac"])))
        args = dict(d)
        args["peers"] = peers
        if "kind" not in args or "rank" not in args:
            raise ValueError("workload spec needs 'kind' and 'rank'")
        for key, value in args.items():
            want = _SPEC_TYPES.get(key)
            if want is None or (value is None and key in _OPTIONAL):
                continue
            if want is int and isinstance(value, float) and value.is_integer():
                value = int(value)  # JSON writers often send 1e6 for a byte count
            ok = isinstance(value, want) and not (want in (int, float) and isinstance(value, bool))
            if want is float and isinstance(value, int) and not isinstance(value, bool):
                ok, value = True, float(value)
            if not ok:
                raise ValueError(f"workload field {key!r} must be {want.__name__}, got {value!r}")
            args[key] = value
        spec = cls(**args)
        spec.validate()
        return spec

    def validate(self) -> None:
        n = len(self.peers)
        if self.kind not in KINDS:
            raise ValueError(f"unknown workload kind {self.kind!r}; choose one of {list(KINDS)}")
        if sorted(p.rank for p in self.peers) != list(range(n)):
            raise ValueError("peer ranks must be 0..N-1, each once")
        if n < 2:
            raise ValueError("a workload needs at least 2 hosts")
        for p in self.peers:
            parse_ip(p.ip)
            parse_mac(p.mac)
        for name in ("rank", "src", "dst"):
            if not 0 <= getattr(self, name) < n:
                raise ValueError(f"{name} {getattr(self, name)} is not a rank (0..{n - 1})")
        if self.size < 1 or self.count < 1:
            raise ValueError("size and count must be >= 1")
        if self.stagger_ns < 0 or self.start_delay_ns < 0:
            raise ValueError("stagger_ns and start_delay_ns must be >= 0")
        if self.kind == "p2p" and self.src == self.dst:
            raise ValueError("p2p needs src != dst")
        if self.kind == "allreduce" and self.size % n:
            raise ValueError(f"allreduce size {self.size} must be a multiple of the {n} ranks")
        if self.kind == "poisson":
            if self.duration_ns is None and self.flows_per_host is None:
                raise ValueError("poisson needs duration_ns or flows_per_host")
            FlowSizeCdf.load(self.cdf)

    def peer(self, rank: int) -> Peer:
        return next(p for p in self.peers if p.rank == rank)


_SPEC_TYPES: dict[str, type] = {
    "kind": str, "rank": int, "size": int, "count": int, "src": int, "dst": int, "cdf": str,
    "load": float, "bandwidth_bps": float, "duration_ns": int, "flows_per_host": int,
    "seed": int, "verify": bool, "qp_per_flow": bool, "stagger_ns": int, "start_delay_ns": int,
}
_OPTIONAL = {"bandwidth_bps", "duration_ns", "flows_per_host"}


def pattern(rank: int, size: int, seed: int = 1) -> bytes:
    """Deterministic per-rank test data (what each rank contributes): the raw 64-bit words
    of a PCG64 stream, little-endian. Drawing bounded uint8 values took 34 instructions a byte
    (4 % of a simulated all-reduce), ``Generator.bytes`` 22; the raw words take a quarter of
    its time."""
    words = PCG64([seed, rank]).random_raw(-(-size // 8))
    return words.astype("<u8", copy=False).tobytes()[:size]


class Endpoint:
    """One host's part of a workload, driving that host's (fresh) NIC."""

    def __init__(self, nic: Nic, spec: WorkloadSpec, settings: NicSettings, stats: RunStats,
                 host: str | None = None, sample_interval_ns: int = 1_000,
                 gateway_mac: bytes | None = None) -> None:
        spec.validate()
        settings.validate(nic.line_rate_bps)
        self.nic = nic
        self.spec = spec
        self.settings = settings
        self.stats = stats
        self.rank = spec.rank
        self.n = len(spec.peers)
        self.host = host or spec.peer(spec.rank).ip
        self.sample_interval_ns = sample_interval_ns
        self.gateway_mac = gateway_mac  # routed fabric: every frame goes to the first hop
        self.errors: list[str] = []
        self.started = False
        self._last_sample = -sample_interval_ns
        self._qps: dict[int, QueuePair] = {}
        self._flow_qps: dict[int, QueuePair] = {}  # qp_per_flow: flow index -> its queue pair
        self._inflight: dict[int, MessageRecord] = {}  # wr_id -> record
        self._next_wr = 1
        self._sent_total = 0
        self._sent_done = 0
        self._recv_total = 0
        self._recv_done = 0
        # messages to post: (t_ns, dst rank, size, remote offset, local offset, immediate,
        # flow index when the flow has a queue pair of its own)
        self._planned: list[tuple[int, int, int, int, int, int | None, int | None]] = []
        self._planned_i = 0
        self._on_recv: Callable[[Completion, int], None] | None = None
        self._setup_memory()

    # -- set-up -------------------------------------------------------------------------
    def _setup_memory(self) -> None:
        spec, n = self.spec, self.n
        if spec.kind == "allreduce":
            chunk = spec.size // n
            recv_len = spec.size + 2 * (n - 1) * chunk  # result + one staging slot per step
            send_len = 0
        elif spec.kind == "poisson":
            recv_len = send_len = FlowSizeCdf.load(spec.cdf).sizes[-1].__ceil__()
        else:
            recv_len = spec.size * (n if spec.kind in ("incast", "alltoall") else spec.count)
            send_len = spec.size
        store = spec.verify and spec.kind != "poisson"  # Poisson flows reach tens of MB: sinks
        self.recv_mr = self.nic.register_mr(bytearray(recv_len) if store else None,
                                            length=None if store else recv_len, addr=RECV_ADDR)
        self.send_mr: MemoryRegion | None = None
        if send_len:
            data = bytearray(pattern(self.rank, send_len, spec.seed)) if store else None
            self.send_mr = self.nic.register_mr(data, length=None if store else send_len, addr=SEND_ADDR)

    def qp_to(self, rank: int) -> QueuePair:
        """The queue pair towards ``rank`` (created and connected on first use)."""
        qp = self._qps.get(rank)
        if qp is None:
            peer = self.spec.peer(rank)
            s = self.settings
            qp = self.nic.create_qp(s.qp_config(), s.make_cc(self.nic.line_rate_bps), qpn=QPN_BASE + rank)
            mac = self.gateway_mac or parse_mac(peer.mac)
            qp.connect(mac, parse_ip(peer.ip), QPN_BASE + self.rank, 0)
            self._qps[rank] = qp
        return qp

    def _flow_qp(self, flow: int, rank: int) -> QueuePair:
        """The queue pair of flow ``flow`` with ``rank`` (either end), created on first use."""
        qp = self._flow_qps.get(flow)
        if qp is None:
            s = self.settings
            qpn = FLOW_QPN_BASE + flow
            qp = self.nic.create_qp(s.qp_config(), s.make_cc(self.nic.line_rate_bps), qpn=qpn)
            qp.connect(self.gateway_mac or parse_mac(self.spec.peer(rank).mac), parse_ip(self.spec.peer(rank).ip), qpn, 0)
            self._flow_qps[flow] = qp
        return qp

    # -- driver interface ---------------------------------------------------------------
    def start(self, now_ns: int) -> None:
        if self.started:
            raise ValueError("workload already started")
        self.started = True
        spec, r, n = self.spec, self.rank, self.n
        for rank in range(n):  # every QP exists before any peer's packet can arrive
            if rank != r:
                self.qp_to(rank)
        kind = spec.kind
        t0 = now_ns + spec.start_delay_ns + r * spec.stagger_ns
        plan = self._planned
        if kind == "p2p":
            if r == spec.src:
                plan.extend((t0, spec.dst, spec.size, i * spec.size, 0, None, None) for i in range(spec.count))
        elif kind == "incast":
            if r != spec.dst:
                plan.append((t0, spec.dst, spec.size, r * spec.size, 0, None, None))
        elif kind == "alltoall":
            plan.extend((t0, (r + k) % n, spec.size, r * spec.size, 0, None, None) for k in range(1, n))
        elif kind == "poisson":
            bw = spec.bandwidth_bps or self.nic.line_rate_bps
            cdf = FlowSizeCdf.load(spec.cdf)
            rng = random.Random(spec.seed)  # same on every rank: each keeps its own flows
            flows = poisson_arrivals(cdf, n, spec.load, bw, duration_ns=spec.duration_ns,
                                     flows_per_host=spec.flows_per_host, rng=rng, start_ns=t0)
            per_flow = spec.qp_per_flow
            for i, f in enumerate(flows):
                if f.src == r:
                    plan.append((f.t_ns, f.dst, f.size, 0, 0, None, i if per_flow else None))
                elif per_flow and f.dst == r:  # the receiving end exists before the first packet
                    self._flow_qp(i, f.src)
        self._sent_total = len(plan)
        if kind == "allreduce":
            self._allreduce_start(t0)
        self.poll(now_ns)

    def next_wakeup(self) -> int | None:
        """When the next planned message is due (None when none is pending)."""
        if self._planned_i < len(self._planned):
            return self._planned[self._planned_i][0]
        return None

    def poll(self, now_ns: int) -> None:
        """Post what is due, consume completions, sample rate/window."""
        plan = self._planned
        while self._planned_i < len(plan) and plan[self._planned_i][0] <= now_ns:
            _t, dst, size, remote_off, local_off, imm, flow = plan[self._planned_i]
            self._planned_i += 1
            self._write(dst, size, now_ns, remote_off, local_off, imm, flow)
        for c in self.nic.poll_cq():
            self._on_completion(c, now_ns)
        if now_ns - self._last_sample >= self.sample_interval_ns:
            self._last_sample = now_ns
            for qps in (self._qps, self._flow_qps):  # not one tuple of both: a sample a microsecond
                for qp in qps.values():
                    if qp.has_data() or qp.inflight_bytes:
                        self.stats.sample(f"{self.host}/{qp.qpn}", now_ns, qp.cc.rate_bps, qp.cc.window_bytes)

    @property
    def done(self) -> bool:
        return self.started and (
            self._sent_done >= self._sent_total and self._recv_done >= self._recv_total
            and self._planned_i >= len(self._planned)) or bool(self.errors)

    def progress(self) -> float:
        total = self._sent_total + self._recv_total
        if not self.started:
            return 0.0
        return 1.0 if total == 0 else (self._sent_done + self._recv_done) / total

    def status(self) -> dict[str, Any]:
        return {"kind": self.spec.kind, "rank": self.rank, "started": self.started,
                "progress": self.progress(), "done": self.done, "errors": list(self.errors),
                "data_ok": self.data_ok() if self.done else None}

    def data_ok(self) -> bool | None:
        """Does this rank's receive region hold exactly what the workload should have put
        there? None when nothing is checkable (sink regions, or nothing to receive)."""
        spec, buf, n, r = self.spec, self.recv_mr.buf, self.n, self.rank
        if buf is None:
            return None
        size = spec.size
        if spec.kind == "allreduce":
            return self.allreduce_result() == allreduce_expected(n, size, spec.seed)
        if spec.kind == "p2p":
            if r != spec.dst:
                return None
            data = pattern(spec.src, size, spec.seed)
            return all(buf[i * size:(i + 1) * size] == data for i in range(spec.count))
        if spec.kind == "poisson" or (spec.kind == "incast" and r != spec.dst):
            return None
        senders = [s for s in range(n) if s != r]  # alltoall, or the incast destination
        return all(buf[s * size:(s + 1) * size] == pattern(s, size, spec.seed) for s in senders)

    # -- messages -----------------------------------------------------------------------
    def _write(self, dst: int, size: int, now_ns: int, remote_off: int, local_off: int = 0,
               imm: int | None = None, flow: int | None = None) -> None:
        qp = self.qp_to(dst) if flow is None else self._flow_qp(flow, dst)
        wr = self._next_wr
        self._next_wr += 1
        rec = self.stats.message_started(self.host, self.spec.peer(dst).ip, size, now_ns, qp.qpn)
        self._inflight[wr] = rec
        mr = self.send_mr if self.spec.kind != "allreduce" else self.recv_mr
        assert mr is not None
        # a peer's receive region sits at RECV_ADDR with the same rkey as ours (see above)
        qp.post_write(wr, mr, local_off, size, RECV_ADDR + remote_off, self.recv_mr.rkey, imm)

    def _on_completion(self, c: Completion, now_ns: int) -> None:
        if c.status is not WcStatus.SUCCESS:
            self.errors.append(f"QP {c.qpn} wr {c.wr_id}: {c.status.value}")
            return
        if c.opcode in (WcOpcode.RDMA_WRITE, WcOpcode.SEND):
            rec = self._inflight.pop(c.wr_id, None)
            if rec is not None:
                RunStats.message_done(rec, c.time_ns)
                self._sent_done += 1
        elif self._on_recv is not None:
            self._recv_done += 1
            self._on_recv(c, now_ns)

    # -- ring all-reduce ----------------------------------------------------------------
    def _allreduce_start(self, t0: int) -> None:
        spec, n, r = self.spec, self.n, self.rank
        self.chunk = spec.size // n
        steps = 2 * (n - 1)
        if spec.verify:
            assert self.recv_mr.buf is not None
            self.recv_mr.buf[: spec.size] = pattern(r, spec.size, spec.seed)
        prev = self.qp_to((r - 1) % n)
        for s in range(steps):  # one receive WQE per incoming WRITE-with-immediate
            prev.post_recv(10_000 + s, self.recv_mr, 0, 0)
        self._recv_total = steps
        self._sent_total = steps
        self._on_recv = self._allreduce_arrived
        self._planned.append(self._allreduce_message(0, t0))

    def _allreduce_message(self, step: int, when_ns: int) -> tuple[int, int, int, int, int, int, None]:
        """The WRITE-with-immediate of ``step`` (immediate = step number)."""
        n = self.n
        c = self._chunk_index(self.rank, step)
        if step < n - 1:  # reduce-scatter: into the next rank's staging slot for this step
            remote = self.spec.size + step * self.chunk
        else:  # all-gather: the reduced chunk goes to its place in the result
            remote = c * self.chunk
        return (when_ns, (self.rank + 1) % n, self.chunk, remote, c * self.chunk, step, None)

    def _chunk_index(self, rank: int, step: int) -> int:
        """Chunk ``rank`` sends at ``step`` (reduce-scatter then all-gather)."""
        n = self.n
        return (rank - step) % n if step < n - 1 else (rank + 1 - (step - (n - 1))) % n

    def _allreduce_arrived(self, c: Completion, now_ns: int) -> None:
        step = c.imm if c.imm is not None else -1
        n = self.n
        if not 0 <= step < 2 * (n - 1):
            self.errors.append(f"unexpected immediate {c.imm}")
            return
        prev = (self.rank - 1) % n
        chunk_i = self._chunk_index(prev, step)
        if step < n - 1 and self.spec.verify:
            buf = self.recv_mr.buf
            assert buf is not None
            lo = chunk_i * self.chunk
            staged = self.spec.size + step * self.chunk
            mine = np.frombuffer(buf, np.uint8, self.chunk, lo)
            incoming = np.frombuffer(buf, np.uint8, self.chunk, staged)
            buf[lo:lo + self.chunk] = (mine + incoming).tobytes()  # uint8: sum mod 256
        if step + 1 < 2 * (n - 1):
            _t, dst, size, remote, local, imm, _flow = self._allreduce_message(step + 1, now_ns)
            self._write(dst, size, now_ns, remote, local, imm)

    def allreduce_result(self) -> bytes:
        assert self.recv_mr.buf is not None
        return bytes(self.recv_mr.buf[: self.spec.size])


@functools.lru_cache(maxsize=2)
def allreduce_expected(n: int, size: int, seed: int = 1) -> bytes:
    """What every rank holds after the ring all-reduce of ``pattern`` data; made once for
    all the ranks that check it (n ranks each summing n patterns took a thirteenth of a
    small simulated all-reduce, and grows with the square of the hosts)."""
    acc = np.zeros(size, np.uint8)
    for r in range(n):
        acc += np.frombuffer(pattern(r, size, seed), np.uint8)
    return acc.tobytes()


def nic_counters(nic: Nic, now_ns: int) -> dict[str, float]:
    """The transport counters statistics report, flattened from ``Nic.stats``."""
    d = nic.stats(now_ns)
    qps = d["qps"].values()
    total = {k: sum(q[k] for q in qps) for k in (
        "data_pkts_sent", "data_bytes_sent", "retransmitted_pkts", "spurious_retransmits",
        "naks_sent", "naks_received",
        "cnps_sent", "cnps_received", "ce_received", "timeouts", "out_of_order_received",
        "out_of_order_dropped", "duplicates_received", "messages_sent", "messages_received",
        "payload_bytes_delivered", "rnr_naks_received")}
    total["reassembly_peak_bytes"] = max((q["reassembly_peak_bytes"] for q in qps), default=0)
    total["reorder_peak_ns"] = max((q["reorder_peak_ns"] for q in qps), default=0)
    total["pause_ns"] = sum(d["pause_ns"])
    total["pause_frames_received"] = d["pause_frames_received"]
    for prio, n in enumerate(d["pause_frames_by_prio"]):
        total[f"pause_frames_prio{prio}"] = n
    for prio, ns in enumerate(d["pause_ns"]):
        total[f"pause_ns_prio{prio}"] = ns
    total["frames_received"] = d["frames_received"]
    total["frames_sent"] = d["frames_sent"]
    total["host_frames"] = d["host_frames"]
    total["frames_dropped"] = sum(d["drops"].values())
    for reason, count in d["drops"].items():  # e.g. drop_not_udp, drop_bad_icrc
        total[f"drop_{reason}"] = count
    return total
