"""fabric.p4 and the NIC model in virtual time: every switch runs the compiled program on the
p4switch device, configured by the controller through in-process P4Runtime, every host a Nic.
What a user sees: bytes delivered intact, traffic over both spines, INT with the right hops,
PFC pauses under incast, the same run files twice."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from pathlib import Path

import pytest

from controller import fabric_rules
from controller.cli import main as fabricctl
from controller.profiles import settings_for
from controller.sim_cmd import simulate
from controller.workloads import workload_specs
from nicmodel.int_md import report_hops
from topo.builder import leaf_spine

LEAVES = {1, 2}  # device ids of leaf1, leaf2 (topo.builder)
SPINES = {101, 102}


def _run(pipe, profile: str, workload: str, size: int, settings=None):
    topo = leaf_spine(2, 2, 2)
    specs = workload_specs(topo, workload, [h.name for h in topo.hosts], size=size)
    return simulate(topo, pipe, settings or settings_for(profile), profile, specs)


def _spine_rx(run) -> dict[str, int]:
    return {name: node.device.stats["rx"] for name, node in run.fabric.switches.items() if name.startswith("spine")}


@pytest.mark.parametrize("profile", ["baseline", "ai-fabric"])
def test_ring_allreduce_delivers_every_byte_intact(fabric_pipeline, profile) -> None:
    run = _run(fabric_pipeline, profile, "all-reduce", 64 * 1024)
    assert run.done and run.errors == []
    assert all(s["data_ok"] is True for s in run.statuses.values())
    assert sum(_spine_rx(run).values()) > 0  # the ring crosses the spines between the leaves


def test_ecmp_spreads_flows_over_both_spines(fabric_pipeline) -> None:
    run = _run(fabric_pipeline, "baseline", "all-to-all", 16 * 1024)
    assert run.done and run.errors == []
    rx = _spine_rx(run)
    total = sum(rx.values())
    assert all(n > total // 10 for n in rx.values()), rx


def test_int_reports_carry_one_hop_per_switch_on_the_path(fabric_pipeline) -> None:
    topo = leaf_spine(2, 2, 2)
    specs = workload_specs(topo, "all-to-all", [h.name for h in topo.hosts], size=8 * 1024)
    frames: list[bytes] = []
    run = simulate(topo, fabric_pipeline, settings_for("ai-fabric"), "ai-fabric", specs,
                   observe=lambda switch, pkt: frames.append(pkt.payload))
    assert run.done and run.errors == []
    paths = [tuple(hop.switch_id for hop in report_hops(f)) for f in frames]
    assert {len(p) for p in paths} == {1, 3}  # same-leaf pairs: the leaf; others: leaf, spine, leaf
    for ids in paths:
        if len(ids) == 3:
            assert {ids[0], ids[2]} == LEAVES and ids[1] in SPINES
        else:
            assert ids[0] in LEAVES
    # ai-fabric's sinks also forward the INT to the NICs, which echo it for HPCC
    hpcc = [qp.cc for nic in run.fabric.nics.values() for qp in nic.host.nic.qps if qp.cc.hops_seen]
    assert {qp_cc.hops_seen for qp_cc in hpcc} == {1, 3}


def test_incast_pauses_senders_only_with_pfc_on(fabric_pipeline) -> None:
    on = _run(fabric_pipeline, "baseline", "incast", 256 * 1024)
    assert on.done and on.errors == []
    pauses_on = _pauses(on)
    assert pauses_on > 0
    assert sum(n.host.nic.counters.pause_frames_received for n in on.fabric.nics.values()) > 0
    off_settings = settings_for("baseline", {"pfc": {"enabled": False}})
    off = _run(fabric_pipeline, "baseline", "incast", 256 * 1024, off_settings)
    assert _pauses(off) == 0
    _port_stats_read_in_two_reads_as_cell_by_cell(on.controller)


def _port_stats_read_in_two_reads_as_cell_by_cell(ctl) -> None:
    """A telemetry sample's port statistics of a switch: the registers' cells in one Read, the
    counters' in another, the same figures as each statistic read alone."""
    pauses = ctl.p4.resolve("counters", "pfc_pauses_sent")
    switch = max(ctl.topo.switches, key=lambda s: sum(pk for pk, _ in ctl.read_counter(s.name, pauses).values())).name
    conn = ctl.conns[switch]
    reads = []
    read_encoded = conn.read_encoded
    conn.read_encoded = lambda entities: reads.append(entities) or read_encoded(entities)
    stats = fabric_rules.read_port_stats(ctl, switch)
    conn.read_encoded = read_encoded
    assert len(reads) == 2
    ports = sorted(ctl.topo.ports_of(switch))
    for field, (kind, short, per_prio) in fabric_rules.PORT_STATS.items():
        cells = fabric_rules.stat_cells(ports, per_prio)
        name = ctl.p4.resolve(kind, short)
        alone = (ctl.read_register(switch, name, list(cells)) if kind == "registers"
                 else {i: pk for i, (pk, _) in ctl.read_counter(switch, name, list(cells)).items()})
        assert {p: stats[p].get(field, 0) for p in ports} == {
            p: sum(v for i, v in alone.items() if cells[i] == p) for p in ports}, field
    assert sum(stats[p]["pauses"] for p in ports) > 0


