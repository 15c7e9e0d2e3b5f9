"""Alerts against the RoCE deployment guide's counter baselines, evaluated on every telemetry
sample (``fabricctl telemetry``, every run, live or simulated).

Baselines (``AlertSettings``, all settable):
- microburst: more than ``pause_per_s`` (100) PFC pause frames per second sent on a port;
- persistent congestion: ECN-marked share of a port's packets above ``ecn_rate`` (5 %);
- alarm: any receive discard (``discards``: more than 0 per sample), on a switch port
  (fabric.p4's ``ingress_drops``) or a NIC (frames it dropped before a QP: ``rx_discards_phy``).

An alert names where (switch, port and priority; or host, and QP when the NIC knows it), when
it started (the first sample over the baseline) and when it ended (the first sample back
under it), in fabric microseconds, and its worst value. fabric.p4 sends pauses and marks ECN
on the lossless (data) priority only, so those alerts carry that priority; its drop counter
is per (port, priority) but telemetry reads it summed, so a discard alert says "all".
The ECN share uses the port's transmitted bytes over a full data frame (the telemetry has no
per-port packet counter), so it is a lower bound on the packet count and an upper bound on
the share when frames are short.

Alerts are appended, one JSON object per line, to a log (``alerts.jsonl``) as they open and
close; ``fabricctl alerts`` lists that log and ``--follow`` streams it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from controller import fabric_rules


@dataclass
class AlertSettings:
    pause_per_s: float = 100.0
    ecn_rate: float = 0.05
    discards: int = 0

    def __post_init__(self) -> None:
        if self.pause_per_s < 0 or not 0 <= self.ecn_rate <= 1 or self.discards < 0:
            raise ValueError("alert thresholds: pause_per_s >= 0, 0 <= ecn_rate <= 1, discards >= 0")


KINDS = {"microburst": "PFC pauses/s", "congestion": "ECN mark rate", "discards": "receive discards"}


@dataclass
class Alert:
    kind: str  # microburst | congestion | discards
    where: str  # "leaf1:3 prio 3", "h1_1", "h1_1 QP 256"
    start_us: float
    end_us: float | None = None
    peak: float = 0.0
    switch: str | None = None
    port: int | None = None
    prio: int | str | None = None
    host: str | None = None
    qp: int | None = None

    def describe(self) -> str:
        end = "ongoing" if self.end_us is None else f"{self.end_us:.1f}"
        peak = f"{self.peak * 100:.1f}%" if self.kind == "congestion" else f"{self.peak:g}"
        return f"{self.kind:<10} {self.where:<18} {KINDS[self.kind]} peak {peak:<10} from {self.start_us:.1f} to {end} us"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class AlertMonitor:
    """Feeds on telemetry snapshots (and NIC counters); keeps open and closed alerts."""

    def __init__(self, topo, settings: AlertSettings | None = None, data_prio: int = 3,
                 log: Path | None = None, on_change: Callable[[str, Alert], None] | None = None,
                 t0_us: float = 0.0) -> None:
        self.topo = topo
        self.settings = settings or AlertSettings()
        self.data_prio = data_prio
        self.frame = fabric_rules.frame_bytes(topo)
        self.log = log
        self.on_change = on_change
        self.t0_us = t0_us
        self.open: dict[tuple[str, str], Alert] = {}
        self.closed: list[Alert] = []
        self._nic_prev: dict[str, float] = {}

    def all(self) -> list[Alert]:
        return sorted([*self.closed, *self.open.values()], key=lambda a: (a.start_us, a.where, a.kind))

    def _update(self, kind: str, where: str, over: bool, value: float, t_us: float, **ids: Any) -> None:
        key = (kind, where)
        alert = self.open.get(key)
        if over and alert is None:
            alert = self.open[key] = Alert(kind, where, t_us, peak=value, **ids)
            self._emit("open", alert)
        elif over:
            alert.peak = max(alert.peak, value)
        elif alert is not None:
            alert.end_us = t_us
            self.closed.append(self.open.pop(key))
            self._emit("close", alert)

    def _emit(self, what: str, alert: Alert) -> None:
        if self.log is not None:
            self.log.parent.mkdir(parents=True, exist_ok=True)
            with open(self.log, "a") as f:
                f.write(json.dumps({"event": what, **alert.to_dict()}) + "\n")
        if self.on_change is not None:
            self.on_change(what, alert)

    def feed(self, snap) -> None:
        """One telemetry ``Snapshot`` (its per-port deltas over ``span_us``)."""
        if snap.span_us <= 0:
            return
        t = snap.at_us - self.t0_us
        st = self.settings
        for (switch, port), d in sorted(snap.deltas.items()):
            where = f"{switch}:{port}"
            rate = d.get("pauses", 0) / (snap.span_us * 1e-6)
            self._update("microburst", f"{where} prio {self.data_prio}", rate > st.pause_per_s, rate, t,
                         switch=switch, port=port, prio=self.data_prio)
            pkts = snap.util.get((switch, port), 0.0) * snap.span_us * 1e-6 * self._rate(switch, port) / 8 / self.frame
            marks = d.get("ecn_marks", 0)
            share = marks / pkts if pkts >= 1 else (1.0 if marks else 0.0)
            self._update("congestion", f"{where} prio {self.data_prio}", share > st.ecn_rate, min(1.0, share), t,
                         switch=switch, port=port, prio=self.data_prio)
            drops = d.get("drops", 0)
            self._update("discards", f"{where} prio all", drops > st.discards, drops, t,
                         switch=switch, port=port, prio="all")

    def _rate(self, switch: str, port: int) -> float:
        return self.topo.ports_of(switch)[port][2].rate_gbps * 1e9

    def feed_nics(self, t_us: float, counters: dict[str, dict[str, float]]) -> None:
        """NIC counters (``nic_counters``: cumulative) per host: a frame dropped before any QP
        is a receive discard on that host."""
        for host, c in sorted(counters.items()):
            total = c.get("frames_dropped", 0)
            delta = total - self._nic_prev.get(host, total)
            self._nic_prev[host] = total
            self._update("discards", host, delta > self.settings.discards, delta, t_us - self.t0_us, host=host)

    def close_all(self, t_us: float) -> None:
        """The run ended: what is still open ends now."""
        for key in list(self.open):
            alert = self.open.pop(key)
            alert.end_us = t_us - self.t0_us
            self.closed.append(alert)
            self._emit("close", alert)


def read_log(path: Path) -> list[dict[str, Any]]:
    """The alerts of a log, one per alert (its latest line: open, or closed with its end)."""
    out: dict[tuple, dict[str, Any]] = {}
    if not path.exists():
        return []
    for line in path.read_text().splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        out[(rec["kind"], rec["where"], rec["start_us"])] = rec
    return sorted(out.values(), key=lambda r: (r["start_us"], r["where"]))


def format_record(rec: dict[str, Any]) -> str:
    fields = {k: rec[k] for k in ("kind", "where", "start_us", "end_us", "peak", "switch", "port", "prio",
                                  "host", "qp") if k in rec}
    return Alert(**fields).describe()
