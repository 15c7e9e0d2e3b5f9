"""Drills in the virtual-time fabric: the fault happens, the switches report it, the controller
reacts, and the record shows it; each test fails if the fabric's reaction is missing."""

from __future__ import annotations

import argparse
import json

import pytest

from controller.cli import main
from controller.drills import sim
from controller.drills.cli import add_parser, prepare, watchdog_notes
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


def test_a_shortened_storm_is_sampled_finely_enough_to_place_its_events(fabric_pipeline) -> None:
    """--for 100us and --detect 0.05 (50 us): the telemetry samples a tenth of the fault's length
    (10 us), not the default storm's 20 ms, so the watchdog's detection lands in the storm,
    50 us after it began (at 20 ms all events and alerts fell on the run's one last sample)."""
    run = _drill(fabric_pipeline, "pfc-storm", "h1_1", "--at", "20us", "--for", "100us", "--detect", "0.05")
    tl = run.timeline
    storms = [e for e in tl.events if e.kind == "watchdog-storm" and e.switch == "leaf1"]
    assert storms and tl.start_us + 50 <= storms[0].t_us <= tl.start_us + 60
    assert {r[0]: r[1:] for r in tl.rows()}["watchdog events"][1] == 1
    bursts = [a for a in tl.alerts if a["kind"] == "microburst" and a["switch"] == "leaf1"]
    assert bursts and tl.start_us <= min(a["start_us"] for a in bursts) < storms[0].t_us
    rows = {r[0]: r[1:] for r in tl.rows()}
    assert rows["watchdog drops"][1] > 0  # the watchdog dropped what was stuck (queue_stats)
    # forwarding instead drops nothing there, so fabric.p4's counts stay exact and the incast
    # is not left limping behind pauses for its dropped packets (pfc.stale_us, 200 ms)
    fwd = _drill(fabric_pipeline, "pfc-storm", "h1_1", "--at", "20us", "--for", "100us", "--detect", "0.05",
                 "--action", "forward").timeline
    fwd_rows = {r[0]: r[1:] for r in fwd.rows()}
    assert fwd_rows["watchdog drops"] == [0, 0, 0]
    assert max(m["end_us"] for m in fwd.messages) < max(m["end_us"] for m in tl.messages) / 2


def test_a_fault_may_start_with_the_workload_but_not_last_zero() -> None:
    topo = parse_topology(TOPO)
    tl, _, _ = prepare(_args("pfc-storm", "h1_1", "--at", "0us", "--for", "1ms"), topo)
    assert (tl.start_us, tl.end_us) == (0.0, 1000.0)
    with pytest.raises(SystemExit):
        _args("pfc-storm", "h1_1", "--for", "0us")


def test_a_dropping_watchdog_shortened_below_the_stale_time_is_noted() -> None:
    stale_us = 200_000
    note = watchdog_notes(_args("pfc-storm", "h1_1", "--detect", "0.05"), stale_us)
    assert len(note) == 1 and "below pfc.stale_us (200 ms)" in note[0] and "--action forward" in note[0]
    assert watchdog_notes(_args("pfc-storm", "h1_1", "--detect", "0.05", "--action", "forward"), stale_us) == []
    assert watchdog_notes(_args("pfc-deadlock", "leaf1:3"), stale_us) == []  # the default 200 ms: none


def test_drill_targets_are_checked_before_anything_runs() -> None:
    topo = parse_topology(TOPO)
    for argv in (("link-down", "leaf9:3"), ("link-down", "leaf1:99"), ("pfc-storm", "h9_9"),
                 ("pfc-storm", "h1_1", "--prio", "8"), ("pfc-deadlock", "leaf1:1"), ("pfc-deadlock", "spine1:1"),
                 ("pfc-deadlock", "leaf1:9"), ("pfc-deadlock", "h1_1")):
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


def _deadlock(pipe, *argv: str):
    args = _args("pfc-deadlock", "leaf1:3", *argv)
    topo = parse_topology(TOPO)
    tl, fault, opts = prepare(args, topo)
    return sim.run(topo, pipe, args.profile, tl, fault, **opts), fault.watch


