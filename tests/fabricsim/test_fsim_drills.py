"""Drills in the virtual-time fabric: the fault happens, the switches report it, the controller
reacts, and the record shows it; each test fails if the fabric's reaction is missing."""

from __future__ import annotations

import argparse
import json

import pytest

from controller.cli import main
from controller.drills import sim
from controller.drills.cli import add_parser, prepare
from controller.sim_cmd import parse_topology

pytestmark = pytest.mark.slow

TOPO = "leafspine:2x2x2"
# Longest a host may receive nothing during a 100 us outage of a used uplink: the monitor's
# poll (every 10 us tick), the rewrite, the resend of what was on the cut cable, and the queue
# the halved spine layer builds (measured: 40 us). Without the reroute the flows hashed onto the
# dead cable stall past the whole outage (measured: 370 us).
STALL_BOUND_US = 60.0


def _args(*argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    add_parser(p.add_subparsers(dest="command"))
    return p.parse_args(["drill", *argv, "--sim", "--topology", TOPO])


def _drill(pipe, *argv: str):
    args = _args(*argv)
    topo = parse_topology(TOPO)
    tl, fault, opts = prepare(args, topo)
    return sim.run(topo, pipe, args.profile, tl, fault, **opts)


def test_link_down_reroutes_at_once_restores_and_loses_no_data(fabric_pipeline) -> None:
    run = _drill(fabric_pipeline, "link-down", "leaf1:3", "--at", "10us", "--for", "100us", "--size", "256KiB")
    tl = run.timeline
    assert run.done and run.errors == []  # every message completed with its bytes intact
    kinds = [(e.kind, e.switch, e.port) for e in tl.events]
    assert ("port-down", "leaf1", 3) in kinds and ("port-down", "spine1", 1) in kinds
    assert ("port-up", "leaf1", 3) in kinds and ("port-up", "spine1", 1) in kinds
    reroutes = [e for e in tl.events if e.kind == "reroute"]
    assert len(reroutes) == 2
    assert 10.0 <= reroutes[0].t_us <= 15.0 and "removed" in reroutes[0].detail
    assert 110.0 <= reroutes[1].t_us <= 115.0 and "restored" in reroutes[1].detail
    assert tl.max_stall_us() < STALL_BOUND_US
    # while it was down, nothing crossed spine1 (every leaf's group towards leaf1 lost it)
    during = {s.name: [u for t, u in zip(s.times_us, s.util) if 20.0 <= t <= 105.0] for s in run.telemetry.link_series()}
    assert max(during["leaf2:3->spine1"]) == 0.0 and max(during["leaf2:4->spine2"]) > 0.5
    # the packets already on their way to the cut cable's far side are discarded there: alarm
    discards = [a for a in tl.alerts if a["kind"] == "discards"]
    assert discards and all(a["switch"] == "spine1" and a["end_us"] is not None for a in discards)
    assert all(10.0 <= a["start_us"] <= 120.0 for a in discards)
    text = tl.format()
    assert "reroute" in text and "before" in text and "goodput (Gb/s)" in text


def test_pfc_storm_watchdog_detects_in_200ms_and_restores(fabric_pipeline) -> None:
    run = _drill(fabric_pipeline, "pfc-storm", "h1_1", "--prio", "3")
    tl = run.timeline
    storms = [e for e in tl.events if e.kind == "watchdog-storm"]
    restored = [e for e in tl.events if e.kind == "watchdog-restored"]
    assert [(e.switch, e.port, e.prio) for e in storms] == [("leaf1", 1, 3)]
    assert [(e.switch, e.port, e.prio) for e in restored] == [("leaf1", 1, 3)]
    # detection: 200 ms of fabric time after the storm began, seen at the next 20 ms sample
    assert tl.start_us + 200_000 <= storms[0].t_us <= tl.start_us + 240_000
    # restoration: 200 ms without a pause frame after the storm's last one
    assert restored[0].t_us >= tl.end_us + 200_000 - 100
    rows = {r[0]: r[1:] for r in tl.rows()}
    assert rows["watchdog events"] == [0, 1, 1]
    assert rows["PFC pauses sent (switches)"][1] > 0  # the storm spread until the watchdog acted
    bursts = [a for a in tl.alerts if a["kind"] == "microburst"]
    assert bursts and all(a["prio"] == 3 and a["peak"] > 100 for a in bursts)
    assert min(a["start_us"] for a in bursts) < storms[0].t_us  # raised before the watchdog acted


def test_drill_targets_are_checked_before_anything_runs() -> None:
    topo = parse_topology(TOPO)
    for argv in (("link-down", "leaf9:3"), ("link-down", "leaf1:99"), ("pfc-storm", "h9_9"),
                 ("pfc-storm", "h1_1", "--prio", "8")):
        with pytest.raises(ValueError):
            prepare(_args(*argv), topo)


def test_switch_restart_is_restored_by_the_controller_and_loses_no_data(fabric_pipeline) -> None:
    run = _drill(fabric_pipeline, "switch-restart", "spine1", "--at", "10us", "--for", "30us")
    tl = run.timeline
    assert run.done and run.errors == []
    assert [(e.kind, e.switch, round(e.t_us)) for e in tl.events] == [("switch-restart", "spine1", 10),
                                                                      ("restore", "spine1", 40)]
    rows = {r[0]: r[1:] for r in tl.rows()}
    assert rows["controller reactions"] == [0, 0, 1]
    assert rows["resent packets (NICs)"][2] > 0  # what the dead switch swallowed came again


def test_congestion_dlb_and_spraying_steer_around_the_congested_uplink_ecmp_does_not(tmp_path, capsys) -> None:
    """h1_2 floods leaf1's uplink to spine1 at 80 % (best effort) while h1_1 and h2_1 run short
    RoCE flows: under DLB and spraying the flows' packets leave that uplink for the other one
    during the fault, under ECMP each flow keeps its hashed uplink."""
    rc = main(["drill", "congestion", "--into", "leaf1:3", "--load", "0.8", "--sim", "--topology", TOPO,
               "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 0, out
    record = json.loads((tmp_path / "drill_congestion.json").read_text())
    share = {mode: {phase: m["3"][phase]["share"] for phase in ("before", "during")}
             for mode, m in record["modes"].items()}
    for mode in ("ecmp", "dlb", "spray"):
        assert record["modes"][mode]["3"]["during"]["util"] > 0.75  # the background was there
        assert share[mode]["before"] > 0.3, share  # the workload used the uplink before the fault
    assert share["dlb"]["during"] < 0.1 and share["spray"]["during"] < 0.1, share
    assert share["ecmp"]["during"] > 0.3, share
    assert "steers around it" in record["table"] and "ecmp" in out
    events = json.loads((tmp_path / "drill_congestion-dlb.json").read_text())["events"]
    assert [(e["kind"], e["switch"], e["port"]) for e in events] == [("pin", "leaf1", 3), ("unpin", "leaf1", 3)]


def test_congestion_targets_are_checked_before_anything_runs() -> None:
    topo = parse_topology(TOPO)
    for argv in (("congestion", "--into", "spine1:1"), ("congestion", "--into", "leaf1:9"),
                 ("congestion", "--into", "h9_9"), ("congestion", "--into", "leaf1:3", "--load", "1.5"),
                 ("congestion",), ("congestion", "h1_1", "--into", "leaf1:3")):
        with pytest.raises(ValueError):
            prepare(_args(*argv), topo)