def _pauses(run) -> int:
    total = 0
    for s in run.controller.topo.switches:
        total += sum(p.get("pauses", 0) for p in fabric_rules.read_port_stats(run.controller, s.name).values())
    return total


def test_all_reduce_recovers_when_both_uplinks_of_a_leaf_fail_for_a_while(fabric_pipeline) -> None:
    topo = leaf_spine(2, 2, 2)
    specs = workload_specs(topo, "all-reduce", [h.name for h in topo.hosts], size=64 * 1024)
    down = [("leaf1", "spine1", 5_000, 40_000), ("leaf1", "spine2", 5_000, 40_000)]
    run = simulate(topo, fabric_pipeline, settings_for("baseline"), "baseline", specs, cables_down=down)
    assert run.done and run.errors == []
    assert all(s["data_ok"] is True for s in run.statuses.values())
    lost = sum(lk.counters.down_drops for name, lk in run.fabric.links.items() if "spine" in name)
    resent = sum(qp.counters.retransmitted_pkts for nic in run.fabric.nics.values() for qp in nic.host.nic.qps)
    assert lost > 0 and resent > 0


def test_same_inputs_give_byte_identical_run_files(tmp_path, monkeypatch) -> None:
    """Also when the switches' P4 runs compiled to C (``--backend mypyc``), and when nothing
    does: a process started with ``P4SWITCH_BACKEND=python`` runs the switch's, the NIC
    model's and the simulator's modules as Python too (``netbase.hotpath``), the reference
    their builds must match."""
    monkeypatch.setenv("P4SWITCH_BACKEND", "python")  # restored afterwards: --backend sets it
    argv = ["sim", "run", "--topology", "leafspine:2x2x2", "--profiles", "baseline,ai-fabric",
            "--workload", "all-reduce", "--size", "32KiB", "--seed", "3", "--no-progress"]
    assert fabricctl([*argv, "--out", str(tmp_path / "a")]) == 0
    assert fabricctl([*argv, "--out", str(tmp_path / "b")]) == 0
    assert fabricctl([*argv, "--backend", "mypyc", "--out", str(tmp_path / "c")]) == 0
    subprocess.run([sys.executable, "-m", "controller.cli", *argv, "--out", str(tmp_path / "d")],
                   check=True, capture_output=True, timeout=600, cwd=Path(__file__).parents[2])
    runs_a = sorted((tmp_path / "a" / "runs").glob("*.json"))
    assert [p.name for p in runs_a] == ["001-all-reduce-baseline.json", "002-all-reduce-ai-fabric.json"]
    for p in runs_a:
        for other in "bcd":
            assert p.read_bytes() == (tmp_path / other / "runs" / p.name).read_bytes(), other
        assert json.loads(p.read_text())["ok"] is True


