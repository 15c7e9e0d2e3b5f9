"""Telemetry collector: INT reports and switch counters, as time series in memory and on disk.

Two sources, both target-agnostic (P4Runtime only):
- INT reports, which fabric.p4's sink clones to the collector session (sinks in report or
  echo+report mode); the controller points that session at the CPU port, so each report
  arrives as a packet-in whose payload is the report frame. Every hop record, the sink's own
  included, gives a queue-depth point for (switch, egress port) at that hop's egress time.
- Counters and registers read from every switch on each ``sample()``: cumulative tx bytes per
  port (link utilisation = delta bytes x 8 / (delta fabric time x link rate)), ECN marks,
  pauses sent, drops and INT reports per port. Fabric time is wall time / time dilation.

``write(dir)`` leaves ``alerts.json`` (the baselines' alerts, controller/alerts.py),
``samples.csv`` (one row per switch port per sample), ``int_hops.csv``
(one row per hop record) and ``summary.json``.
"""

from __future__ import annotations

import csv
import functools
import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from controller import fabric_rules
from controller.alerts import AlertMonitor
from controller.int_reports import ReportLog
from controller.results import LinkSeries
from controller.settings import Classes
from controller.textfmt import table

log = logging.getLogger(__name__)


@dataclass
class PortSample:
    switch: str
    port: int
    peer: str
    tx_bytes: int = 0
    ecn_marks: int = 0
    pauses: int = 0
    drops: int = 0
    int_reports: int = 0
    qdepth: int = 0


@dataclass
class Snapshot:
    """One sample of every switch port; utilisation relative to the previous sample."""

    wall: float
    span_us: float  # fabric time since the previous sample
    ports: dict[tuple[str, int], PortSample]
    util: dict[tuple[str, int], float] = field(default_factory=dict)
    deltas: dict[tuple[str, int], dict[str, int]] = field(default_factory=dict)
    at_us: float = 0.0  # fabric time of the sample

    def format(self) -> str:
        rows = []
        for key in sorted(self.ports):
            p = self.ports[key]
            d = self.deltas.get(key, {})
            rows.append([f"{p.switch}:{p.port}", p.peer, f"{self.util.get(key, 0.0) * 100:.1f}%", p.qdepth,
                         d.get("pauses", 0), d.get("ecn_marks", 0), d.get("drops", 0), d.get("int_reports", 0)])
        return table(["port", "to", "util", "queue (pkts)", "pauses", "ECN marks", "drops", "INT reports"], rows)

    def to_dict(self) -> dict[str, Any]:
        return {
            "wall": self.wall,
            "span_us": self.span_us,
            "ports": [{"port": f"{p.switch}:{p.port}", "to": p.peer, "util": self.util.get(k, 0.0),
                       "qdepth": p.qdepth, **{f"d_{n}": v for n, v in self.deltas.get(k, {}).items()}}
                      for k, p in sorted(self.ports.items())],
        }


class HopPoint(NamedTuple):
    """One hop record of an INT report, its times in fabric microseconds (the units the
    report's INT-MD header gives, converted): ``ReportLog.records``' fields, named when
    read (``Telemetry.hops``)."""

    switch: str
    port: int
    t_us: float
    qdepth: int
    hop_latency_us: float


_HOP_POINT = functools.partial(tuple.__new__, HopPoint)  # a record's tuple as a HopPoint, in C


