"""load-balancing, quick form: on a 4-spine leaf/spine, a cross-leaf permutation, sprayed
packets use the uplinks better than ECMP flows (no point loses a packet: PFC keeps the
class lossless) and no sprayed flow straggles, and a Go-Back-N NIC under spraying resends
what only arrived out of order while selective repeat does not."""

from __future__ import annotations

import pytest

from experiments import runner
from experiments.load_balancing import EXPERIMENT


@pytest.mark.slow
def test_spraying_uses_uplinks_better_than_ecmp_and_needs_reassembly(tmp_path) -> None:
    results, text = runner.run_and_report(EXPERIMENT, quick=True, seeds=1, out=tmp_path)
    assert all(r.ok for r in results), [r.error for r in results]
    by = {r.point.params["lb"]: r.metrics for r in results}
    # queues sized for PFC (sim.lossless_queues): a hash collision pauses, it does not tail-drop
    assert [m["tm_drops"] + m["drops"] for m in by.values()] == [0, 0, 0]
    assert by["spray-random"]["mean_uplink_util"] > by["ecmp"]["mean_uplink_util"]
    assert by["spray-random"]["completion_us"] < by["ecmp"]["completion_us"]
    # HPCC measures each link a sprayed flow uses over whole frames: no flow is cut to a
    # fraction of its share (before: two of eight flows finished 3.4x after the median)
    assert by["spray-random"]["completion_us"] < 1.3 * by["spray-random"]["fct_p50_us"]
    assert by["spray-random-gbn"]["retransmissions"] > by["spray-random"]["retransmissions"] == 0
    checks = EXPERIMENT.check(results)
    assert all(c.holds for c in checks), [c.measured for c in checks]
    assert (tmp_path / "report.md").read_text() == text and "[HOLDS]" in text
    assert (tmp_path / "results.csv").exists() and list(tmp_path.glob("*.png"))