def test_poisson_flows_each_on_their_own_queue_pair(fabric_pipeline, tmp_path) -> None:
    cdf = tmp_path / "small.txt"
    cdf.write_text("1000 0\n2000 50\n4000 100\n")
    topo = leaf_spine(2, 2, 2)
    specs = workload_specs(topo, "poisson", [h.name for h in topo.hosts], size=1, cdf=str(cdf), load=0.5,
                           qp_per_flow=True, duration_ns=20_000)
    run = simulate(topo, fabric_pipeline, settings_for("ai-fabric"), "ai-fabric", specs)
    assert run.done and run.errors == []
    flows = sum(len(nic.run_stats.messages) for nic in run.fabric.nics.values())
    assert flows > 20
    used = [qp for nic in run.fabric.nics.values() for qp in nic.host.nic.qps if qp.counters.data_pkts_sent]
    assert len(used) == flows  # one queue pair per flow, each sending exactly its flow
    assert all(m.end_ns is not None for nic in run.fabric.nics.values() for m in nic.run_stats.messages)


def test_poisson_by_duration_from_the_command_line(tmp_path, capsys) -> None:
    cdf = tmp_path / "small.txt"
    cdf.write_text("1000 0\n4000 100\n")
    argv = ["sim", "run", "--profiles", "baseline", "--workload", "poisson", "--cdf", str(cdf), "--load", "0.5",
            "--duration", "10us", "--no-progress", "--out", str(tmp_path / "out")]
    assert fabricctl(argv) == 0
    out = capsys.readouterr().out
    assert "load 0.5, 10 us of arrivals" in out
    (path,) = (tmp_path / "out" / "runs").glob("*.json")
    run = json.loads(path.read_text())
    assert run["params"]["duration_ns"] == 10_000 and run["params"]["qp_per_flow"] is True
    assert run["ok"] and run["messages"]


def test_a_run_stopped_before_the_end_says_where_each_nic_stood(fabric_pipeline) -> None:
    """Stopped after 2 us of a 64 KiB all-to-all (nothing can finish): every host is reported
    with the messages it had not completed (three peers each) and its recovery counters."""
    topo = leaf_spine(2, 2, 2)
    specs = workload_specs(topo, "all-to-all", [h.name for h in topo.hosts], size=64 * 1024)
    run = simulate(topo, fabric_pipeline, settings_for("baseline"), "baseline", specs, until_ns=2_000)
    assert not run.done
    stuck = [e for e in run.errors if "not done at" in e]
    assert sorted(e.split(":")[0] for e in stuck) == sorted(h.name for h in topo.hosts)
    assert all("3 message(s) unfinished: to 10." in e and "(65536 B)" in e and "0 ack timeouts" in e
               for e in stuck), stuck


def test_a_run_keeps_its_setup_out_of_the_collector_and_thaws_it_after(fabric_pipeline) -> None:
    """While a run goes, the objects that existed before it are frozen (the collector's full
    passes skip them); after it they are thawed, so a process that runs many simulations
    collects each one's garbage. Objects someone else froze stay as they were."""
    topo = leaf_spine(2, 2, 2)
    specs = workload_specs(topo, "all-reduce", [h.name for h in topo.hosts], size=16 * 1024)
    during: list[int] = []
    assert gc.get_freeze_count() == 0
    run = simulate(topo, fabric_pipeline, settings_for("baseline"), "baseline", specs,
                   on_tick=lambda _fab, _now: during.append(gc.get_freeze_count()))
    assert run.done and during and min(during) > 10_000 and gc.get_freeze_count() == 0
    gc.freeze()
    try:
        theirs = gc.get_freeze_count()
        run = simulate(topo, fabric_pipeline, settings_for("baseline"), "baseline", specs)
        assert run.done and gc.get_freeze_count() > theirs * 0.9  # not thawed (some freed by refcount)
    finally:
        gc.unfreeze()