class Telemetry:
    def __init__(self, ctl, fabric_us: Callable[[], float] | None = None, alerts: AlertMonitor | None = None) -> None:
        """``fabric_us``: the fabric's clock in microseconds; by default wall time over the
        time dilation (live), the engine's clock in virtual time. ``alerts``: evaluates the
        baselines on every sample (by default with the default thresholds, no log)."""
        self.ctl = ctl
        classes = ctl.settings.classes if hasattr(ctl, "settings") else Classes()  # a bare reader: the defaults
        self.alerts = alerts or AlertMonitor(ctl.topo, data_prio=classes.data_priority)
        self.topo = ctl.topo
        self.dilation = float(self.topo.time_dilation)
        self.fabric_us = fabric_us or (lambda: time.monotonic() * 1e6 / self.dilation)
        self.by_device = {s.device_id: s.name for s in self.topo.switches}
        # each switch's ports, found once: the topology finds them by walking every link
        self._ports = {s.name: self.topo.ports_of(s.name) for s in self.topo.switches}
        self._read_ports = {name: sorted(ports) for name, ports in self._ports.items()}
        self.snapshots: list[Snapshot] = []
        self.report_log = ReportLog(self.by_device, (s.name for s in self.topo.switches))
        self._lock = threading.Lock()
        self._run_start = 0  # index of the snapshot a workload started at
        self._hops_start = 0
        self._reports_start: dict[str, int] = {}
        self._prev: Snapshot | None = None

    # -- INT reports (packet-in) ----------------------------------------------------------
    def on_packet_in(self, switch: str, packet) -> None:
        """Packet-in handler for the controller, from any thread; anything that is not an INT
        report counts as malformed. The payload is the report frame of p4src/README.md ("INT
        report format"), which the sink sends whatever port the collector session points at.
        (A simulation, one thread, gives the controller ``report_log.take`` itself.)"""
        with self._lock:
            self.report_log.take(switch, packet)

    @property
    def reports(self) -> dict[str, int]:
        """INT reports received per switch."""
        return self.report_log.reports

    @property
    def malformed_reports(self) -> int:
        return self.report_log.malformed

    @property
    def hops(self) -> list[HopPoint]:
        """Every INT hop record received so far, oldest first."""
        with self._lock:
            return list(map(_HOP_POINT, self.report_log.records()))

    # -- counters ---------------------------------------------------------------------------
    def sample(self) -> Snapshot:
        now = time.monotonic()
        ports: dict[tuple[str, int], PortSample] = {}
        for s in self.topo.switches:
            try:
                values = fabric_rules.read_port_stats(self.ctl, s.name, self._read_ports[s.name])
            except Exception as e:  # a switch restarting: skip it this sample
                log.info("telemetry: %s unreadable: %s", s.name, e)
                continue
            for port, (peer, _, _) in self._ports[s.name].items():
                v = values.get(port, {})
                ports[(s.name, port)] = PortSample(s.name, port, peer, **v)
        snap = Snapshot(now, 0.0, ports, at_us=self.fabric_us())
        prev = self._prev
        if prev is not None:
            snap.span_us = snap.at_us - prev.at_us
            for key, p in ports.items():
                q = prev.ports.get(key)
                if q is None:
                    continue
                snap.deltas[key] = {n: max(0, getattr(p, n) - getattr(q, n))
                                    for n in ("ecn_marks", "pauses", "drops", "int_reports")}
                dbytes = (p.tx_bytes - q.tx_bytes) % (1 << 32)
                link = self._ports[key[0]][key[1]][2]
                if snap.span_us > 0:
                    snap.util[key] = min(1.0, dbytes * 8 / (snap.span_us * 1e-6 * link.rate_gbps * 1e9))
        with self._lock:
            self.snapshots.append(snap)
            self._prev = snap
        self.alerts.feed(snap)
        return snap

    def start_run(self) -> None:
        """Mark the start of a workload: totals and series below count from the next sample on."""
        self.sample()
        with self._lock:
            self._run_start = len(self.snapshots) - 1
            self._hops_start = len(self.report_log)
            self._reports_start = dict(self.reports)

    def run_alerts(self) -> list[dict[str, Any]]:
        """The alerts that started since ``start_run`` (or are still open), as dicts."""
        since = self.snapshots[self._run_start].at_us - self.alerts.t0_us if self.snapshots else 0.0
        return [a.to_dict() for a in self.alerts.all() if a.start_us >= since or a.end_us is None]

    def _run_snaps(self) -> list[Snapshot]:
        return self.snapshots[self._run_start:]

    def run_totals(self) -> dict[str, int]:
        snaps = self._run_snaps()
        out = {"pauses": 0, "ecn_marks": 0, "drops": 0, "int_reports": 0}
        for snap in snaps[1:]:
            for d in snap.deltas.values():
                for k in out:
                    out[k] += d.get(k, 0)
        received = sum(self.reports.values()) - sum(self._reports_start.values())
        out["int_reports"] = max(out["int_reports"], received)
        return out

    def link_series(self) -> list[LinkSeries]:
        """Per direction of every switch-to-switch link (the fabric's links), named a:port->b."""
        snaps = self._run_snaps()[1:]
        names = set(self.topo.switch_names())
        out = []
        for s in self.topo.switches:
            for port, (peer, _, _) in sorted(self._ports[s.name].items()):
                if peer not in names:
                    continue
                series = LinkSeries(f"{s.name}:{port}->{peer}")
                t = 0.0
                for snap in snaps:
                    t += snap.span_us
                    series.times_us.append(round(t, 1))
                    series.util.append(round(snap.util.get((s.name, port), 0.0), 4))
                out.append(series)
        return out

    def queue_depth_series(self) -> dict[str, list[tuple[float, int]]]:
        """"switch:port" -> (time, packets) from the INT hop records of the current run, time
        counted from the run's first record (switch clocks are only roughly aligned)."""
        with self._lock:
            hops = list(map(_HOP_POINT, self.report_log.records(self._hops_start)))
        t0 = min((h.t_us for h in hops), default=0)
        out: dict[str, list[tuple[float, int]]] = {}
        for h in hops:
            out.setdefault(f"{h.switch}:{h.port}", []).append((float(h.t_us - t0), h.qdepth))
        return out

    def write(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        with open(directory / "samples.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["sample", "span_us", "switch", "port", "to", "util", "qdepth", "tx_bytes",
                        "ecn_marks", "pauses", "drops", "int_reports"])
            for i, snap in enumerate(self.snapshots):
                for key, p in sorted(snap.ports.items()):
                    w.writerow([i, round(snap.span_us, 1), p.switch, p.port, p.peer, round(snap.util.get(key, 0.0), 4),
                                p.qdepth, p.tx_bytes, p.ecn_marks, p.pauses, p.drops, p.int_reports])
        with open(directory / "int_hops.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["switch", "egress_port", "egress_ts_us", "qdepth_pkts", "hop_latency_us"])
            for h in self.hops:
                w.writerow([h.switch, h.port, h.t_us, h.qdepth, h.hop_latency_us])
        (directory / "alerts.json").write_text(json.dumps([a.to_dict() for a in self.alerts.all()], indent=1))
        (directory / "summary.json").write_text(json.dumps({
            "samples": len(self.snapshots),
            "int_reports_per_switch": self.reports,
            "malformed_reports": self.malformed_reports,
            "int_hop_records": len(self.report_log),
        }, indent=1))
