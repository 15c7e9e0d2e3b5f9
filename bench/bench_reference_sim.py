"""Fast reference switch model (fabricsim.reference_fabric) speed: wall time per simulated
millisecond of a full transfer (2 senders into 1 receiver at 100 Gb/s with DCQCN through the
simulated switch), and events per second."""

from __future__ import annotations

import time

from bench.result import Result
from fabricsim.reference_fabric import FabricConfig, SimFabric
from nicmodel.settings import NicSettings


def _incast(cc: str, size: int) -> tuple[float, int, int]:
    fabric = SimFabric(FabricConfig(hosts=3))
    settings = NicSettings(cc=cc, base_rtt_ns=fabric.base_rtt_ns())
    t0 = time.perf_counter()
    stats = fabric.run({"kind": "incast", "size": size, "dst": 2, "verify": False}, settings)
    wall = time.perf_counter() - t0
    if stats.summary()["completed"] != 2:
        raise RuntimeError(f"{cc} incast did not complete")
    return wall, stats.elapsed_ns, fabric.sim.events_run


def run() -> list[Result]:
    results = []
    for cc in ("dcqcn", "hpcc"):
        wall, sim_ns, events = _incast(cc, 2 * 1024 * 1024)
        detail = f"2x2 MiB incast at 100 Gb/s, {sim_ns / 1e3:.0f} us simulated, {events} events"
        results.append(Result(f"reference sim {cc} wall per sim ms", wall / (sim_ns / 1e6), "s/sim-ms", detail))
        results.append(Result(f"reference sim {cc} events/s", events / wall, "events/s", detail))
    return results
