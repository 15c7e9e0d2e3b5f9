"""Virtual-time fabric speed and size: fabric.p4 on every switch, nicmodel.Nic on every host.

(a) ring all-reduce of 1 MiB per host on leaf/spine 2x2x2 (baseline profile);
(b) fat tree k=4, WebSearch Poisson arrivals at 50 % load for 1 ms, run to completion
    (ai-fabric profile, one queue pair per flow);
(c) memory of a fat tree k=8 (128 hosts, 80 switches) with its pipeline and state installed.
Figures: packet-hops (frames received by switches) per wall second, events per second and
simulated microseconds per wall second, on one core. Set-up (compiling, pushing the pipeline,
installing entries) is not counted in the rates. (a) runs for a fifth of a second, which a
busy moment of the machine moved by up to a quarter: its figures are the median run of
``A_RUNS`` (the range in the detail). Each rate's detail gives the machine's one-minute load
average as the run ended (the run adds up to 1 to it, less when short): on this 2-core machine a busy
second process takes up to a fifth off the same code's rate, so a figure is read with the load beside it.
Goals: at least 100,000 packet-hops a second (the simulator's first goal), 200,000 (its speed goal).
"""

from __future__ import annotations

import os
import resource
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from bench.result import Result
from controller.controller import FabricController
from controller.pipeline import compile_fabric
from controller.profiles import settings_for
from controller.sim_cmd import sim_units, simulate
from controller.workloads import workload_specs
from fabricsim.fabric import P4Fabric
from topo.builder import fat_tree, leaf_spine

MIB = 1 << 20
A_RUNS = 5
GOALS = "goals 100,000 and 200,000"


def _timed(pipe, topo, profile: str, specs) -> tuple[float, object]:
    t_start = time.perf_counter()
    run = simulate(topo, pipe, settings_for(profile), profile, specs)
    return time.perf_counter() - t_start, run


def _rates(name: str, wall_total: float, run, detail: str) -> list[Result]:
    fab = run.fabric
    wall = fab.run_wall_s
    hops, events, sim_us = fab.packet_hops(), fab.sim.events_run, fab.now_ns() / 1e3
    if run.errors:
        raise RuntimeError(f"{name}: {run.errors[:3]}")
    cpu = fab.run_cpu_s
    detail = (f"{detail}; {hops} hops, {events} events, {sim_us:.0f} us simulated in {wall:.1f} s "
              f"({wall_total:.1f} s with set-up); load average {os.getloadavg()[0]:.1f}; {GOALS}")
    return [Result(f"fabricsim {name} packet-hops/s", hops / wall, "hops/s", detail),
            Result(f"fabricsim {name} packet-hops/CPU s", hops / cpu, "hops/s",
                   "per second of this process's CPU time (what one free core would give)"),
            Result(f"fabricsim {name} events/s", events / wall, "events/s", ""),
            Result(f"fabricsim {name} sim us per wall s", sim_us / wall, "us/s", ""),
            Result(f"fabricsim {name} wall time", wall, "s", "")]


def run() -> list[Result]:
    out: list[Result] = []
    with tempfile.TemporaryDirectory() as tmp:
        pipe = compile_fabric("ours", Path(tmp))
        topo = leaf_spine(2, 2, 2)
        specs = workload_specs(topo, "all-reduce", [h.name for h in topo.hosts], size=MIB)
        runs = []
        for _ in range(A_RUNS):  # each run's figures kept, not its fabric (the peak RSS below)
            wall, r = _timed(pipe, topo, "baseline", specs)
            runs.append(_rates("2x2x2 all-reduce 1MiB", wall, r, "leaf/spine 2x2x2, baseline"))
            del r
        runs.sort(key=lambda results: results[0].value)
        median = runs[len(runs) // 2]
        spread = f"; median of {A_RUNS} runs ({runs[0][0].value:,.0f}-{runs[-1][0].value:,.0f} hops/s)"
        out += [replace(median[0], detail=median[0].detail + spread), *median[1:]]

        topo = fat_tree(4)
        hosts = [h.name for h in topo.hosts]
        specs = workload_specs(topo, "poisson", hosts, size=1, load=0.5, qp_per_flow=True, duration_ns=1_000_000)
        wall, r = _timed(pipe, topo, "ai-fabric", specs)
        flows = sum(len(n.run_stats.messages) for n in r.fabric.nics.values())
        out += _rates("fattree4 websearch 50%", wall, r, f"fat tree k=4, ai-fabric, {flows} flows")

        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        topo = fat_tree(8)
        fab = P4Fabric(topo)
        ctl = FabricController(topo, pipe, settings_for("ai-fabric"), nics=fab.nics, connection=fab.connection,
                               units=sim_units(fab))
        ctl.start()
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
        out.append(Result("fabricsim fattree8 peak RSS", peak / 1024, "MiB",
                          f"128 hosts, 80 switches configured (process peak; {before / 1024:.0f} MiB before)"))
    return out


if __name__ == "__main__":
    for res in run():
        print(f"{res.name:<48} {res.value:>14,.1f} {res.unit:<10} {res.detail}", file=sys.stdout)
