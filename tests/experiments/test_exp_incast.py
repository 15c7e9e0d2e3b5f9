"""incast, quick form (8:1 with PFC, a victim flow on the shared upstream links): without
congestion control the switches pause and the victim is slowed although its own egress is idle;
with DCQCN there are fewer pauses and less time paused. Whether CC also spares the victim is
what the report line says (measured: it does not here); the test only checks the line is there."""

from __future__ import annotations

import pytest

from experiments import runner
from experiments.base import Point, PointResult
from experiments.incast import CLAIM_CC, CLAIM_HOL, CLAIM_LOSSY, EXPERIMENT, NAME, VICTIM_SLOWED


@pytest.mark.slow
def test_pfc_pauses_and_a_victim_without_cc_fewer_pauses_with_dcqcn(tmp_path) -> None:
    results, text = runner.run_and_report(EXPERIMENT, quick=True, seeds=1, out=tmp_path)
    assert all(r.ok for r in results), [r.error for r in results]
    by = {r.point.params["cc"]: r.metrics for r in results}
    none, dcqcn = by["none"], by["dcqcn"]
    assert none["drops_total"] == dcqcn["drops_total"] == 0  # PFC keeps the class lossless
    assert none["pauses"] > 0 and none["victim_slowdown"] > VICTIM_SLOWED
    assert dcqcn["pauses"] < none["pauses"] and dcqcn["nic_paused_us"] < none["nic_paused_us"]
    checks = {c.claim: c for c in EXPERIMENT.check(results)}
    assert checks[CLAIM_HOL].holds
    cc_line = checks[CLAIM_CC]
    assert cc_line.holds == (dcqcn["victim_slowdown"] < none["victim_slowdown"])  # the verdict follows the data
    assert ("[HOLDS]" if cc_line.holds else "[DOES NOT HOLD]") + " " + CLAIM_CC.statement in text


def test_the_lossless_line_holds_only_when_no_pfc_point_dropped() -> None:
    """The report's PFC line reads the drops of every point with PFC on: one drop there makes
    it DOES NOT HOLD, whatever the lossy points show."""
    def point(pfc: bool, drops: int) -> PointResult:
        metrics = {"pauses": 10 if pfc else 0, "victim_slowdown": 1.5, "drops_total": drops}
        return PointResult(Point(NAME, {"n": 8, "pfc": pfc, "cc": "none"}), metrics)

    def line(results: list[PointResult]):
        return next(c for c in EXPERIMENT.check(results) if c.claim == CLAIM_LOSSY)

    held = line([point(True, 0), point(False, 2093)])
    assert held.holds and held.measured.startswith("with PFC: 0 drops over 1 points; N=8 no PFC, no CC: 2093 drops")
    assert not line([point(True, 3), point(False, 2093)]).holds
    assert not line([point(True, 0), point(False, 0)]).holds
