"""Cross-check (as root, Mininet): one small scenario on the live fabric and in virtual time.

The timing-independent results must be equal: every byte delivered intact, the same paths
in the INT reports (each report's hops as (switch, egress port), source leaf first: ECMP
hashes the same headers to the same uplinks in both modes), hop records from every switch.
Flow completion times are fabric time in both modes but the live fabric is time-dilated Python
processes on a shared machine: they must agree within a factor of 4 (median FCT), the tolerance this machine's scheduling allows.
"""

from __future__ import annotations

import pytest

from controller.pipeline import compile_fabric
from controller.profiles import settings_for
from controller.sim_cmd import simulate
from controller.telemetry import Telemetry
from controller.workloads import run_workload, workload_specs
from nicmodel.int_md import report_hops
from tests.live_fabric import live_fabric

DILATION = 20000
SIZE = 16 * 1024
FCT_TOLERANCE = 4.0

pytestmark = pytest.mark.net  # a live Mininet fabric: root, veths, switch processes


def _paths(reports: list[bytes]) -> set[tuple[tuple[int, int], ...]]:
    return {tuple((h.switch_id, h.egress_port) for h in report_hops(r)) for r in reports}


def test_live_and_simulated_fabric_agree(tmp_path) -> None:

    pipe = compile_fabric("ours", tmp_path / "build")
    with live_fabric(tmp_path, "x", "baseline", DILATION, pipe, out="live") as fabric:
        topo, ctl = fabric.topo, fabric.ctl
        hosts = [h.name for h in topo.hosts]
        tel = Telemetry(ctl)
        live_reports: list[bytes] = []

        def packet_in(switch, pkt) -> None:
            tel.on_packet_in(switch, pkt)
            live_reports.append(pkt.payload)

        ctl.on_packet_in = packet_in
        live, _ = run_workload(fabric.state, ctl, "all-to-all", hosts, size=SIZE, progress=False, telemetry=tel)

    specs = workload_specs(topo, "all-to-all", hosts, size=SIZE)
    sim_reports: list[bytes] = []
    sim = simulate(topo, pipe, settings_for("baseline"), "baseline", specs,
                   observe=lambda switch, pkt: sim_reports.append(pkt.payload))
    assert live.ok, live.errors
    assert sim.done and sim.errors == []
    assert live.data_verified == sorted(hosts)
    assert all(s["data_ok"] is True for s in sim.statuses.values())
    live_paths = _paths(live_reports)
    assert live_paths == _paths(sim_reports)
    assert {3} == {len(p) for p in live_paths if p[0][0] != p[-1][0]}  # across leaves: leaf, spine, leaf
    assert {sw for p in live_paths for sw, _ in p} == {s.device_id for s in topo.switches}
    live_p50 = live.fct_percentiles()["p50"]
    fcts = sorted(m.end_ns - m.start_ns for nic in sim.fabric.nics.values() for m in nic.run_stats.messages)
    sim_p50 = fcts[(len(fcts) + 1) // 2 - 1] / 1e3
    assert sim_p50 / FCT_TOLERANCE <= live_p50 <= sim_p50 * FCT_TOLERANCE, (live_p50, sim_p50)
