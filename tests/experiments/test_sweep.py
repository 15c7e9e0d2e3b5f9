"""``fabricctl sweep`` and ``fabricctl tune`` on real Dask LocalClusters (worker processes on
127.0.0.1): results equal to the same points run alone, a failing point retried once then
reported with its error, every point in the results files, Ctrl-C leaving no worker behind,
and a tuning run with a tiny budget on the virtual-time fabric."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import cloudpickle
import psutil
import pytest

from experiments import registry, sweep
from experiments.base import Point
from experiments.tune import CollectiveObjective, report, tune
from fabricctl.main import main as fabricctl

HERE = Path(__file__).resolve().parent
cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import this test module by name

pytestmark = pytest.mark.slow


class Polynomial:
    """A tiny experiment: a pure, seeded function of its point. ``fail=always`` raises on every
    attempt; ``fail=once`` raises on the first attempt only (a marker file says it ran)."""

    title = "a pure function, for the sweep engine's tests"
    claims: list = []

    def __init__(self, marker_dir: Path, name: str = "polynomial") -> None:
        self.marker_dir = marker_dir
        self.name = name

    def points(self, quick: bool, seeds: int = 1) -> list[Point]:
        return [Point(self.name, {"a": a}, seed, quick) for a in (1, 2) for seed in range(1, seeds + 1)]

    def run_point(self, point: Point) -> dict:
        fail = point.params.get("fail")
        if fail == "always":
            raise ValueError(f"no result for a={point.params['a']}")
        marker = self.marker_dir / f"ran-{point.key()}"
        if fail == "once" and not marker.exists():
            marker.write_text(str(os.getpid()))
            raise RuntimeError("first attempt fails")
        a, b = point.params["a"], point.params.get("b", 0)
        return {"y": a * a * 1000 + b * 10 + point.seed, "label": f"a{a}b{b}"}


def test_a_four_point_sweep_on_two_workers_equals_each_point_run_alone(tmp_path: Path) -> None:
    exp = Polynomial(tmp_path)
    points = sweep.sweep_points(exp, True, 1, [sweep.parse_grid("b=3,4")])
    assert [p.params for p in points] == [{"a": 1, "b": 3}, {"a": 1, "b": 4}, {"a": 2, "b": 3}, {"a": 2, "b": 4}]
    with sweep.dask_client(workers=2) as client:
        assert len(client.scheduler_info()["workers"]) == 2
        results = sweep.run_sweep(client, exp, points)
    assert [r.point for r in results] == points
    assert all(r.ok and r.attempts == 1 for r in results)
    assert [r.metrics for r in results] == [exp.run_point(p) for p in points]


def test_a_failing_point_is_retried_once_then_reported_with_its_error(tmp_path: Path) -> None:
    exp = Polynomial(tmp_path)
    points = sweep.sweep_points(exp, True, 1, [sweep.parse_grid("fail=none,once,always")])
    with sweep.dask_client(workers=2) as client:
        results = sweep.run_sweep(client, exp, points)
    by = {(r.point.params["a"], r.point.params["fail"]): r for r in results}
    assert len(results) == 6
    for a in (1, 2):
        assert by[a, "none"].ok and by[a, "none"].attempts == 1
        assert by[a, "once"].ok and by[a, "once"].attempts == 2  # the retry succeeded
        assert by[a, "once"].metrics == exp.run_point(by[a, "none"].point)
        failed = by[a, "always"]
        assert not failed.ok and failed.attempts == 2 and failed.metrics == {}
        assert f"ValueError: no result for a={a}" in failed.error


def test_the_command_writes_every_point_with_its_error_and_plots(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setitem(registry.EXPERIMENTS, "polynomial-cli", Polynomial(tmp_path, "polynomial-cli"))
    out = tmp_path / "out"
    code = fabricctl(["sweep", "polynomial-cli", "--quick", "--grid", "b=3,4", "--grid", "fail=none,always",
                      "--seeds", "2", "--workers", "2", "--out", str(out), "--no-progress"])
    assert code == 1  # a point failed
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert len(rows) == 2 * 2 * 2 * 2  # a x b x fail x seeds
    assert {(r["a"], r["b"], r["fail"], r["seed"]) for r in rows} == \
        {(a, b, f, s) for a in "12" for b in "34" for f in ("none", "always") for s in "12"}
    for r in rows:
        if r["fail"] == "always":
            assert r["y"] == "" and r["attempts"] == "2" and r["error"].startswith("ValueError: no result")
        else:
            assert int(r["y"]) == int(r["a"]) ** 2 * 1000 + int(r["b"]) * 10 + int(r["seed"]) and r["error"] == ""
    data = json.loads((out / "results.json").read_text())
    assert [d["key"] for d in data] == [r["key"] for r in rows]
    assert (out / "plots" / "y-vs-b.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "failed after 2 attempts: ValueError: no result for a=1" in capsys.readouterr().err


def test_bad_grid_is_refused_before_any_cluster_starts(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setitem(registry.EXPERIMENTS, "polynomial-bad-grid", Polynomial(tmp_path, "polynomial-bad-grid"))
    assert fabricctl(["sweep", "polynomial-bad-grid", "--grid", "b=", "--out", str(tmp_path)]) == 2
    assert "expected KEY=V1,V2" in capsys.readouterr().err
    assert fabricctl(["sweep", "no-such-experiment", "--out", str(tmp_path)]) == 2
    assert "unknown experiment 'no-such-experiment'" in capsys.readouterr().err
    assert not (tmp_path / "results.csv").exists()


def test_ctrl_c_cancels_the_sweep_and_leaves_no_worker_process(tmp_path: Path) -> None:
    started = tmp_path / "started"
    started.mkdir()
    proc = subprocess.Popen([sys.executable, str(HERE / "interrupted_sweep.py"), str(started), str(tmp_path / "out")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + 120
        while len(workers) < 2 and proc.poll() is None and time.monotonic() < deadline:
            workers = {int(f.read_text()) for f in started.iterdir() if f.read_text()}
            time.sleep(0.1)
        assert len(workers) == 2, f"two points never started: {proc.stderr.read1().decode() if proc.poll() else ''}"
        assert all(psutil.Process(proc.pid) in psutil.Process(w).parents() for w in workers)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=120)
        alive = [w for w in workers if psutil.pid_exists(w) and psutil.Process(w).status() != psutil.STATUS_ZOMBIE]
        assert alive == [], f"worker processes left behind: {alive}"
        assert proc.returncode == 130
        assert not (tmp_path / "out" / "results.csv").exists()  # nothing half-written
    finally:
        for pid in [proc.pid, *workers]:  # only what this test started
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.wait()
        proc.stdout.close()
        proc.stderr.close()


def test_tune_with_a_tiny_budget_reports_the_best_against_the_defaults(tmp_path: Path) -> None:
    objective = CollectiveObjective("tune", "leafspine:1x2x1", "ai-fabric", "all-reduce", 16 * 1024)
    with sweep.dask_client(workers=2) as client:
        outcome = tune(client, objective, "hpcc", trials=2, batch=2, seed=3)
    assert [t["trial"] for t in outcome.trials] == [0, 1]
    assert set(outcome.trials[0]["params"]) == {"eta", "rate_ai_bps", "max_stage"}
    best = min(t["completion_us"] for t in outcome.trials)
    assert outcome.best["completion_us"] == best
    # the figures compared are those simulations' own, run alone
    alone = objective.run_point(Point("tune", {"trial": outcome.best["trial"], **outcome.best["params"]}, 3))
    assert alone["completion_us"] == best > 0
    assert outcome.defaults == objective.run_point(Point("tune", {"trial": "defaults"}, 3))
    assert outcome.gain() == max(0.0, 1 - best / outcome.default_us)
    text = report(outcome, objective, "hpcc")
    assert f"defaults: {outcome.default_us:.2f} us ({outcome.defaults['ecn_marks']} ECN marks" in text
    assert f"best (trial {outcome.best['trial']})" in text
