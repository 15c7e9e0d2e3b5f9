"""loss-recovery, quick form: at 1 % random loss on one link, Go-Back-N resends many packets
per lost one, selective repeat about one, and selective repeat's goodput is higher; every
byte arrives intact in both."""

from __future__ import annotations

import pytest

from experiments import runner
from experiments.loss_recovery import EXPERIMENT
from fabricctl.main import main as fabricctl


@pytest.mark.slow
def test_selective_repeat_resends_fewer_bytes_than_go_back_n_at_one_percent_loss(tmp_path, capsys) -> None:
    assert fabricctl(["experiment", "run", "loss-recovery", "--quick", "--out", str(tmp_path)]) == 0
    text = (tmp_path / "report.md").read_text()
    assert text in capsys.readouterr().out
    results = runner.load_results(tmp_path / "results.json")
    assert all(r.ok for r in results), [r.error for r in results]
    by = {r.point.params["reliability"]: r.metrics for r in results}
    gbn, sr = by["gbn"], by["sr"]
    assert gbn["lost_pkts"] > 0 and sr["lost_pkts"] > 0
    assert gbn["data_ok"] and sr["data_ok"]
    assert sr["retransmissions"] < gbn["retransmissions"]
    assert sr["amplification"] < 2 < gbn["amplification"]
    assert sr["goodput_gbps"] > gbn["goodput_gbps"]
    assert all(c.holds for c in EXPERIMENT.check(results))
    assert "[HOLDS]" in text and "non-standard RoCEv2" in text  # SACK is an extension
    assert sorted(p.name for p in tmp_path.glob("*.png")) == ["loss-recovery-amplification.png",
                                                              "loss-recovery-goodput_gbps.png"]
    assert (tmp_path / "results.csv").read_text().count("\n") == 3  # header and one row per point