@pytest.mark.timeout(900)  # a fabric second with the refresh ticks: ~1.5 CPU minutes, more on a loaded machine
def test_pfc_deadlock_forms_the_watchdog_breaks_it_and_the_queues_are_restored(fabric_pipeline) -> None:
    """The routing loop over leaf1:3 <-> spine1:1 fills both lossless queues, each switch
    pauses the other and nothing moves (kept paused by the PFC refresh timer, not by
    arrivals); 200 ms later both watchdogs find their queue stuck and drop it, the monitor
    reports it, and once the loop is gone and no pause came for 200 ms the queues honour PFC
    again and the workload's flows cross the cable again."""
    run, watch = _deadlock(fabric_pipeline)
    tl = run.timeline
    stages = watch.stage_bounds(tl)
    rows = {r[0]: r[1:] for r in watch.rows(tl)}
    # the deadlock: both queues full, paused all the time, nothing dequeued
    assert watch.deadlock_us is not None and watch.deadlock_us <= tl.start_us + 5_000
    for end in ("leaf1:3", "spine1:1"):
        assert rows[f"{end} queue depth (max)"][1] == 128
        assert rows[f"{end} paused (% of time)"][1] == "100"
        assert rows[f"{end} dequeued (pkt/ms)"][1] == "0.0"
    # the watchdog acts 200 ms into the uninterrupted pause (seen by the 1 ms samples) ...
    acted = watch.storm_us(tl.start_us)
    assert tl.start_us + 200_000 <= acted <= tl.start_us + 202_000
    assert stages["watchdog acting"][0] == acted - 1_000  # the sample interval it acted in
    assert rows["leaf1:3 watchdog drops"][1] == 0 and rows["spine1:1 watchdog drops"][1] == 0
    assert rows["leaf1:3 watchdog drops"][1] + rows["leaf1:3 watchdog drops"][2] >= 128
    assert rows["spine1:1 watchdog drops"][1] + rows["spine1:1 watchdog drops"][2] >= 128
    # ... and the controller hears of it at its next poll (10 ms telemetry samples)
    storms = {(e.switch, e.port, e.prio): e.t_us for e in tl.events if e.kind == "watchdog-storm"}
    restored = {(e.switch, e.port, e.prio) for e in tl.events if e.kind == "watchdog-restored"}
    for end in (("leaf1", 3, 3), ("spine1", 1, 3)):
        assert acted <= storms[end] <= acted + 10_000
        assert end in restored
    # the loop removed, the queues restored: the workload's flows cross the cable again
    assert [(e.kind, e.switch) for e in tl.events if e.kind in ("pin", "unpin")] == [
        ("pin", "leaf1"), ("pin", "spine1"), ("unpin", "leaf1"), ("unpin", "spine1")]
    assert stages["restored"][0] > tl.end_us
    assert float(rows["leaf1:3 dequeued (pkt/ms)"][3]) > 0 and float(rows["spine1:1 dequeued (pkt/ms)"][3]) > 0
    assert rows["workload messages done"][3] > 0
    assert {r[0]: r[1:] for r in tl.rows()}["watchdog events"][1] >= 2
    text = watch.format(tl)
    assert "deadlocked" in text and "watchdog acting" in text


def test_pfc_deadlock_without_the_refresh_timer_leaks_and_the_watchdog_never_fires(fabric_pipeline) -> None:
    """Without the refresh ticks the pauses only come with arrivals: each one runs out, a few
    packets leak round the loop, and the watchdog (an uninterrupted pause, here of 20 ms) never
    acts in three times its detection time."""
    args = _args("pfc-deadlock", "leaf1:3", "--detect", "20")
    topo = parse_topology(TOPO)
    tl, fault, opts = prepare(args, topo)
    fault.refresh = False
    sim.run(topo, fabric_pipeline, args.profile, tl, fault, **{**opts, "until_ns": tl.start_us * 1_000 + 60_000_000})
    rows = {r[0]: r[1:] for r in fault.watch.rows(tl)}
    assert fault.watch.deadlock_us is None and fault.watch.storm_us() is None
    assert not [e for e in tl.events if e.kind == "watchdog-storm"]
    assert float(rows["leaf1:3 dequeued (pkt/ms)"][1]) > 0  # the leak
