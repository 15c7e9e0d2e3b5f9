"""Operator-named NIC counters on a simulated fabric: an incast marks ECN, the receiver sends
CNPs and the senders handle them, and `fabricctl counters HOST` prints them."""

from __future__ import annotations

from contextlib import contextmanager

import pytest

from controller import cli
from controller.profiles import settings_for
from controller.sim_cmd import parse_topology, simulate
from controller.workloads import workload_specs
from nicmodel.hw_counters import hw_counters

pytestmark = pytest.mark.slow


def test_incast_moves_the_ecn_and_cnp_counters_under_their_operator_names(fabric_pipeline, monkeypatch, capsys) -> None:
    topo = parse_topology("leafspine:2x2x2")
    hosts = [h.name for h in topo.hosts]
    specs = workload_specs(topo, "incast", hosts, size=128 * 1024)
    run = simulate(topo, fabric_pipeline, settings_for("ai-fabric"), "ai-fabric", specs, sample_us=50)
    assert run.errors == []
    hw = {h: hw_counters(run.fabric.nics[h].status()["counters"]) for h in hosts}
    receiver, senders = hosts[0], hosts[1:]
    assert hw[receiver]["np_ecn_marked_roce_packets"] > 0
    assert hw[receiver]["np_cnp_sent"] > 0
    assert sum(hw[s]["rp_cnp_handled"] for s in senders) == hw[receiver]["np_cnp_sent"]

    # the run's report carries the baselines' alerts: the incast's last hop marks far above 5 %
    alerts = run.telemetry.run_alerts()
    assert any(a["kind"] == "congestion" and a["switch"] == "leaf1" and a["port"] == 1 and a["prio"] == 3
               and a["end_us"] is not None for a in alerts), alerts

    @contextmanager
    def attached(_state, with_nics: bool = False):
        assert with_nics  # the live command asks for the NIC connections
        yield None, run.controller

    monkeypatch.setattr(cli, "attached", attached)
    assert cli.main(["counters", receiver, "--all"]) == 0
    out = capsys.readouterr().out
    assert f"np_cnp_sent: {hw[receiver]['np_cnp_sent']}" in out and "rx_prio3_pause:" in out
    run.controller.close()
