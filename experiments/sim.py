"""What every experiment does to run one point on the virtual-time fabric, in one place.

A point's ``params`` hold the experiment's own knobs (``profile``, ``lb``, ``loss``...) and
dotted setting overrides: ``section.key`` of the controller's settings (``ecn.kmin_bytes``,
``pfc.enabled``, ``nic.reliability``), ``cc.algo`` for the NIC's congestion control and
``cc.<param>`` for one of its parameters (``cc.rate_ai_bps``). :func:`run` configures a fresh
fabric through the controller (``controller.sim_cmd.simulate``: fabric.p4 on every switch,
a ``nicmodel.Nic`` per host), runs the workload and returns the run with the measurements
experiments share (:class:`Measured`).
"""

from __future__ import annotations

import functools
import math
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from controller.fabric_rules import lossless_queue_depth
from controller.pipeline import Pipeline, compile_fabric
from controller.profiles import PROFILES, settings_for
from controller.results import RunResult
from controller.settings import Settings
from controller.sim_cmd import SimRun, simulate
from controller.workloads import build_result
from topo.spec import Topology

# The wording every report carries where results depend on bytes a hardware RNIC would not
# accept (nicmodel/README.md, "Our extensions to the ACK").
EXTENSIONS_NOTE = ("non-standard RoCEv2: selective repeat's SACK and HPCC's INT echo travel in bytes after the "
                   "AETH flagged by BTH reserved bits (nicmodel/README.md); results of those rows describe a NIC "
                   "with these extensions, not an off-the-shelf RNIC")


@functools.lru_cache(maxsize=1)
def pipeline() -> Pipeline:
    """fabric.p4 compiled for our target once per process (every point loads the same program)."""
    return compile_fabric("ours", Path(tempfile.mkdtemp(prefix="aifabric-exp-build-")))


def split_params(params: dict[str, Any]) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """(the experiment's own knobs, settings overrides by section) from a point's params."""
    own: dict[str, Any] = {}
    overrides: dict[str, dict[str, Any]] = {}
    for key, value in params.items():
        section, dot, name = key.partition(".")
        if not dot:
            own[key] = value
        elif section == "cc" and name == "algo":
            overrides.setdefault("nic", {})["cc"] = value
        elif section == "cc":
            overrides.setdefault("nic", {}).setdefault("cc_params", {})[name] = value
        else:
            overrides.setdefault(section, {})[name] = value
    return own, overrides


def settings(profile: str, overrides: dict[str, dict[str, Any]]) -> Settings:
    """The profile's settings with the point's overrides; ``cc_params`` merge into the profile's."""
    nic = overrides.get("nic", {})
    if "cc_params" in nic and "cc" not in nic:
        base = dict(PROFILES[profile].get("nic", {}).get("cc_params", {}))
        overrides = {**overrides, "nic": {**nic, "cc_params": {**base, **nic["cc_params"]}}}
    return settings_for(profile, overrides)


def lossless_queues(topo: Topology, profile: str, overrides: dict[str, dict[str, Any]]) -> Topology:
    """``topo`` with switch queues deep enough for PFC to keep the lossless class lossless under
    these settings (``controller.fabric_rules.lossless_queue_depth``): with the default 128
    packets, two flows hashed onto one uplink or an incast overflow a queue before XOFF is
    reached on any one ingress port, and the run measures tail drops and their recovery instead
    of the load balancing or congestion control under test. Used with PFC off too, so a
    comparison of PFC on and off sees the same buffer."""
    depth = lossless_queue_depth(topo, settings(profile, overrides))
    return replace(topo, queue_depth_pkts=max(topo.queue_depth_pkts, depth))


def uses_extensions(s: Settings, nic_options: dict[str, Any] | None = None) -> bool:
    """Does this configuration put SACK or INT echo bytes on the wire?"""
    if nic_options and nic_options.get("roce_extensions") is False:
        return False
    return s.nic.reliability == "sr" or s.nic.cc == "hpcc"


