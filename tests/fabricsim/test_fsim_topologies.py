"""Topologies in virtual time: the three-tier fat tree, link rates of 25/100/400 Gb/s and both
RoCE MTUs, each carrying a ring all-reduce with every byte intact."""

from __future__ import annotations

import pytest

from controller.profiles import settings_for
from controller.routing import routes
from controller.sim_cmd import parse_topology, simulate
from controller.workloads import workload_specs
from topo.builder import fat_tree


def test_fat_tree_sizes_and_up_down_routes() -> None:
    for k, hosts, switches in ((4, 16, 20), (8, 128, 80)):
        t = fat_tree(k)
        assert (len(t.hosts), len(t.switches)) == (hosts, switches)
    t = fat_tree(4)
    by_prefix = {str(r.prefix): [nh.peer for nh in r.next_hops] for r in routes(t, "edge1")}
    assert by_prefix["10.1.1.2/32"] == ["h1_1"]
    assert by_prefix["10.8.0.0/16"] == ["agg1", "agg2"]  # up through both aggregation switches
    agg = {str(r.prefix): [nh.peer for nh in r.next_hops] for r in routes(t, "agg1")}
    assert agg["10.2.0.0/16"] == ["edge2"] and agg["10.3.0.0/16"] == ["core1", "core2"]
    core = {str(r.prefix): [nh.peer for nh in r.next_hops] for r in routes(t, "core3")}
    assert core["10.3.0.0/16"] == ["agg4"]  # core 3 meets pod 2 at its second aggregation switch


@pytest.mark.parametrize("bad", [3, 0, 18])
def test_fat_tree_refuses_impossible_k(bad) -> None:
    with pytest.raises(ValueError, match="even integer"):
        fat_tree(bad)


@pytest.mark.parametrize("text, message", [
    ("leafspine:2x2", "leafspine:NxMxK"),
    ("fattree:x", "fattree:K"),
    ("fattree:5", "even integer"),
])
def test_topology_argument_errors(text, message) -> None:
    with pytest.raises(ValueError, match=message):
        parse_topology(text)


def _allreduce(pipe, topo, profile: str, size: int):
    hosts = [h.name for h in topo.hosts]
    run = simulate(topo, pipe, settings_for(profile), profile, workload_specs(topo, "all-reduce", hosts, size=size))
    assert run.done and run.errors == []
    assert all(s["data_ok"] is True for s in run.statuses.values())
    return run


def test_fat_tree_k4_all_reduce_crosses_pods_intact(fabric_pipeline) -> None:
    run = _allreduce(fabric_pipeline, fat_tree(4), "ai-fabric", 16 * 1024)
    cores = [n.device.stats["rx"] for name, n in run.fabric.switches.items() if name.startswith("core")]
    assert sum(cores) > 0


@pytest.mark.parametrize("rate, mtu", [(25.0, 1024), (400.0, 4096)])
def test_link_rates_and_mtus(fabric_pipeline, rate, mtu) -> None:
    topo = parse_topology("leafspine:2x2x2", rate, mtu)
    run = _allreduce(fabric_pipeline, topo, "baseline", 64 * 1024)
    assert {lk.config.rate_bps for lk in run.fabric.links.values()} == {rate * 1e9}
    # a data packet carries up to one MTU of payload
    sent = [qp for nic in run.fabric.nics.values() for qp in nic.host.nic.qps if qp.counters.data_pkts_sent]
    assert sent and all(qp.config.mtu == mtu for qp in sent)
