"""ecn-thresholds, quick form: with DCQCN and ECN acting before PFC, the bottleneck queue and
the short flows' FCT order tight < 30 %/70 % < loose; the throughput line of the report follows
the measured numbers (which way it goes is the experiment's finding, not asserted here)."""

from __future__ import annotations

import pytest

from experiments import runner
from experiments.ecn_thresholds import CLAIM, CLAIM_TPUT, EXPERIMENT, NOISE


@pytest.mark.slow
def test_queue_and_short_fct_order_tight_guide_loose(tmp_path) -> None:
    results, text = runner.run_and_report(EXPERIMENT, quick=True, seeds=1, out=tmp_path)
    assert all(r.ok for r in results), [r.error for r in results]
    by = {r.point.params["ecn"]: r.metrics for r in results}
    t, g, lo = by["tight"], by["guide-30-70"], by["loose"]
    assert t["kmin_bytes"] < g["kmin_bytes"] < lo["kmin_bytes"]
    assert t["queue_mean_pkts"] < g["queue_mean_pkts"] < lo["queue_mean_pkts"]
    assert t["short_fct_p99_us"] < g["short_fct_p99_us"] < lo["short_fct_p99_us"]
    checks = {c.claim: c for c in EXPERIMENT.check(results)}
    assert checks[CLAIM].holds
    tput = checks[CLAIM_TPUT]
    assert tput.holds == (g["long_goodput_gbps"] >= 0.95 * lo["long_goodput_gbps"]
                          and t["long_goodput_gbps"] < (1 - NOISE) * g["long_goodput_gbps"])
    assert f"[{'HOLDS' if tput.holds else 'DOES NOT HOLD'}] {CLAIM_TPUT.statement}" in text