@dataclass
class Sampler:
    """Samples, every engine tick (10 simulated us), the backlog of chosen switch egress ports
    (packets) and the bytes sent so far on chosen links; experiments turn these into queue
    statistics and per-flow throughput over time."""

    ports: dict[str, tuple[str, int]] = field(default_factory=dict)  # label -> (switch, port)
    links: dict[str, str] = field(default_factory=dict)  # label -> fabric link name
    times_ns: list[int] = field(default_factory=list)
    queue: dict[str, list[int]] = field(default_factory=dict)
    sent: dict[str, list[int]] = field(default_factory=dict)
    def tick(self, fab: Any, now: int) -> None:
        self.times_ns.append(now)
        for label, (sw, port) in self.ports.items():
            p = fab.switches[sw].device.tm.ports.get(port)
            self.queue.setdefault(label, []).append(p.backlog if p is not None else 0)
        for label, name in self.links.items():
            self.sent.setdefault(label, []).append(fab.links[name].counters.bytes)

    def rates_gbps(self, label: str) -> list[float]:
        """Throughput of a sampled link between consecutive samples."""
        t, b = self.times_ns, self.sent.get(label, [])
        return [(b[i] - b[i - 1]) * 8 / (t[i] - t[i - 1]) if t[i] > t[i - 1] else 0.0 for i in range(1, len(b))]


@dataclass
class Measured:
    """A finished point: the simulation, the controller's result view of it, and the settings."""

    sim: SimRun
    result: RunResult
    settings: Settings
    extensions: bool

    def base_metrics(self) -> dict[str, Any]:
        r = self.result
        fcts = sorted(m.fct_us for m in r.messages)
        return {
            "ok": r.ok and self.sim.done,
            "completion_us": round(r.completion_us, 3),
            "goodput_gbps": round(r.goodput_gbps, 3),
            "retransmissions": r.retransmissions,
            "timeouts": r.timeouts,
            "naks": r.naks,
            "cnps": r.cnps,
            "pauses": r.pauses,
            "ecn_marks": r.ecn_marks,
            "drops": r.drops,
            # the traffic manager's tail drops (queue full) are not P4 counters: read on the device
            "tm_drops": sum(node.device.stats.get("drop_tm", 0) for node in self.sim.fabric.switches.values()),
            "reorder_peak_us": round(r.reorder_peak_us, 3),
            "ooo_dropped": r.ooo_dropped,
            "fct_p50_us": round(percentile(fcts, 0.5), 3),
            "fct_p99_us": round(percentile(fcts, 0.99), 3),
            "nonstandard_roce": self.extensions,
            "errors": "; ".join(r.errors[:3]),
        }

    def link_util(self, names: list[str]) -> list[float]:
        """Busy fraction of each named fabric link over the workload's makespan."""
        span_ns = self.result.completion_us * 1e3
        links = self.sim.fabric.links
        return [min(1.0, links[n].counters.busy_ns / span_ns) if span_ns > 0 else 0.0 for n in names]


def percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return math.nan
    return sorted_values[min(len(sorted_values) - 1, max(0, math.ceil(q * len(sorted_values)) - 1))]


def run(topo: Topology, profile: str, overrides: dict[str, dict[str, Any]], specs: dict[str, dict[str, Any]], *,
        seed: int, workload: str, impaired: list[tuple[str, str, dict[str, float]]] = (),
        nic_options: dict[str, Any] | None = None, sampler: Sampler | None = None,
        until_ns: int | None = None) -> Measured:
    """One point on a fresh simulated fabric (configured by the controller), run to completion."""
    s = settings(profile, overrides)
    hook: Callable[[Any, int], None] | None = sampler.tick if sampler is not None else None
    for spec in specs.values():
        spec.setdefault("seed", seed)
    # telemetry is sampled at the start and the end only: counters over the run are what the
    # experiments report, and each sample is a P4Runtime read of every port of every switch
    sim = simulate(topo, pipeline(), s, profile, specs, seed=seed, impaired=impaired, nic_options=nic_options,
                   on_tick=hook, sample_us=1e9, until_ns=until_ns, observe=None)
    try:
        stats = {h: nic.stats() for h, nic in sim.fabric.nics.items() if h in specs}
        result = build_result(workload, profile, specs, stats, sim.telemetry, list(sim.errors))
    finally:
        sim.controller.close()
    return Measured(sim, result, s, uses_extensions(s, nic_options))
