"""One workload run's outcome as plain data, and the statistics computed from it.

``fabricctl run`` and the demo write one JSON file per run (``out/runs/<n>-<workload>-<profile>.json``);
``fabricctl report`` and the demo's side-by-side table read them back. All times are fabric
time (microseconds), so runs at different time dilations compare directly.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Message:
    src: str
    dst: str
    size: int  # bytes
    fct_us: float  # completion time
    ideal_us: float  # size at the bottleneck line rate plus base RTT, for the slowdown

    @property
    def slowdown(self) -> float:
        return max(1.0, self.fct_us / self.ideal_us) if self.ideal_us > 0 else math.nan


@dataclass
class LinkSeries:
    """Utilisation (0..1) of one direction of one link, sampled over the run."""

    name: str  # "leaf1:3->spine1"
    times_us: list[float] = field(default_factory=list)
    util: list[float] = field(default_factory=list)

    @property
    def mean(self) -> float:
        return sum(self.util) / len(self.util) if self.util else 0.0


@dataclass
class RunResult:
    workload: str
    profile: str
    params: dict[str, Any]
    completion_us: float  # whole workload, fabric time
    bytes_delivered: int
    messages: list[Message] = field(default_factory=list)
    retransmissions: int = 0
    spurious_retransmissions: int = 0  # resends whose original had arrived (the receiver saw both)
    ooo_reassembled: int = 0  # packets that arrived out of order and were kept for reassembly (SR)
    ooo_dropped: int = 0  # out-of-order arrivals discarded (Go-Back-N, or beyond the SACK window)
    reorder_peak_us: float = 0.0  # longest any packet arrived behind one sent after it (senders' RACK)
    naks: int = 0
    cnps: int = 0
    timeouts: int = 0
    pauses: int = 0  # PFC pause frames sent by switches
    ecn_marks: int = 0
    drops: int = 0
    # frames the kernel lost on packet-socket ports (switches, NICs), received or sent: no other counter sees them
    kernel_drops: int = 0
    int_reports: int = 0
    links: list[LinkSeries] = field(default_factory=list)
    queue_depth: dict[str, list[tuple[float, int]]] = field(default_factory=dict)  # "leaf1:3" -> (t_us, pkts)
    nic_stats: dict[str, dict[str, Any]] = field(default_factory=dict)  # raw per-host statistics
    alerts: list[dict[str, Any]] = field(default_factory=list)  # baselines crossed (controller/alerts.py)
    ok: bool = True  # every message completed with its data intact
    data_verified: list[str] = field(default_factory=list)  # hosts whose received bytes were checked equal
    errors: list[str] = field(default_factory=list)
    # live runs: how late each component ("leaf1", "nic h1_1") acted on due timers, fabric ns
    # ({"timers", "p50_ns", "p99_ns", "max_ns"}; netbase/lag.py); empty where not measured
    sched_lag: dict[str, dict[str, int]] = field(default_factory=dict)
    time_dilation: float = 0.0  # D of the live fabric (0: not recorded, or virtual time)
    # PFC frames (pauses and resumes) the NICs received: the switches' pauses that reached hosts (rx_pause)
    nic_pause_frames_received: int = 0
    # table row -> where its switch figure was read (P4 counter or register, and the interface)
    sources: dict[str, str] = field(default_factory=dict)

    @property
    def worst_lag_p99_ns(self) -> int | None:
        """The largest p99 scheduling lag of any component (None: none measured)."""
        return max((c.get("p99_ns", 0) for c in self.sched_lag.values() if c.get("timers")), default=None)

    @property
    def goodput_gbps(self) -> float:
        return self.bytes_delivered * 8 / (self.completion_us * 1e3) if self.completion_us > 0 else 0.0

    @property
    def mean_link_util(self) -> float:
        fabric = [s.mean for s in self.links]
        return sum(fabric) / len(fabric) if fabric else 0.0

    @property
    def max_link_util(self) -> float:
        return max((s.mean for s in self.links), default=0.0)

    def fct_percentiles(self) -> dict[str, float]:
        return _percentiles([m.fct_us for m in self.messages])

    def slowdown_percentiles(self) -> dict[str, float]:
        return _percentiles([m.slowdown for m in self.messages])

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(asdict(self), indent=1))

    @classmethod
    def load(cls, path: Path) -> RunResult:
        d = json.loads(Path(path).read_text())
        for key, value in transport_counts(d.get("nic_stats", {})).items():  # files from before a counter was shown
            d.setdefault(key, value)
        d["messages"] = [Message(**m) for m in d.get("messages", [])]
        d["links"] = [LinkSeries(**s) for s in d.get("links", [])]
        d["queue_depth"] = {k: [tuple(p) for p in v] for k, v in d.get("queue_depth", {}).items()}
        return cls(**d)


def transport_counts(nic_stats: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The RunResult fields that come from the NICs' counters (``summary.counters`` of each
    host's statistics): summed over hosts, the reorder peak as the worst host's."""
    counters = [(s or {}).get("counters", {}) or {} for s in nic_stats.values()]

    def total(name: str) -> int:
        return int(sum(c.get(name, 0) or 0 for c in counters))

    return {
        "retransmissions": total("retransmitted_pkts"),
        "spurious_retransmissions": total("spurious_retransmits"),
        "ooo_reassembled": total("out_of_order_received") - total("out_of_order_dropped"),
        "ooo_dropped": total("out_of_order_dropped"),
        "reorder_peak_us": max((c.get("reorder_peak_ns", 0) or 0 for c in counters), default=0) / 1e3,
        "naks": total("naks_received"),
        "cnps": total("cnps_received"),
        "timeouts": total("timeouts"),
        "nic_pause_frames_received": total("pause_frames_received"),
        # the NICs' share (received frames lost, sends refused); the switches' is added by the caller
        "kernel_drops": total("rx_kernel_drops") + total("tx_kernel_drops"),
    }


def _percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {"p50": math.nan, "p95": math.nan, "p99": math.nan, "max": math.nan}
    v = sorted(values)

    def pick(q: float) -> float:
        return v[min(len(v) - 1, max(0, math.ceil(q * len(v)) - 1))]

    return {"p50": pick(0.50), "p95": pick(0.95), "p99": pick(0.99), "max": v[-1]}
