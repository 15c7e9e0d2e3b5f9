"""``fabricctl mixed-traffic --sim``: RoCE alone, then with best-effort TCP-like background
flows on priority 0 (fabricsim/background.py); the report must show RoCE unaffected, the
background taking what RoCE leaves, and no PFC pause on the background's priority."""

from __future__ import annotations

import json

import pytest

from controller.cli import main
from fabricsim.background import BackgroundFlow, BackgroundSink, is_background

pytestmark = pytest.mark.slow  # two whole-fabric simulations


def test_sim_mixed_traffic_roce_unaffected_tcp_takes_the_rest_no_pause(tmp_path, capsys) -> None:
    rc = main(["mixed-traffic", "--sim", "--topology", "leafspine:2x2x2", "--size", "32KiB",
               "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 0, out
    rec = json.loads((tmp_path / "mixed_traffic.json").read_text())
    # RoCE unaffected: same data, intact, nearly the same goodput and FCT (strict priority; a
    # 1500-byte TCP segment already on the wire delays a RoCE frame by at most its own time)
    assert rec["alone"]["ok"] and rec["mixed"]["ok"] and rec["mixed"]["errors"] == []
    assert rec["mixed"]["data_verified"] == ["h1_1", "h1_2", "h2_1", "h2_2"]
    assert rec["goodput_ratio"] >= 0.9
    assert rec["mixed"]["fct"]["p99"] <= 1.1 * rec["alone"]["fct"]["p99"]
    # TCP takes the rest: it gets less while RoCE runs and (nearly) the line rate after it
    assert len(rec["tcp"]) == 4
    for flow in rec["tcp"]:
        assert 0 < flow["during_gbps"] < flow["after_gbps"]
        assert flow["after_gbps"] > 80  # of the 100 Gb/s host links
        assert flow["bytes"] > 0
    # no PFC pause on TCP's priority (switches sent, NICs received); pauses only on RoCE's class
    assert rec["tcp_priority"] == 0 and rec["tcp_pauses"] == 0
    for counts in (rec["switch_pauses_mixed"], rec["nic_pauses_mixed"]):
        assert set(counts) <= {str(rec["data_priority"])}
    assert "PFC pauses on priority 0 (TCP): 0;" in out
    assert "TCP background (best effort), fabric Gb/s:" in out and "h1_1 -> h2_1" in out


def test_background_flow_paces_and_the_sink_counts_gaps() -> None:
    flow = BackgroundFlow("a", "b", "02:00:00:00:00:01", "02:aa:00:00:00:01", "10.1.1.2", "10.2.1.2",
                          rate_bps=10e9, start_ns=1000, stop_ns=10_000)
    assert flow.poll_transmit(500) is None and flow.next_wakeup(500) == 1000
    first = flow.poll_transmit(1000)
    assert first is not None and is_background(first) and first[15] == 0  # DSCP 0: best effort
    assert flow.poll_transmit(1000) is None  # paced: 1514 bytes at 10 Gb/s
    second = flow.poll_transmit(flow.next_wakeup(1000))
    third = flow.poll_transmit(flow.next_wakeup(0))
    sink = BackgroundSink()
    sink.receive(first, 2000)
    sink.receive(third, 5000)  # the second was lost on the way
    assert sink.lost == {"10.1.1.2": 1}
    assert sink.bytes_between("10.1.1.2", 0, 3000) == 1460 and sink.bytes_between("10.1.1.2", 0, 6000) == 2920
    assert second is not None and flow.poll_transmit(10_000) is None and flow.next_wakeup(10_000) is None


def test_bad_pairs_are_refused_before_anything_runs(tmp_path, capsys) -> None:
    assert main(["mixed-traffic", "--sim", "--pairs", "h1_1:h9_9", "--out", str(tmp_path)]) == 2
    assert "--pairs: 'h1_1:h9_9'" in capsys.readouterr().err
