"""cc-convergence, quick form: when a second flow joins a 100 Gb/s bottleneck, HPCC reaches
the fair share faster than DCQCN (paper ECN settings) and keeps the queue lower."""

from __future__ import annotations

import pytest

from experiments import runner
from experiments.cc_convergence import CLAIM_HPCC, EXPERIMENT


@pytest.mark.slow
def test_hpcc_converges_faster_than_dcqcn_with_a_lower_queue(tmp_path) -> None:
    results, text = runner.run_and_report(EXPERIMENT, quick=True, seeds=1, out=tmp_path)
    assert all(r.ok for r in results), [r.error for r in results]
    by = {r.point.params["cc"]: r.metrics for r in results}
    hpcc, dcqcn = by["hpcc"], by["dcqcn-paper"]
    assert 0 <= hpcc["converge_us"] and (dcqcn["converge_us"] < 0 or hpcc["converge_us"] < dcqcn["converge_us"])
    assert hpcc["queue_mean_pkts"] < dcqcn["queue_mean_pkts"]
    assert hpcc["nonstandard_roce"] and not dcqcn["nonstandard_roce"]  # INT echo: reported as non-standard
    check = next(c for c in EXPERIMENT.check(results) if c.claim is CLAIM_HPCC)
    assert check.holds, check.measured
    assert "non-standard RoCEv2" in text and (tmp_path / "cc-convergence-throughput.png").exists()
