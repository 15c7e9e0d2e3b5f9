"""Sweep throughput on Dask: points per minute of the same sweep on a LocalCluster of 1 and of
2 worker processes (the scaling ratio), next to the same points run one after another in this
process (the single-simulation figure).

The points are real simulations: ring all-reduce of 64 KiB per host on leaf/spine 2x2x2 under
the ai-fabric profile, each with another HPCC eta (``tune.CollectiveObjective``, what a tuning
trial runs). Cluster start-up (worker processes importing the project) and each worker's
first point (compiling fabric.p4, loading its compiled module: ~2 s, once per worker however
long the sweep) are reported apart and not counted in the rates, which are what a sweep's
points cost once it runs. On a shared 2-core machine the 2-worker figure depends on what else
runs; the ratio is at most the number of free cores.
"""

from __future__ import annotations

import time

from bench.result import Result
from experiments.base import Point
from experiments.sweep import dask_client, run_sweep
from experiments.tune import CollectiveObjective

POINTS = 12


def run() -> list[Result]:
    objective = CollectiveObjective("bench", "leafspine:2x2x2", "ai-fabric", "all-reduce", 64 * 1024)
    points = [Point("bench", {"eta": 0.9 + 0.005 * i}, 1) for i in range(POINTS)]
    objective.run_point(points[0])  # this process's first point, as on each worker below
    t0 = time.perf_counter()
    for p in points:
        objective.run_point(p)
    serial = time.perf_counter() - t0
    out = [Result("sweep in process (1 core) points/min", POINTS / serial * 60, "points/min",
                  f"{POINTS} points of 2x2x2 all-reduce 64KiB, {serial / POINTS:.1f} s each")]
    rates = {}
    for workers in (1, 2):
        t0 = time.perf_counter()
        with dask_client(workers=workers) as client:
            client.wait_for_workers(workers)
            warm = time.perf_counter()
            client.run(objective.run_point, points[0])  # on every worker
            started = time.perf_counter()
            results = run_sweep(client, objective, points)
            wall = time.perf_counter() - started
        failed = [r.error for r in results if not r.ok]
        if failed:
            raise RuntimeError(f"sweep points failed: {failed[:2]}")
        rates[workers] = POINTS / wall * 60
        out.append(Result(f"sweep LocalCluster {workers} worker(s) points/min", rates[workers], "points/min",
                          f"{wall:.1f} s for {POINTS} points; not counted: cluster start-up {warm - t0:.1f} s, "
                          f"each worker's first point {started - warm:.1f} s"))
    out.append(Result("sweep scaling 2 workers / 1 worker", rates[2] / rates[1], "x",
                      "ideal 2.0 on two free cores"))
    return out
