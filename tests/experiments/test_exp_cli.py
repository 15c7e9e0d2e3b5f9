"""`fabricctl experiment` as a user types it: list, bad names, --live where no live form
exists; the runner keeps a failing point with its
error after one retry. (A whole run through the CLI: test_exp_loss_recovery.py.)"""

from __future__ import annotations

import json
from typing import Any

import pytest

from experiments import runner
from experiments.base import Point
from experiments.registry import EXPERIMENTS
from fabricctl.main import main as fabricctl

NAMES = {"load-balancing", "cc-convergence", "incast", "loss-recovery", "fct-slowdown", "ecn-thresholds"}


def test_list_names_every_experiment_and_its_claims(capsys) -> None:
    assert fabricctl(["experiment", "list"]) == 0
    out = capsys.readouterr().out
    assert set(EXPERIMENTS) == NAMES
    for name, e in EXPERIMENTS.items():
        assert name in out and all(c.statement in out for c in e.claims)


def test_unknown_experiment_and_live_without_a_live_form_are_usage_errors(capsys) -> None:
    assert fabricctl(["experiment", "run", "no-such"]) == 2
    assert "unknown experiment 'no-such'" in capsys.readouterr().err
    assert fabricctl(["experiment", "run", "incast", "--live"]) == 2
    assert "no live form" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        fabricctl(["experiment", "run", "incast", "--seeds", "0"])
    assert e.value.code == 2


class _Flaky:
    """An experiment whose first point fails once then works, and whose second always fails."""

    name, title, claims = "flaky", "flaky", []

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}

    def run_point(self, point: Point) -> dict[str, Any]:
        n = self.calls[point.key()] = self.calls.get(point.key(), 0) + 1
        if point.params["x"] == 1 and n == 1:
            raise RuntimeError("transient")
        if point.params["x"] == 2:
            raise ValueError("broken point")
        return {"value": point.params["x"] * 10}


def test_a_failing_point_is_retried_once_then_reported_with_its_error(tmp_path) -> None:
    exp = _Flaky()
    results = runner.run(exp, [Point("flaky", {"x": 1}), Point("flaky", {"x": 2})])
    ok, bad = results
    assert ok.ok and ok.metrics == {"value": 10} and ok.attempts == 2
    assert not bad.ok and bad.error == "ValueError: broken point" and bad.attempts == 2
    js, cs = runner.write_results(results, tmp_path)
    rows = json.loads(js.read_text())
    assert [r["error"] for r in rows] == [None, "ValueError: broken point"]
    assert runner.load_results(js)[1].point == bad.point
    assert "broken point" in cs.read_text()

