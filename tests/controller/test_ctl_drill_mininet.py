"""The link-down drill against a live Mininet fabric (as root): the veth goes down, both
switches report it through their runtime CLI, the controller takes the cable out of the
routes and groups and back in when it returns, and every byte of the workload arrives."""

from __future__ import annotations

import json

import pytest

from controller.cli import main
from tests.live_fabric import live_fabric

pytestmark = pytest.mark.net

DILATION = 20000


def test_live_link_down_drill_reroutes_and_restores(tmp_path, capsys) -> None:
    with live_fabric(tmp_path, "d", "ai-fabric", DILATION) as live:
        prefix, state_path = live.prefix, live.state_path
        leaf = f"{prefix}leaf1"
        rc = main(["--state", str(state_path), "drill", "link-down", f"{leaf}:3", "--at", "50us", "--for", "100us",
                   "--size", "64KiB", "--out", str(tmp_path / "drills")])
        out = capsys.readouterr().out
        assert rc == 0, out
        record = json.loads((tmp_path / "drills" / "drill_link-down.json").read_text())
        kinds = [(e["kind"], e["switch"], e["port"]) for e in record["events"]]
        assert ("port-down", leaf, 3) in kinds and ("port-up", leaf, 3) in kinds
        reroutes = [e for e in record["events"] if e["kind"] == "reroute"]
        assert len(reroutes) == 2 and "removed" in reroutes[0]["detail"] and "restored" in reroutes[1]["detail"]
        assert record["errors"] == []  # the all-to-all delivered every byte, verified by the receivers
        assert (tmp_path / "drills" / "drill_link-down_heatmap.png").exists()


def test_live_pfc_storm_drill_watchdog_detects_and_restores(tmp_path, capsys) -> None:
    """The host sends XOFF from its namespace; the leaf's watchdog (detection shortened to
    0.4 ms of fabric time = 8 s of wall time at D=20000) finds the stuck queue and restores it."""
    with live_fabric(tmp_path, "e", "ai-fabric", DILATION) as live:
        prefix, state_path = live.prefix, live.state_path
        host = f"{prefix}h1_1"
        rc = main(["--state", str(state_path), "drill", "pfc-storm", host, "--prio", "3", "--detect", "0.4",
                   "--at", "20us", "--for", "1ms", "--out", str(tmp_path / "drills")])
        out = capsys.readouterr().out
        assert rc == 0, out
        record = json.loads((tmp_path / "drills" / "drill_pfc-storm.json").read_text())
        storms = [e for e in record["events"] if e["kind"] == "watchdog-storm"]
        restored = [e for e in record["events"] if e["kind"] == "watchdog-restored"]
        assert [(e["switch"], e["port"], e["prio"]) for e in storms] == [(f"{prefix}leaf1", 1, 3)], out
        assert [(e["switch"], e["port"], e["prio"]) for e in restored] == [(f"{prefix}leaf1", 1, 3)], out
        assert storms[0]["t_us"] >= record["start_us"] + 400
        assert restored[0]["t_us"] >= record["end_us"]
