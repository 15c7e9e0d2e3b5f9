"""Runs an experiment's points in this process and writes its results and report.

Each point runs alone on a fresh simulated fabric; one that raises is run once more, then
kept with its error (never silently missing). Output under ``out``: ``results.json`` (every
point with its metrics or error), ``results.csv`` (one row per point), the experiment's PNG
plots and ``report.md`` (table and one line per claim). The sweep engine (Dask) runs the same
``run_point`` function on workers and collects the same ``PointResult``s.
"""

from __future__ import annotations

import csv
import json
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from experiments.base import Experiment, Point, PointResult

ATTEMPTS = 2  # a point that raises is retried once


def run_point(exp: Experiment, point: Point) -> PointResult:
    """The point's metrics, or its error after the retry."""
    error = ""
    for attempt in range(1, ATTEMPTS + 1):
        try:
            return PointResult(point, exp.run_point(point), attempts=attempt)
        except Exception as e:  # noqa: BLE001 - any failure of a point is reported, not raised
            error = f"{type(e).__name__}: {e}"
            last = traceback.format_exc(limit=3)
    return PointResult(point, {"traceback": last}, error=error, attempts=ATTEMPTS)


def run(exp: Experiment, points: list[Point], on_point: Callable[[int, int, PointResult], None] | None = None
        ) -> list[PointResult]:
    results = []
    for i, p in enumerate(points, 1):
        r = run_point(exp, p)
        results.append(r)
        if on_point is not None:
            on_point(i, len(points), r)
    return results


def write_results(results: list[PointResult], out: Path) -> tuple[Path, Path]:
    out.mkdir(parents=True, exist_ok=True)
    js = out / "results.json"
    js.write_text(json.dumps([_row(r) for r in results], indent=1, default=str))
    params = sorted({k for r in results for k in r.point.params})
    metrics = sorted({k for r in results for k, v in r.metrics.items() if not isinstance(v, (list, dict))})
    cs = out / "results.csv"
    with cs.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["experiment", "key", "seed", "quick", *params, *metrics, "error", "attempts"])
        for r in results:
            p = r.point
            w.writerow([p.experiment, p.key(), p.seed, p.quick, *(p.params.get(k, "") for k in params),
                        *(r.metrics.get(k, "") for k in metrics), r.error or "", r.attempts])
    return js, cs


def _row(r: PointResult) -> dict[str, Any]:
    return {"point": r.point.to_dict(), "key": r.point.key(), "metrics": r.metrics, "error": r.error,
            "attempts": r.attempts}


def load_results(path: Path) -> list[PointResult]:
    """``results.json`` back into PointResults (to re-make a report without re-running)."""
    rows = json.loads(path.read_text())
    return [PointResult(Point.from_dict(d["point"]), d["metrics"], d["error"], d.get("attempts", 1)) for d in rows]


def run_and_report(exp: Experiment, quick: bool, seeds: int, out: Path,
                   on_point: Callable[[int, int, PointResult], None] | None = None) -> tuple[list[PointResult], str]:
    """Run every point, keeping results.json/csv up to date after each (a long run stopped
    half-way leaves what it measured), then write the report."""
    done: list[PointResult] = []

    def point_done(i: int, n: int, r: PointResult) -> None:
        done.append(r)
        write_results(done, out)
        if on_point is not None:
            on_point(i, n, r)

    results = run(exp, exp.points(quick, seeds), point_done)
    return results, exp.report(results, out)
