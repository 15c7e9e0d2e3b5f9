"""``fabricctl sweep``: an experiment's points crossed with a parameter grid and seeds, each run
as an independent simulation on Dask distributed.

    fabricctl sweep cc-convergence --quick --grid 'ecn.kmin_bytes=5000,20000,100000' \\
        --grid 'cc.algo=dcqcn,hpcc' --seeds 3 --workers 2 --out out/sweep

Points run on a ``LocalCluster`` of the machine's cores (worker processes of one thread each:
the simulator is pure Python, so threads would share one core), or on an existing cluster
given by ``--scheduler ADDRESS`` (docs/sweeps.md: ``dask scheduler`` / ``dask worker``, Slurm
through dask-jobqueue). Every point is one task; a point whose task fails (an exception, or a
worker that died under it) is submitted once more and, if it fails again, reported with its
error in the results, never silently missing. Results are written in the order of the points,
whatever order they finished in, so the files of two runs compare equal. Ctrl-C cancels what
is pending and closes the client and the cluster, which stops every worker process.
"""

from __future__ import annotations

import argparse
import itertools
import logging
import os
import sys
import traceback
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from dask.distributed import Client, Future, LocalCluster, as_completed

from controller.settings import parse_value
from controller.textfmt import ProgressBar, shown_path, table
from experiments import registry
from experiments.base import Experiment, Point, PointResult
from experiments.runner import ATTEMPTS, write_results  # a failing point is run once more


class SweepError(ValueError):
    """Bad sweep arguments (grid syntax, empty grid values)."""


def parse_grid(text: str) -> tuple[str, list[Any]]:
    """``'ecn.kmin_bytes=5000,20000'`` -> ``('ecn.kmin_bytes', [5000, 20000])``; values are
    read as the command line reads settings (numbers, true/false, else words)."""
    key, sep, values = text.partition("=")
    key = key.strip()
    items = [v.strip() for v in values.split(",")]
    if not sep or not key or not all(items):
        raise SweepError(f"--grid {text!r}: expected KEY=V1,V2,... such as ecn.kmin_bytes=5000,20000")
    return key, [parse_value(v) for v in items]


def sweep_points(exp: Experiment, quick: bool, seeds: int, grid: Sequence[tuple[str, list[Any]]]) -> list[Point]:
    """The experiment's points (with its seeds) crossed with every combination of the grid,
    whose keys override the points' params; duplicates (a grid key the experiment also varies)
    collapse, in first-seen order."""
    keys = [k for k, _ in grid]
    if len(set(keys)) != len(keys):
        raise SweepError(f"--grid: a key appears twice ({', '.join(keys)})")
    combos = [dict(zip(keys, values)) for values in itertools.product(*(v for _, v in grid))]
    out: dict[str, Point] = {}
    for base in exp.points(quick, seeds):
        for combo in combos:
            p = Point(base.experiment, {**base.params, **combo}, base.seed, base.quick)
            out.setdefault(p.key(), p)
    return list(out.values())


def point_task(exp: Experiment, point: Point) -> dict[str, Any]:
    """The task a worker runs: one point of one experiment (its metrics, or it raises)."""
    return exp.run_point(point)


