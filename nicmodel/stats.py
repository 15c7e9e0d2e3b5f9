"""Run statistics: what a network engineer reads after a workload.

Per message: completion time (FCT) and slowdown against the ideal of an empty fabric, the
HPCC paper's definition ``size / line_rate + base_rtt`` with the size counted as the wire
carries it: every packet's headers (Ethernet through ICRC, the RETH of a WRITE) and its
Ethernet wire overhead (preamble, FCS, inter-frame gap) at the path MTU. Per run: goodput,
transport counters of every NIC (retransmitted packets, NAKs, CNPs, pause time, reassembly
buffer peak, ...), and per queue pair a time series of pacing rate and window. Exported as
one JSON document or as CSV files; all times are fabric nanoseconds.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from netbase.ethernet import WIRE_OVERHEAD_BYTES
from nicmodel import roce


@dataclass
class MessageRecord:
    """One message (WRITE or SEND) from ``src`` to ``dst``."""

    msg_id: int
    src: str
    dst: str
    size: int
    start_ns: int
    end_ns: int | None = None
    qpn: int = 0
    kind: str = "write"
    ideal_ns: int = 0

    @property
    def fct_ns(self) -> int | None:
        return None if self.end_ns is None else self.end_ns - self.start_ns

    @property
    def slowdown(self) -> float | None:
        fct = self.fct_ns
        if fct is None or self.ideal_ns <= 0:
            return None
        return max(1.0, fct / self.ideal_ns)

    def row(self) -> dict[str, Any]:
        row = asdict(self)
        row["fct_ns"] = self.fct_ns
        row["slowdown"] = self.slowdown
        return row


@dataclass
class SeriesPoint:
    t_ns: int
    rate_bps: float
    window_bytes: float | None


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0..100) by nearest rank; NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


@dataclass
class RunStats:
    """Everything measured in one run; the workload and drivers fill it in."""

    line_rate_bps: float
    base_rtt_ns: int
    mtu: int = 1024  # path MTU of the messages, for the ideal FCT's per-packet overhead
    messages: list[MessageRecord] = field(default_factory=list)
    series: dict[str, list[SeriesPoint]] = field(default_factory=dict)  # "host/qpn" -> points
    nic_counters: dict[str, dict[str, float]] = field(default_factory=dict)  # host -> counters
    fabric: dict[str, Any] = field(default_factory=dict)  # e.g. switch queue/port figures
    elapsed_ns: int = 0

    def ideal_ns(self, size: int, kind: str = "write") -> int:
        """FCT of a ``size``-byte message alone on an empty fabric: its packets back to
        back at the line rate, headers and wire overhead included, plus one base RTT."""
        npkts = max(1, -(-size // self.mtu))
        wire = roce.message_frame_bytes(size, self.mtu, write=kind == "write")
        wire += npkts * WIRE_OVERHEAD_BYTES
        return int(wire * 8e9 / self.line_rate_bps) + self.base_rtt_ns

    def message_started(
        self, src: str, dst: str, size: int, now_ns: int, qpn: int = 0, kind: str = "write"
    ) -> MessageRecord:
        rec = MessageRecord(len(self.messages), src, dst, size, now_ns, None, qpn, kind,
                            self.ideal_ns(size, kind))
        self.messages.append(rec)
        return rec

    @staticmethod
    def message_done(rec: MessageRecord, now_ns: int) -> None:
        rec.end_ns = now_ns

    def sample(self, key: str, now_ns: int, rate_bps: float, window_bytes: float | None) -> None:
        """Append a rate/window point for queue pair ``key`` (only when it changed)."""
        points = self.series.setdefault(key, [])
        if points and points[-1].rate_bps == rate_bps and points[-1].window_bytes == window_bytes:
            return
        points.append(SeriesPoint(now_ns, rate_bps, window_bytes))

    # -- summaries ----------------------------------------------------------------------
    def completed(self) -> list[MessageRecord]:
        return [m for m in self.messages if m.end_ns is not None]

    def goodput_bps(self) -> float:
        done = self.completed()
        if not done:
            return 0.0
        span = max(m.end_ns for m in done) - min(m.start_ns for m in done)  # type: ignore[type-var]
        return sum(m.size for m in done) * 8e9 / span if span > 0 else 0.0

    def totals(self) -> dict[str, float]:
        """NIC counters summed over hosts."""
        out: dict[str, float] = {}
        for counters in self.nic_counters.values():
            for k, v in counters.items():
                out[k] = out.get(k, 0) + v
        return out

    def summary(self) -> dict[str, Any]:
        done = self.completed()
        fcts = [float(m.fct_ns) for m in done]  # type: ignore[arg-type]
        slow = [m.slowdown for m in done if m.slowdown is not None]
        return {
            "messages": len(self.messages),
            "completed": len(done),
            "bytes": sum(m.size for m in done),
            "elapsed_ns": self.elapsed_ns,
            "goodput_bps": self.goodput_bps(),
            "fct_ns": {"mean": _mean(fcts), "p50": percentile(fcts, 50), "p95": percentile(fcts, 95),
                       "p99": percentile(fcts, 99), "max": max(fcts, default=math.nan)},
            "slowdown": {"mean": _mean(slow), "p50": percentile(slow, 50), "p95": percentile(slow, 95),
                         "p99": percentile(slow, 99), "max": max(slow, default=math.nan)},
            "counters": self.totals(),
        }

    # -- export -------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "line_rate_bps": self.line_rate_bps,
            "base_rtt_ns": self.base_rtt_ns,
            "summary": _json_safe(self.summary()),
            "messages": [_json_safe(m.row()) for m in self.messages],
            "series": {k: [asdict(p) for p in v] for k, v in self.series.items()},
            "nic_counters": self.nic_counters,
            "fabric": _json_safe(self.fabric),
        }

    def to_json(self, path: str | Path | None = None) -> str:
        text = json.dumps(self.to_dict(), indent=1, sort_keys=True)
        if path is not None:
            Path(path).write_text(text)
        return text

    def to_csv(self, directory: str | Path) -> list[Path]:
        """Write messages.csv, series.csv and counters.csv into ``directory``."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        paths = [out / "messages.csv", out / "series.csv", out / "counters.csv"]
        fields = list(MessageRecord(0, "", "", 0, 0).row())
        with paths[0].open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields)
            w.writeheader()
            for m in self.messages:
                w.writerow(m.row())
        with paths[1].open("w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["qp", "t_ns", "rate_bps", "window_bytes"])
            for key, points in self.series.items():
                for p in points:
                    w.writerow([key, p.t_ns, p.rate_bps, "" if p.window_bytes is None else p.window_bytes])
        with paths[2].open("w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["host", "counter", "value"])
            for host, counters in self.nic_counters.items():
                for k, v in sorted(counters.items()):
                    w.writerow([host, k, v])
        return paths


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else math.nan


def _json_safe(obj: Any) -> Any:
    """NaN/inf become None so that the JSON is standard (parsable by any reader)."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_safe(v) for v in obj]
    return obj
