"""The mixed-traffic report: RoCE alone against RoCE with best-effort TCP beside it.

The deployment guide's pre-launch stress test mixes collective traffic with TCP background
traffic to catch PFC misfiring. What the report shows, live and in virtual time alike:

- RoCE unaffected: the workload's comparison table alone and with TCP (goodput, FCT, pauses),
  and its goodput with TCP as a share of its goodput alone;
- TCP taking the rest: each background flow's throughput before, while and after RoCE runs
  (fabric Gb/s);
- no PFC pause from TCP: PFC frames the switches sent, and the NICs received, per priority;
  TCP's priority (0) must show none, the RoCE class's pauses are there alone too.

Pause frames are counted by priority from fabric.p4's ``pfc_pauses_sent`` (indexed port x 8
+ priority) on every switch, before and after each run.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from controller.repeats import lag_flagged
from controller.report import comparison_table
from controller.results import RunResult
from controller.textfmt import table

PRIORITIES = 8


def switch_pauses(ctl) -> Counter:
    """priority -> PFC pause frames sent so far, summed over every switch and port."""
    name = ctl.p4.resolve("counters", "pfc_pauses_sent")
    out: Counter = Counter()
    for s in ctl.topo.switches:
        for index, (packets, _) in ctl.read_counter(s.name, name).items():
            out[index % PRIORITIES] += packets
    return out


def nic_pauses(result: RunResult) -> Counter:
    """priority -> PFC frames the NICs received during ``result``'s run."""
    out: Counter = Counter()
    for summary in result.nic_stats.values():
        counters = (summary or {}).get("counters", {}) or {}
        for p in range(PRIORITIES):
            out[p] += int(counters.get(f"pause_frames_prio{p}", 0) or 0)
    return +out  # priorities without pauses left out


@dataclass
class TcpShare:
    """One best-effort flow's throughput in fabric Gb/s, per phase of the RoCE run."""

    src: str
    dst: str
    before_gbps: float  # TCP alone, before the RoCE workload started
    during_gbps: float  # while the RoCE workload ran
    after_gbps: float  # after it finished
    bytes: int  # payload received over the whole flow
    lost: int  # segments lost (simulation: sequence gaps) or resent (iperf3: retransmits)


@dataclass
class MixedReport:
    mode: str  # "live, time dilation D" or "virtual time"
    workload: str
    data_priority: int  # RoCE's lossless class
    tcp_priority: int  # best effort (classes.default_priority)
    alone: RunResult
    mixed: RunResult
    tcp: list[TcpShare]
    switch_pauses_alone: dict[int, int]
    switch_pauses_mixed: dict[int, int]
    nic_pauses_alone: dict[int, int]
    nic_pauses_mixed: dict[int, int]
    notes: list[str] = field(default_factory=list)

    @property
    def goodput_ratio(self) -> float:
        a = self.alone.goodput_gbps
        return self.mixed.goodput_gbps / a if a > 0 else 0.0

    def tcp_total(self, phase: str) -> float:
        return sum(getattr(t, f"{phase}_gbps") for t in self.tcp)

    def tcp_pauses(self) -> int:
        """PFC frames on TCP's priority in the mixed run: switches' sent plus NICs' received."""
        p = self.tcp_priority
        return self.switch_pauses_mixed.get(p, 0) + self.nic_pauses_mixed.get(p, 0)

    def verdicts(self) -> list[str]:
        a, m = self.alone, self.mixed
        d, t = self.data_priority, self.tcp_priority
        return [
            f"RoCE with TCP beside it: goodput {m.goodput_gbps:.3g} Gb/s = {self.goodput_ratio:.0%} of alone "
            f"({a.goodput_gbps:.3g}), FCT p99 {m.fct_percentiles()['p99']:.4g} us (alone "
            f"{a.fct_percentiles()['p99']:.4g}), {'data intact' if m.ok else 'ERRORS: ' + '; '.join(m.errors)}",
            f"TCP took the rest: {self.tcp_total('before'):.3g} Gb/s alone, {self.tcp_total('during'):.3g} Gb/s "
            f"while RoCE ran, {self.tcp_total('after'):.3g} Gb/s after (all flows, fabric time)",
            f"PFC pauses on priority {t} (TCP): {self.tcp_pauses()}; on priority {d} (RoCE): "
            f"{self.switch_pauses_alone.get(d, 0)} alone, {self.switch_pauses_mixed.get(d, 0)} with TCP",
        ] + [f"{label}: a switch or NIC ran late against the dilated clock (scheduling lag p99 "
             f"{r.worst_lag_p99_ns / 1e3:.3g} us): this machine's load, not the fabric, shaped its figures"
             for label, r in (("RoCE alone", a), ("RoCE with TCP", m)) if lag_flagged(r)]

    def format(self) -> str:
        prios = sorted({self.tcp_priority, self.data_priority}
                       | {p for c in (self.switch_pauses_alone, self.switch_pauses_mixed,
                                      self.nic_pauses_alone, self.nic_pauses_mixed) for p, n in c.items() if n})
        pause_rows = [[label, *[counts.get(p, 0) for p in prios]] for label, counts in (
            ("switches sent, RoCE alone", self.switch_pauses_alone), ("switches sent, with TCP", self.switch_pauses_mixed),
            ("NICs received, RoCE alone", self.nic_pauses_alone), ("NICs received, with TCP", self.nic_pauses_mixed))]
        tcp_rows = [[f"{t.src} -> {t.dst}", f"{t.before_gbps:.3g}", f"{t.during_gbps:.3g}", f"{t.after_gbps:.3g}",
                     t.bytes, t.lost] for t in self.tcp]
        lines = [f"{self.workload} alone and with TCP background on priority {self.tcp_priority} ({self.mode}; "
                 "times in fabric microseconds):",
                 comparison_table([self.alone, self.mixed]), "",
                 "TCP background (best effort), fabric Gb/s:",
                 table(["flow", "before RoCE", "during RoCE", "after RoCE", "bytes", "lost/resent"], tcp_rows), "",
                 "PFC pause frames by priority:",
                 table(["", *[f"prio {p}" + (" (TCP)" if p == self.tcp_priority else " (RoCE)" if p == self.data_priority
                                             else "") for p in prios]], pause_rows), ""]
        return "\n".join(lines + self.verdicts() + self.notes)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["alone"], d["mixed"] = _summary(self.alone), _summary(self.mixed)
        d["goodput_ratio"] = self.goodput_ratio
        d["tcp_pauses"] = self.tcp_pauses()
        return d

    def save(self, out: Path) -> Path:
        out.mkdir(parents=True, exist_ok=True)
        path = out / "mixed_traffic.json"
        path.write_text(json.dumps(self.to_dict(), indent=1))
        return path


def _summary(r: RunResult) -> dict[str, Any]:
    return {"lag_flagged": lag_flagged(r),
            "goodput_gbps": r.goodput_gbps, "completion_us": r.completion_us, "fct": r.fct_percentiles(),
            "ok": r.ok, "errors": r.errors, "data_verified": r.data_verified, "pauses": r.pauses,
            "retransmissions": r.retransmissions, "bytes_delivered": r.bytes_delivered}
