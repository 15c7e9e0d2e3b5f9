"""End to end in Mininet (as root): the default 2x2x2 fabric with the controller and RNICs.

Every host pair delivers RDMA WRITEs intact, the ring all-reduce completes under both
profiles, telemetry has INT reports and counters from every switch, and teardown leaves no
interface, namespace or process behind. Node names carry a random prefix so that nothing
collides with another fabric on the machine.
"""

from __future__ import annotations

import logging
import os
import re
import secrets
import subprocess

import pytest

from controller import run_demo
from controller.cli import main
from controller.profiles import settings_for
from controller.telemetry import Telemetry
from controller.workloads import run_workload
from tests.live_fabric import live_fabric

pytestmark = pytest.mark.net  # Mininet, as root

DILATION = 20000
SIZE = 64 * 1024


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # a zombie is gone for our purposes
        return f.read().split(")")[-1].split()[0] != "Z"


def _netns() -> set[str]:
    return set(subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split("\n")) - {""}


def _links_with(prefix: str) -> list[str]:
    out = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    return [line.split(":")[1].strip() for line in out.splitlines() if line.split(":")[1].strip().startswith(prefix)]


def test_fabric_end_to_end(tmp_path, capsys):
    with live_fabric(tmp_path, "c", "baseline", DILATION) as live:
        prefix, topo, state, ctl = live.prefix, live.topo, live.state, live.ctl
        pids = live.fab.pids()
        assert len(pids) == 4 + 4 + 4  # switch processes, NIC processes, host shells
        tel = Telemetry(ctl)
        ctl.on_packet_in = tel.on_packet_in
        hosts = [h.name for h in topo.hosts]

        pairs, path = run_workload(state, ctl, "all-to-all", hosts, size=SIZE, progress=False, telemetry=tel)
        assert pairs.ok, pairs.errors
        assert len({(m.src, m.dst) for m in pairs.messages}) == 12  # every ordered pair of the 4 hosts
        assert pairs.bytes_delivered == 12 * SIZE
        assert pairs.data_verified == sorted(hosts)  # every receiver holds exactly what each sender wrote
        tel_dir = tmp_path / "out" / "telemetry" / path.stem
        assert {p.name for p in tel_dir.iterdir()} >= {"samples.csv", "int_hops.csv", "summary.json",
                                                       *(f"nic-{h}.json" for h in hosts)}
        assert len((tel_dir / "int_hops.csv").read_text().splitlines()) > 1

        runs = {}
        for profile in ("baseline", "ai-fabric"):
            ctl.apply(settings_for(profile), profile)
            reports_before = sum(tel.reports.values())
            runs[profile], _ = run_workload(state, ctl, "all-reduce", hosts, size=SIZE, progress=False, telemetry=tel)
            assert runs[profile].ok, runs[profile].errors
            assert runs[profile].completion_us > 0
            assert runs[profile].data_verified == sorted(hosts)  # the reduced sums are right
            # INT reports under both profiles (ai-fabric's sinks forward INT to the NICs and report it)
            assert sum(tel.reports.values()) > reports_before, profile

        # telemetry: INT reports with hop records of every switch, and counters read from every switch
        assert {h.switch for h in tel.hops} == set(topo.switch_names())
        snap = tel.snapshots[-1]
        assert {sw for sw, _ in snap.ports} == set(topo.switch_names())
        for s in topo.switches:
            assert sum(p.tx_bytes for (sw, _), p in snap.ports.items() if sw == s.name) > 0, s.name
        assert any(series.mean > 0 for series in runs["baseline"].links)

        # the operator's view of the same fabric: fabricctl through the state file
        state_path = live.state_path
        state.profile = "ai-fabric"
        state.save(state_path)
        assert main(["--state", str(state_path), "status"]) == 0
        out = capsys.readouterr().out
        assert out.count("up cc=hpcc rel=sr") == 4 and out.count("fabric.p4") == 4
        assert main(["--state", str(state_path), "run", "incast", "--size", "16384"]) == 0
        out = capsys.readouterr().out
        assert "incast/ai-fabric" in out and "saved" in out
        assert main(["--state", str(state_path), "run", "incast", "--hosts", f"{prefix}h1_1,nobody"]) == 2
        assert "no NIC on host 'nobody'" in capsys.readouterr().err
    assert [pid for pid in pids if _alive(pid)] == []  # host shells gone: their namespaces with them
    assert [n for n in _netns() if prefix in n] == []
    assert _links_with(prefix) == []
    assert not any((tmp_path / "fabric" / "nic").glob("*.sock"))


def test_make_run_calibrates_repeats_and_shows_median_range_and_lag(tmp_path, capsys, caplog):
    """``make run``'s script itself, kept short (64 KiB, 2 runs per profile): D is calibrated at
    start-up, the table shows every metric as median [min-max] per profile, the scheduling lag
    measured on the switches and NICs and the flagged runs, one verdict line, the median runs'
    plots, and everything is torn down."""
    caplog.set_level(logging.INFO)
    prefix = "d" + secrets.token_hex(1)
    out = tmp_path / "out"
    rc = run_demo.main(["--repeats", "2", "--size", str(SIZE), "--prefix", prefix, "--out", str(out),
                        "--state", str(tmp_path / "state.json"), "--timeout", "300"])
    text = capsys.readouterr().out
    assert rc == 0, text
    head = next(line for line in text.splitlines() if line.startswith("Ring all-reduce"))
    assert "median [min-max] of 2 run(s) per profile" in head
    rows = {line.split("  ")[0].strip(): line for line in text.splitlines()}
    assert "all-reduce/baseline (n=2)" in rows["metric"] and "all-reduce/ai-fabric (n=2)" in rows["metric"]
    assert rows["runs completed"].split()[-2:] == ["2/2", "2/2"]
    assert "runs flagged (lag)" in rows
    cells = re.findall(r"(\d[\d.]*)(?: \[(\d[\d.]*)-(\d[\d.]*)\])?", rows["completion time (us)"])
    assert len(cells) == 2, rows["completion time (us)"]  # one per profile
    for median, low, high in cells:  # median [min-max], or the one value both runs agreed on
        assert float(median) > 0 and (not low or float(low) <= float(median) <= float(high))
    lag = next(line for key, line in rows.items() if key.startswith("sched lag p99, worst (us; limit 1.02"))
    assert "n/a" not in lag  # measured on our switches and the NICs
    d = float(rows["time dilation D"].split()[-1].replace(",", ""))
    assert d >= 1 and f"time dilation {d:g}," in head  # the calibrated D, in the table and its heading
    assert "calibrating the time dilation" in caplog.text and f"D = {d:,.0f}" in caplog.text
    assert sum(line.startswith("verdict: ai-fabric") for line in text.splitlines()) == 1
    assert {p.name for p in (out / "plots").iterdir()} >= {"fct_cdf.png", "link_util_heatmap.png", "comparison.csv"}
    assert len(list((out / "runs").glob("*.json"))) == 4
    assert _links_with(prefix) == [] and [n for n in _netns() if prefix in n] == []
