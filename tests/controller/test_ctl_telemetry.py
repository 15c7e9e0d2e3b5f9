"""The collector reads the INT reports fabric.p4 itself sends, not hand-made bytes.

A leaf of the default topology runs fabric.p4 on our executor with exactly the entries the
controller computes for it (baseline: the sink strips INT and reports; ai-fabric: it forwards
INT to the host for HPCC *and* reports). An INT data packet from a spine to a host goes
through it; the CPU-port output, with its 2-byte PacketIn header removed as the P4Runtime
server does, goes to ``Telemetry.on_packet_in``. Input frames come from scapy and
``ptf_tests.fabric.fabric_packets``, independently of the parser under test.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from p4.v1 import p4runtime_pb2

from controller.fabric_rules import build_intents
from controller.p4info import P4InfoIndex
from controller.profiles import settings_for
from controller.telemetry import Telemetry, parse_report
from nicmodel import int_md
from p4switch.exec import LoadedProgram, V1Pipeline
from p4switch.frontend import compile_file
from ptf_tests.fabric.fabric_packets import Hop, IntStack, roce, with_int
from topo.builder import leaf_spine

FABRIC = Path(__file__).resolve().parents[2] / "p4src" / "fabric.p4"
CPU_PORT = 255
PACKET_IN_LEN = 2  # packet_in header: ingress_port (9 bits) + pad (7)
HOST_PORT, UPLINK = 1, 3  # leaf1: h1_1 on port 1, spine1 on port 3
RATE = 100_000
# What the packet carries when it reaches leaf1: leaf2 (source, id 2) and spine1 (id 101) hops.
UPSTREAM = [Hop(101, 2, 1, 3, 3, 4, 120, 123, 9000, RATE), Hop(2, 1, 3, 2, 3, 1, 100, 102, 5000, RATE)]


@pytest.fixture(scope="module")
def checked():
    return compile_file(str(FABRIC))


def leaf1(checked, fabric_pipeline, profile: str) -> tuple[V1Pipeline, LoadedProgram]:
    """leaf1 holding the controller's intent for ``profile``."""
    topo = leaf_spine()
    intent = build_intents(topo, settings_for(profile), P4InfoIndex(fabric_pipeline.p4info))["leaf1"]
    prog = LoadedProgram.from_checked(checked)
    for (profile_name, member_id), call in intent.members.items():
        prog.action_profiles[profile_name].add_member(member_id, call)
    for (profile_name, group_id), members in intent.groups.items():
        prog.action_profiles[profile_name].add_group(group_id, list(members))
    for session in intent.clone_sessions.values():
        prog.pre.set_clone_session(session)
    for table, entry in intent.entries.values():
        prog.tables[table].insert(entry)
    for table, call in intent.defaults.items():
        prog.tables[table].set_default(call)
    return V1Pipeline(prog, cpu_port=CPU_PORT), prog


def int_packet(psn: int = 0) -> bytes:
    """A RoCE WRITE from h2_1 to h1_1 as spine1 hands it to leaf1."""
    topo = leaf_spine()
    plain = roce(src_ip=topo.host("h2_1").ip, dst_ip=topo.host("h1_1").ip, psn=psn,
                 src_mac=topo.switch("spine1").mac, dst_mac=topo.switch("leaf1").mac)
    return with_int(plain, IntStack(3, UPSTREAM))


def telemetry() -> Telemetry:
    return Telemetry(SimpleNamespace(topo=leaf_spine()))


def run(pipe: V1Pipeline, frame: bytes) -> dict[int, bytes]:
    out = pipe.process(UPLINK, frame)
    got = dict(out)
    assert len(got) == len(out)
    return got


@pytest.mark.parametrize("profile", ["baseline", "ai-fabric"])
def test_collector_reads_the_leaf_reports_with_every_hop(checked, fabric_pipeline, profile):
    pipe, _ = leaf1(checked, fabric_pipeline, profile)
    tel = telemetry()
    for psn in range(2):
        got = run(pipe, int_packet(psn))
        assert set(got) == {HOST_PORT, CPU_PORT}
        to_host, stack = int_md.strip(got[HOST_PORT])
        if profile == "baseline":
            assert stack is None  # report sink: the host gets plain RoCEv2
        else:  # to-host-and-report sink: the NIC gets every hop to echo, leaf1's on top
            assert [(h.switch_id, h.ingress_port, h.egress_port) for h in stack.hops()] == [
                (2, 1, 3), (101, 2, 1), (1, UPLINK, HOST_PORT)]
        assert int.from_bytes(got[CPU_PORT][:PACKET_IN_LEN], "big") >> 7 == UPLINK  # PacketIn ingress_port
        tel.on_packet_in("leaf1", p4runtime_pb2.PacketIn(payload=got[CPU_PORT][PACKET_IN_LEN:]))
    assert tel.reports["leaf1"] == 2 and tel.malformed_reports == 0
    points = [(h.switch, h.port) for h in tel.hops]
    assert points == [("leaf2", 3), ("spine1", 1), ("leaf1", HOST_PORT)] * 2  # source first, the sink's own hop last
    assert [(h.qdepth, h.t_us) for h in tel.hops[:2]] == [(1, 102), (4, 123)]


def test_sink_hop_in_a_report_shows_the_host_port_queue(checked, fabric_pipeline):
    """The report clone queues towards the collector, so the sink's own record takes the host
    port's depth from ``port_qdepth`` (our executor runs the clone's egress first)."""
    pipe, prog = leaf1(checked, fabric_pipeline, "ai-fabric")
    prog.registers["port_qdepth"].write(HOST_PORT, 7)
    got = run(pipe, int_packet())
    hops = parse_report(got[CPU_PORT][PACKET_IN_LEN:])
    assert (hops[-1].switch_id, hops[-1].egress_port, hops[-1].qdepth_pkts) == (1, HOST_PORT, 7)
    _, stack = int_md.strip(got[HOST_PORT])
    assert stack.hops()[-1].qdepth_pkts == 0  # the forwarded packet's own dequeue depth


def test_only_the_report_format_is_accepted(checked, fabric_pipeline):
    pipe, _ = leaf1(checked, fabric_pipeline, "baseline")
    report = run(pipe, int_packet())[CPU_PORT][PACKET_IN_LEN:]
    assert len(parse_report(report)) == 3
    bad_count = bytearray(report)
    bad_count[14 + 20 + 8 + 1] = 2  # report header hop_count
    for bad in (int_packet(), report[:60], bytes(bad_count), report[:14 + 20 + 8] + b"\x21" + report[43:]):
        with pytest.raises(ValueError):
            parse_report(bad)
    tel = telemetry()
    tel.on_packet_in("leaf1", p4runtime_pb2.PacketIn(payload=int_packet()))  # INT without the report around it
    assert (tel.reports["leaf1"], tel.malformed_reports, tel.hops) == (0, 1, [])
