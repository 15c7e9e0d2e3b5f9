"""What a drill records and how it reports it: before / during / after the fault.

During the run, ``Timeline.sample(t_us)`` (after every telemetry sample) reads each NIC's
counters through its management interface (live or simulated alike); at the end the
telemetry's per-port deltas, the NICs' message records and the monitor's events are cut into
three phases at the fault's start and end. The table shows per phase goodput, FCT p99 of the
messages that finished in it, PFC pauses, switch drops (the program's own; the queues' tail
and watchdog drops from the monitor's ``queue_stats``, where the target has it), ECN marks,
resends, NIC timeouts, watchdog events and the controller's reactions with their times; the
heat map is the telemetry's link utilisation (links x time) with the fault marked.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.alerts import format_record
from controller.oper_status import Event, parse_queue_stats
from controller.report import _pyplot
from controller.textfmt import table

PHASES = ("before", "during", "after")
SHOWN_ERRORS = 10  # workload errors printed with the table (all are in the JSON record)


@dataclass
class Timeline:
    """Samples of the NICs' counters and the fabric's events, in fabric microseconds from
    the start of the workload."""

    name: str
    fault: str  # e.g. "leaf1:3 down"
    start_us: float  # fault start and end, from the start of the run
    end_us: float
    t0_us: float = 0.0  # fabric time of the run's start
    nic_samples: list[tuple[float, dict[str, dict[str, float]]]] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)  # size, start_us, end_us (run-relative)
    ports: list[tuple[float, float, dict[str, int]]] = field(default_factory=list)  # (t, span, totals)
    errors: list[str] = field(default_factory=list)
    queue_drops: list[tuple[float, int, int]] = field(default_factory=list)  # FabricMonitor.drops
    notes: list[str] = field(default_factory=list)  # what the reader should know to read the table right
    alerts: list[dict[str, Any]] = field(default_factory=list)  # controller/alerts.py, as dicts
    # one switch's queues (port, queue) -> (depth, dequeued so far), when the drill watches them
    queue_samples: list[tuple[float, dict[tuple[int, int], tuple[int, int]]]] = field(default_factory=list)

    def sample_nics(self, t_us: float, nics: Mapping[str, Any]) -> None:
        counters = {}
        for host, nic in nics.items():
            try:
                counters[host] = nic.status()["counters"]
            except Exception:  # noqa: BLE001 - a NIC restarting: its row is missing this time
                continue
        self.nic_samples.append((t_us - self.t0_us, counters))

    def sample_queues(self, t_us: float, queue_stats: str | None) -> None:
        """One switch's queue depths and dequeue counters, from its ``queue_stats`` as the
        monitor's poll read it (None: the switch was restarting, this sample is missing)."""
        if queue_stats is not None:
            self.queue_samples.append((t_us - self.t0_us, parse_queue_stats(queue_stats)))

    def take_port_deltas(self, tel) -> None:
        """The fabric's per-sample totals (pauses, drops, ECN marks) from the run's telemetry."""
        for snap in tel.snapshots[tel._run_start + 1:]:
            totals: dict[str, int] = {}
            for d in snap.deltas.values():
                for k, v in d.items():
                    totals[k] = totals.get(k, 0) + v
            self.ports.append((snap.at_us - self.t0_us, snap.span_us, totals))

    def arrivals_ns(self, hold_ns: int = 0) -> int:
        """How long a Poisson workload's flows keep arriving: through the fault and as long
        again as before it (at least 50 us), or the whole run when it is held longer; a fixed
        number of flows could be over before the fault is."""
        return max(int(self.end_us * 1e3) + int(max(50.0, self.start_us) * 1e3), hold_ns)

    def phase_of(self, t_us: float) -> str:
        return "before" if t_us < self.start_us else "during" if t_us < self.end_us else "after"

    def bounds(self) -> dict[str, tuple[float, float]]:
        last = max([self.end_us] + [t for t, _ in self.nic_samples] + [m["end_us"] for m in self.messages
                                                                         if m["end_us"] is not None])
        return {"before": (0.0, self.start_us), "during": (self.start_us, self.end_us), "after": (self.end_us, last)}

    def _nic_delta(self, phase: str, key: str) -> float:
        lo, hi = self.bounds()[phase]

        def at(t: float) -> float:  # the counter total at the last sample not after t
            best: dict[str, dict[str, float]] = {}
            for ts, c in self.nic_samples:
                if ts <= t + 1e-9:
                    best = c
            return sum(v.get(key, 0) for v in best.values())

        return max(0.0, at(hi) - at(lo))

    def _port_total(self, phase: str, key: str) -> int:
        return sum(d.get(key, 0) for t, _, d in self.ports if self.phase_of(t - 1e-9) == phase)

    def rows(self) -> list[list[object]]:
        bounds = self.bounds()
        rows: list[list[object]] = [["span (us)", *(f"{lo:.0f}-{hi:.0f}" for lo, hi in bounds.values())]]

        def goodput(phase: str) -> str:
            lo, hi = bounds[phase]
            return f"{self._nic_delta(phase, 'payload_bytes_delivered') * 8 / ((hi - lo) * 1e3):.1f}" if hi > lo else "-"

        def p99(phase: str) -> str:
            fcts = sorted(m["end_us"] - m["start_us"] for m in self.messages
                          if m["end_us"] is not None and self.phase_of(m["end_us"]) == phase)
            return f"{fcts[min(len(fcts) - 1, int(0.99 * len(fcts)))]:.1f}" if fcts else "-"

        rows.append(["goodput (Gb/s)", *(goodput(p) for p in PHASES)])
        rows.append(["messages done", *(sum(1 for m in self.messages if m["end_us"] is not None
                                            and self.phase_of(m["end_us"]) == p) for p in PHASES)])
        rows.append(["FCT p99 (us)", *(p99(p) for p in PHASES)])
        rows.append(["PFC pauses sent (switches)", *(self._port_total(p, "pauses") for p in PHASES)])
        rows.append(["switch drops", *(self._port_total(p, "drops") for p in PHASES)])
        for i, name in ((1, "queue-full drops"), (2, "watchdog drops")):
            rows.append([name, *(sum(d[i] for d in self.queue_drops if self.phase_of(d[0]) == p) for p in PHASES)])
        rows.append(["ECN marks", *(self._port_total(p, "ecn_marks") for p in PHASES)])
        rows.append(["resent packets (NICs)", *(int(self._nic_delta(p, "retransmitted_pkts")) for p in PHASES)])
        rows.append(["NIC ack timeouts", *(int(self._nic_delta(p, "timeouts")) for p in PHASES)])
        rows.append(["pause frames into NICs", *(int(self._nic_delta(p, "pause_frames_received")) for p in PHASES)])
        rows.append(["watchdog events", *(sum(1 for e in self.events if e.kind.startswith("watchdog")
                                              and self.phase_of(e.t_us) == p) for p in PHASES)])
        rows.append(["controller reactions", *(sum(1 for e in self.events if e.kind in REACTIONS
                                                   and self.phase_of(e.t_us) == p) for p in PHASES)])
        return rows

    def format(self) -> str:
        out = [f"drill {self.name}: {self.fault} at {self.start_us:.0f} us, back at {self.end_us:.0f} us "
               "(fabric time from the workload's start)",
               table(["", *PHASES], self.rows())]
        out += [f"note: {n}" for n in self.notes]
        if self.events:
            out.append("events (fabric us):")
            out += [f"  {e.t_us:>10.1f}  {e.kind:<18} {e.where():<16} {e.detail}" for e in self.events]
        if self.alerts:
            out.append("alerts (fabric us):")
            out += [f"  {format_record(a)}" for a in self.alerts]
        if self.errors:  # every one is in the JSON record; a screenful here
            more = f"; ... {len(self.errors) - SHOWN_ERRORS} more" if len(self.errors) > SHOWN_ERRORS else ""
            out.append(f"errors ({len(self.errors)}): " + "; ".join(self.errors[:SHOWN_ERRORS]) + more)
        return "\n".join(out)

    def to_dict(self) -> dict[str, Any]:
        return {"drill": self.name, "fault": self.fault, "start_us": self.start_us, "end_us": self.end_us,
                "table": self.rows(), "events": [e.to_dict() for e in self.events], "alerts": self.alerts,
                "errors": self.errors, "notes": self.notes}

    def max_stall_us(self) -> float:
        """The longest time any host received no payload while more was still to come
        (between two samples in which its delivered bytes grew): how long the fault stalled
        RoCE traffic at worst, to the sampling interval."""
        worst = 0.0
        hosts = {h for _, c in self.nic_samples for h in c}
        for h in hosts:
            last_t, last_v = None, None
            for t, c in self.nic_samples:
                v = c.get(h, {}).get("payload_bytes_delivered")
                if v is None:
                    continue
                if last_v is None or v > last_v:
                    if last_t is not None and last_v is not None:
                        worst = max(worst, t - last_t)
                    last_t, last_v = t, v
        return worst