@contextmanager
def dask_client(workers: int | None = None, scheduler: str | None = None) -> Iterator[Client]:
    """A client of the cluster at ``scheduler``, or of a new LocalCluster of ``workers``
    single-threaded worker processes (default: one per core) on 127.0.0.1, closed on exit
    (also on Ctrl-C), so no worker process outlives the sweep."""
    if scheduler:
        with Client(scheduler) as client:
            yield client
        return
    n = workers or os.cpu_count() or 1
    with LocalCluster(n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None, silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
        yield client


def run_sweep(client: Client, exp: Experiment, points: Sequence[Point],
              progress: ProgressBar | None = None) -> list[PointResult]:
    """Run every point as one task on ``client``'s cluster; a failed task is submitted once more.
    Returns one result per point, in the order of ``points``. On any exception (Ctrl-C
    included) the tasks still pending are cancelled before it propagates."""
    shipped = client.scatter(exp, broadcast=True, hash=False)  # its own key: never one a previous sweep releases
    attempts: dict[str, int] = {}
    index: dict[str, Point] = {}
    results: dict[str, PointResult] = {}
    futures: list[Future] = []

    def submit(p: Point) -> Future:
        attempts[p.key()] = attempts.get(p.key(), 0) + 1
        fut = client.submit(point_task, shipped, p, pure=False)  # a fresh key per attempt
        index[fut.key] = p
        futures.append(fut)
        return fut

    pending = as_completed([submit(p) for p in points])
    failed = 0
    try:
        for fut in pending:
            p = index[fut.key]
            if fut.status == "finished":
                results[p.key()] = PointResult(p, fut.result(), None, attempts[p.key()])
            elif attempts[p.key()] < ATTEMPTS:
                pending.add(submit(p))
                continue
            else:
                results[p.key()] = PointResult(p, {}, _error_text(fut), attempts[p.key()])
                failed += 1
            fut.release()
            if progress is not None:
                progress.update(len(results) / len(points), f"{len(results)}/{len(points)} points"
                                + (f", {failed} failed" if failed else ""))
    except BaseException:
        client.cancel([f for f in futures if not f.done()], force=True)
        raise
    return [results[p.key()] for p in points]


def _error_text(fut: Future) -> str:
    """``Type: message`` and where it was raised (the worker's innermost frame)."""
    if fut.status == "cancelled":  # the cluster dropped the task (e.g. the scheduler restarted)
        return "CancelledError: the cluster cancelled the task"
    exc = fut.exception()
    where = traceback.extract_tb(fut.traceback())[-1:] if fut.traceback() is not None else []
    at = f" (at {where[0].filename}:{where[0].lineno})" if where else ""
    return f"{type(exc).__name__}: {exc}{at}"


# -- results (the files are the runner's: experiments.runner.write_results) and plots -------


def _columns(results: Sequence[PointResult]) -> tuple[list[str], list[str]]:
    params = sorted({k for r in results for k in r.point.params})
    metrics = sorted({k for r in results for k, v in r.metrics.items() if not isinstance(v, (list, dict))})
    return params, metrics


def _numeric(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def plot_results(results: Sequence[PointResult], swept: Sequence[str], out: Path) -> list[Path]:
    """One PNG per (swept parameter, numeric metric): the metric's mean over seeds against the
    parameter, one line per variant (the point's other params, e.g. its profile)."""
    ok = [r for r in results if r.ok]
    _, metrics = _columns(ok)
    metrics = [m for m in metrics if all(_numeric(r.metrics.get(m)) for r in ok)]
    if not ok or not metrics:
        return []
    import matplotlib

    matplotlib.use("Agg")  # files only; never needs a display
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    written = []
    for param in swept:
        xs = list(dict.fromkeys(r.point.params[param] for r in ok if param in r.point.params))
        if len(xs) < 2:
            continue
        categorical = not all(_numeric(x) for x in xs)
        for metric in metrics:
            series: dict[str, dict[Any, list[float]]] = {}
            for r in ok:
                variant = ", ".join(f"{k}={v}" for k, v in sorted(r.point.params.items()) if k != param) or "all"
                series.setdefault(variant, {}).setdefault(r.point.params[param], []).append(r.metrics[metric])
            fig, ax = plt.subplots(figsize=(7, 4.2))
            for variant, by_x in series.items():
                pts = [(x, sum(v) / len(v)) for x, v in by_x.items()]
                if not categorical:
                    pts.sort()
                px = [xs.index(x) if categorical else x for x, _ in pts]
                ax.plot(px, [y for _, y in pts], marker="o", label=variant)
            if categorical:
                ax.set_xticks(range(len(xs)), [str(x) for x in xs])
            ax.set_xlabel(param)
            ax.set_ylabel(f"{metric} (mean over seeds)")
            ax.set_title(f"{ok[0].point.experiment}: {metric} against {param}")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
            fig.tight_layout()
            path = out / f"{metric}-vs-{param}.png".replace("/", "_")
            fig.savefig(path, dpi=110)
            plt.close(fig)
            written.append(path)
    return written


# -- command line --------------------------------------------------------------------------


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        v = 0
    if v <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return v


def add_parser(sub: Any) -> None:
    sp = sub.add_parser("sweep", help="run an experiment over a parameter grid and seeds on Dask",
                        description="Cross EXPERIMENT's points with every --grid combination and --seeds seeds "
                                    "and run each point as an independent simulation on Dask distributed "
                                    "(a LocalCluster here, or --scheduler). Writes results.csv, results.json "
                                    "and plots under --out. See docs/sweeps.md.")
    sp.add_argument("experiment", metavar="EXPERIMENT", help="a name from `fabricctl experiment list`")
    sp.add_argument("--quick", action="store_true", help="the experiment's quick form")
    sp.add_argument("--grid", action="append", default=[], metavar="KEY=V1,V2,...",
                    help="a parameter and its values (repeatable; the sweep is the cross product), "
                         "e.g. ecn.kmin_bytes=5000,20000,100000 or cc.algo=dcqcn,hpcc")
    sp.add_argument("--seeds", type=_positive_int, default=1, help="seeds per point (default 1)")
    sp.add_argument("--workers", type=_positive_int, default=None,
                    help="LocalCluster worker processes (default: one per core)")
    sp.add_argument("--scheduler", metavar="ADDRESS", default=None,
                    help="use the Dask cluster at ADDRESS (e.g. tcp://10.0.0.5:8786) instead of a LocalCluster")
    sp.add_argument("--out", type=Path, default=Path("out/sweep"), help="output directory (default out/sweep)")
    sp.add_argument("--no-progress", action="store_true", help="no progress bar")


def cmd_sweep(args: argparse.Namespace, state_path: Path) -> int:
    try:
        exp = registry.get(args.experiment)
        grid = [parse_grid(g) for g in args.grid]
        points = sweep_points(exp, args.quick, args.seeds, grid)
    except (KeyError, ValueError) as e:
        print(f"fabricctl: error: {e.args[0]}", file=sys.stderr)
        return 2
    if args.workers and args.scheduler:
        print("fabricctl: error: --workers sizes a LocalCluster; with --scheduler the cluster is yours", file=sys.stderr)
        return 2
    where = f"the cluster at {args.scheduler}" if args.scheduler else \
        f"a LocalCluster of {args.workers or os.cpu_count()} worker processes"
    print(f"{exp.name}: {len(points)} points on {where}", file=sys.stderr, flush=True)
    bar = None if args.no_progress else ProgressBar(f"sweep {exp.name}")
    with dask_client(args.workers, args.scheduler) as client:
        results = run_sweep(client, exp, points, bar)
    json_path, csv_path = write_results(results, args.out)
    pngs = plot_results(results, [k for k, _ in grid], args.out / "plots")
    print(summary(results))
    for path in (csv_path, json_path, *pngs):
        print(f"wrote {shown_path(path)}")
    failed = [r for r in results if not r.ok]
    for r in failed:
        print(f"{r.point.key()}: failed after {r.attempts} attempts: {r.error}", file=sys.stderr)
    return 1 if failed else 0


def summary(results: Sequence[PointResult]) -> str:
    """A table of every point: its params, seed and numeric metrics, or its error."""
    params, metrics = _columns(results)
    rows = [[*(r.point.params.get(k, "") for k in params), r.point.seed,
             *(r.metrics.get(k, "") for k in metrics), "ok" if r.ok else f"FAILED: {r.error}"] for r in results]
    return table([*params, "seed", *metrics, "status"], rows)


COMMANDS = {"sweep": cmd_sweep}
