"""Alerts against the baselines: where, when they start and end, thresholds as settings, the
log ``fabricctl alerts`` lists."""

from __future__ import annotations

import json

import pytest

from controller import alerts_cmd
from controller.alerts import AlertMonitor, AlertSettings, read_log
from controller.cli import main
from controller.telemetry import PortSample, Snapshot
from topo.builder import leaf_spine


def _snap(at_us: float, span_us: float, **per_port: dict) -> Snapshot:
    ports, deltas, util = {}, {}, {}
    for name, d in per_port.items():
        sw, port = name.split("_")
        key = (sw, int(port))
        ports[key] = PortSample(sw, int(port), "x")
        util[key] = d.pop("util", 0.0)
        deltas[key] = d
    return Snapshot(0.0, span_us, ports, util=util, deltas=deltas, at_us=at_us)


def test_pause_ecn_and_discard_baselines_open_and_close_with_where_and_when(tmp_path) -> None:
    topo = leaf_spine(2, 2, 2)
    log = tmp_path / "alerts.jsonl"
    mon = AlertMonitor(topo, data_prio=3, log=log)
    # 1000 us samples: 1 pause = 1000/s (over 100/s); 100 % util of 100G = ~11.8k frames of 1098 B
    mon.feed(_snap(1000, 1000, leaf1_3={"pauses": 0, "ecn_marks": 10, "util": 1.0}))
    mon.feed(_snap(2000, 1000, leaf1_3={"pauses": 1, "ecn_marks": 1000, "util": 1.0}))
    mon.feed(_snap(3000, 1000, leaf1_3={"pauses": 0, "ecn_marks": 10, "util": 1.0, "drops": 2}))
    mon.feed(_snap(4000, 1000, leaf1_3={"pauses": 0, "ecn_marks": 0, "util": 1.0, "drops": 0}))
    got = {(a.kind, a.where): (a.start_us, a.end_us) for a in mon.all()}
    assert got == {("microburst", "leaf1:3 prio 3"): (2000, 3000), ("congestion", "leaf1:3 prio 3"): (2000, 3000),
                   ("discards", "leaf1:3 prio all"): (3000, 4000)}
    mon.feed_nics(4000, {"h1_1": {"frames_dropped": 5}})
    mon.feed_nics(5000, {"h1_1": {"frames_dropped": 7}})
    assert [(a.host, a.start_us, a.end_us) for a in mon.all() if a.host] == [("h1_1", 5000, None)]
    # the log holds every open and close; fabricctl alerts lists one line per alert
    assert [json.loads(x)["event"] for x in log.read_text().splitlines()].count("close") == 3
    assert len(read_log(log)) == 4


def test_thresholds_are_settings(tmp_path) -> None:
    topo = leaf_spine(2, 2, 2)
    mon = AlertMonitor(topo, AlertSettings(pause_per_s=2000, ecn_rate=0.5, discards=5))
    mon.feed(_snap(1000, 1000, leaf1_3={"pauses": 1, "ecn_marks": 1000, "util": 1.0, "drops": 2}))
    assert mon.all() == []
    with pytest.raises(ValueError):
        AlertSettings(ecn_rate=2)


def test_fabricctl_alerts_lists_the_log(tmp_path, capsys) -> None:
    topo = leaf_spine(2, 2, 2)
    log = tmp_path / "alerts.jsonl"
    mon = AlertMonitor(topo, log=log)
    mon.feed(_snap(1000, 1000, leaf2_1={"drops": 3}))
    assert main(["--state", str(tmp_path / "state.json"), "alerts"]) == 0
    out = capsys.readouterr().out
    assert "discards" in out and "leaf2:1 prio all" in out and "ongoing" in out


def test_fabricctl_alerts_follow_streams_opens_and_closes(tmp_path, capsys, monkeypatch) -> None:
    topo = leaf_spine(2, 2, 2)
    log = tmp_path / "alerts.jsonl"
    mon = AlertMonitor(topo, log=log)
    steps = [lambda: mon.feed(_snap(1000, 1000, leaf2_1={"drops": 3})),
             lambda: mon.feed(_snap(2000, 1000, leaf2_1={"drops": 0}))]

    def tick(_s: float) -> None:  # each poll of the follower: the fabric moves on, then stop
        if not steps:
            raise KeyboardInterrupt
        steps.pop(0)()

    monkeypatch.setattr(alerts_cmd.time, "sleep", tick)
    main(["--state", str(tmp_path / "state.json"), "alerts", "--follow"])  # Ctrl-C ends it, as fabricctl's do
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("open") and "leaf2:1 prio all" in lines[0] and "ongoing" in lines[0]
    assert lines[1].startswith("close") and "to 2000.0 us" in lines[1]