REACTIONS = ("reroute", "restore")


def heat_map(tl: Timeline, links, path: Path) -> Path:
    """Link utilisation (links x time) with the fault's start and end marked."""
    plt = _pyplot()
    path.parent.mkdir(parents=True, exist_ok=True)
    n = max((len(s.util) for s in links), default=0)
    fig, ax = plt.subplots(figsize=(8, 0.35 * max(1, len(links)) + 2))
    if n:
        grid = [s.util + [0.0] * (n - len(s.util)) for s in links]
        end = max((s.times_us[-1] for s in links if s.times_us), default=float(n)) or float(n)
        im = ax.imshow(grid, aspect="auto", vmin=0.0, vmax=1.0, cmap="viridis", interpolation="nearest",
                       extent=(0.0, end, len(links) - 0.5, -0.5))
        ax.set_yticks(range(len(links)), [s.name for s in links], fontsize=7)
        fig.colorbar(im, ax=ax, fraction=0.04)
    for x, style in ((tl.start_us, "-"), (tl.end_us, "--")):
        ax.axvline(x, color="red", linestyle=style, linewidth=1.5)
    ax.set_title(f"drill {tl.name}: {tl.fault} (red: fault start, dashed: end)")
    ax.set_xlabel("time (us, fabric time)")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def save(tl: Timeline, links, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    js = out / f"drill_{tl.name}.json"
    js.write_text(json.dumps(tl.to_dict(), indent=1))
    return [js, heat_map(tl, links, out / f"drill_{tl.name}_heatmap.png")]
