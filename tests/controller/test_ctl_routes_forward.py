"""The routes and groups the controller computes forward real packets, outside Mininet.

test_ctl_controller.py reads the installed entries back; this file checks what they *do*:
leaf1 of the default topology runs fabric.p4 on our executor with exactly the controller's
entries for a profile (the ``leaf_switch`` fixture in conftest.py), and scapy RoCEv2 frames go
through ``pipe.process``. Up: a host's packet to a remote leaf's host leaves on one uplink,
addressed to the spine on that port, TTL - 1. Down: a spine's packet to a local host leaves on
that host's port, addressed to the host. Load balancing: ``ai-fabric`` sprays one flow over
both uplinks, ``baseline`` (ECMP) keeps a flow on one. Outputs are read with scapy and
``nicmodel.int_md`` (both profiles run INT, so frames may carry an INT stack).
"""

from __future__ import annotations

import pytest
from scapy.contrib.roce import BTH
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from nicmodel import int_md
from p4switch.exec import V1Pipeline
from ptf_tests.fabric.fabric_packets import ROCE_PORT, roce
from topo.builder import leaf_spine

TOPO = leaf_spine()
LEAF = TOPO.switch("leaf1")
LOCAL, REMOTE = TOPO.host("h1_1"), TOPO.host("h2_1")
HOST_PORT = TOPO.host_port(LOCAL.name)[1]
# uplink port -> MAC of the spine behind it (leaf1: port 3 -> spine1, port 4 -> spine2)
SPINE_MAC = {port: TOPO.switch(peer).mac for port, (peer, _, _) in TOPO.ports_of(LEAF.name).items()
             if peer in {s.name for s in TOPO.spines()}}
UPLINKS = set(SPINE_MAC)
PROFILES = ["baseline", "ai-fabric"]


def up_frame(psn: int = 0, sport: int = 49152) -> bytes:
    """h1_1 -> h2_1 as h1_1's NIC sends it to its gateway (leaf1)."""
    return roce(src_ip=LOCAL.ip, dst_ip=REMOTE.ip, psn=psn, sport=sport, src_mac=LOCAL.mac, dst_mac=LEAF.mac)


def data_outputs(pipe: V1Pipeline, port: int, frame: bytes) -> list[tuple[int, bytes]]:
    """Every output except the telemetry reports to the controller (CPU port)."""
    return [(p, f) for p, f in pipe.process(port, frame) if p != LEAF.cpu_port]


def plain(frame: bytes) -> Ether:
    """The frame with any INT stack removed, parsed by scapy as RoCEv2."""
    stripped, _ = int_md.strip(frame)
    pkt = Ether(stripped)
    assert pkt[UDP].dport == ROCE_PORT
    return pkt


@pytest.mark.parametrize("profile", PROFILES)
def test_host_to_remote_leaf_leaves_on_one_uplink_to_the_spine(leaf_switch, profile):
    pipe, _ = leaf_switch(profile)
    for psn in range(4):
        out = data_outputs(pipe, HOST_PORT, up_frame(psn))
        assert len(out) == 1, out
        port, frame = out[0]
        assert port in UPLINKS
        pkt = plain(frame)
        assert (pkt[Ether].dst, pkt[Ether].src) == (SPINE_MAC[port], LEAF.mac)
        assert (pkt[IP].src, pkt[IP].dst, pkt[IP].ttl) == (LOCAL.ip, REMOTE.ip, 63)
        assert pkt[BTH].psn == psn
    assert pipe.stats["packets_in"] == 4


@pytest.mark.parametrize("profile", PROFILES)
def test_spine_to_local_host_leaves_on_the_host_port(leaf_switch, profile):
    pipe, _ = leaf_switch(profile)
    for uplink, spine_mac in sorted(SPINE_MAC.items()):
        frame = roce(src_ip=REMOTE.ip, dst_ip=LOCAL.ip, psn=uplink, src_mac=spine_mac, dst_mac=LEAF.mac)
        out = data_outputs(pipe, uplink, frame)
        assert [port for port, _ in out] == [HOST_PORT]
        pkt = plain(out[0][1])
        assert (pkt[Ether].dst, pkt[Ether].src) == (LOCAL.mac, LEAF.mac)
        assert (pkt[IP].src, pkt[IP].dst, pkt[IP].ttl) == (REMOTE.ip, LOCAL.ip, 63)
        assert pkt[BTH].psn == uplink


def uplinks_used(pipe: V1Pipeline, frames: list[bytes]) -> list[int]:
    ports = []
    for frame in frames:
        out = data_outputs(pipe, HOST_PORT, frame)
        assert len(out) == 1 and out[0][0] in UPLINKS
        ports.append(out[0][0])
    return ports


def test_ai_fabric_sprays_one_flow_over_both_uplinks(leaf_switch):
    pipe, _ = leaf_switch("ai-fabric")
    ports = uplinks_used(pipe, [up_frame(psn) for psn in range(16)])
    assert set(ports) == UPLINKS


def test_baseline_keeps_a_flow_on_one_uplink_and_spreads_flows(leaf_switch):
    pipe, _ = leaf_switch("baseline")
    for sport in (49152, 49153, 50000):
        assert len(set(uplinks_used(pipe, [up_frame(psn, sport) for psn in range(8)]))) == 1
    by_flow = uplinks_used(pipe, [up_frame(0, sport) for sport in range(49152, 49152 + 16)])
    assert set(by_flow) == UPLINKS  # the ECMP hash still uses both uplinks across flows
