"""The PFC deadlock drill against a live Mininet fabric (as root): the routing loop fills both
lossless queues of leaf1:3 <-> spine1:1, the switches' refresh timer (the controller's ticks,
through the time dilation) keeps them paused, both watchdogs find their queue stuck and stop
honouring the pauses, the controller hears of it, and once the loop is removed the queues
honour PFC again and the workload completes."""

from __future__ import annotations

import json

import pytest

from controller.cli import main
from tests.live_fabric import live_fabric

pytestmark = pytest.mark.net

DILATION = 20000


def test_live_pfc_deadlock_drill_watchdog_breaks_it_and_restores(tmp_path, capsys) -> None:
    """Detection shortened to 0.4 ms of fabric time (8 s of wall time at D=20000); action
    forward, because live the lost-packet forgetting (200 ms of fabric time) would outlast
    the test after a drop."""
    with live_fabric(tmp_path, "k", "ai-fabric", DILATION) as live:
        prefix, state_path = live.prefix, live.state_path
        leaf, spine = f"{prefix}leaf1", f"{prefix}spine1"
        rc = main(["--state", str(state_path), "drill", "pfc-deadlock", f"{leaf}:3", "--detect", "0.4",
                   "--action", "forward", "--at", "20us", "--for", "1ms", "--size", "64KiB",
                   "--out", str(tmp_path / "drills")])
        out = capsys.readouterr().out
        print(out)
        assert rc == 0, out
        record = json.loads((tmp_path / "drills" / "drill_pfc-deadlock.json").read_text())
        loop = json.loads((tmp_path / "drills" / "drill_pfc-deadlock_loop.json").read_text())
        storms = {(e["switch"], e["port"], e["prio"]): e["t_us"] for e in record["events"] if e["kind"] == "watchdog-storm"}
        restored = {(e["switch"], e["port"]) for e in record["events"] if e["kind"] == "watchdog-restored"}
        # the deadlock: seen by the loop samples (both queues paused and full, nothing leaving)
        assert (leaf, 3, 3) in storms and (spine, 1, 3) in storms, out
        assert loop["deadlock_us"] is not None and loop["deadlock_us"] < storms[(leaf, 3, 3)], out
        rows = {r[0]: r[1:] for r in loop["table"]}
        assert rows[f"{leaf}:3 paused (% of time)"][1] in ("99", "100"), out
        # both watchdogs acted after their 0.4 ms of uninterrupted pause, and were heard
        for end in ((leaf, 3, 3), (spine, 1, 3)):
            assert storms[end] >= record["start_us"] + 400, out
            assert end[:2] in restored, out
        assert [e["kind"] for e in record["events"] if e["kind"] in ("pin", "unpin")] == ["pin", "pin", "unpin", "unpin"]
        assert loop["stages"]["restored"][0] > record["end_us"], out
        assert record["errors"] == [], out  # the all-to-all delivered every byte after all
        assert "watchdog acting" in out and "loop queues" in out
