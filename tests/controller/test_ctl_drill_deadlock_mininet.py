"""The PFC deadlock drill against a live Mininet fabric (as root): the routing loop fills both
lossless queues of leaf1:3 <-> spine1:1, the switches' refresh timer (the controller's ticks,
through the time dilation) keeps them paused, a watchdog finds its queue stuck and stops
honouring the pauses, the controller hears of it, the cable moves again, and the workload
completes once the loop is removed.

Not asserted live: the queues' restoration. Packets tail-dropped while the loop ran at line
rate are forgotten by fabric.p4's count only after ``pfc.stale_us`` (200 ms of fabric time,
over an hour of wall time at D=20000; the setting may not go below the watchdog's default
detection), so the spine keeps receiving pauses and stays in its storm; the simulated drill
shows the restoration."""

from __future__ import annotations

import json

import pytest

from controller.cli import main
from tests.live_fabric import live_fabric

pytestmark = pytest.mark.net

DILATION = 20000


def test_live_pfc_deadlock_drill_watchdog_breaks_it(tmp_path, capsys) -> None:
    """Detection shortened to 0.4 ms of fabric time (8 s of wall time at D=20000); action
    forward (a drop is never uncounted by fabric.p4 and would hold the senders paused for
    200 ms of fabric time)."""
    with live_fabric(tmp_path, "k", "ai-fabric", DILATION) as live:
        prefix, state_path = live.prefix, live.state_path
        leaf, spine = f"{prefix}leaf1", f"{prefix}spine1"
        rc = main(["--state", str(state_path), "drill", "pfc-deadlock", f"{leaf}:3", "--detect", "0.4",
                   "--action", "forward", "--at", "20us", "--for", "1ms", "--size", "64KiB",
                   "--out", str(tmp_path / "drills")])
        out = capsys.readouterr().out
        assert rc == 0, out
        record = json.loads((tmp_path / "drills" / "drill_pfc-deadlock.json").read_text())
        loop = json.loads((tmp_path / "drills" / "drill_pfc-deadlock_loop.json").read_text())
        storms = {(e["switch"], e["port"], e["prio"]): e["t_us"] for e in record["events"] if e["kind"] == "watchdog-storm"}
        ends = {(leaf, 3, 3), (spine, 1, 3)}
        rows = {r[0]: r[1:] for r in loop["table"]}
        # the deadlock, seen by the loop samples: both queues paused throughout, nothing leaving
        assert loop["deadlock_us"] is not None, out
        for end in (f"{leaf}:3", f"{spine}:1"):
            assert rows[f"{end} paused (% of time)"][1] in ("99", "100"), out
            assert rows[f"{end} dequeued (pkt/ms)"][1] == "0.0", out
        # a loop queue's watchdog acted after 0.4 ms of uninterrupted pause and was heard; the
        # first one breaks the cycle (which one is a race), the other's pause may end before
        acted = {k: t for k, t in storms.items() if k in ends}
        assert acted and all(t >= record["start_us"] + 400 and t > loop["deadlock_us"] for t in acted.values()), out
        # the cable moves again while the watchdog acts
        assert float(rows[f"{leaf}:3 dequeued (pkt/ms)"][2]) > 0 and float(rows[f"{spine}:1 dequeued (pkt/ms)"][2]) > 0, out
        assert [e["kind"] for e in record["events"] if e["kind"] in ("pin", "unpin")] == ["pin", "pin", "unpin", "unpin"]
        assert record["errors"] == [], out  # the all-to-all delivered every byte after all
        assert "watchdog acting" in out and "loop queues" in out
