"""The collector reads the INT reports fabric.p4 itself sends, not hand-made bytes.

A leaf of the default topology runs fabric.p4 on our executor with exactly the entries the
controller computes for it (baseline: the sink strips INT and reports; ai-fabric: it forwards
INT to the host for HPCC *and* reports). An INT data packet from a spine to a host goes
through it; the CPU-port output, with its 2-byte PacketIn header removed as the P4Runtime
server does, goes to ``Telemetry.on_packet_in``. Input frames come from scapy and
``ptf_tests.fabric.fabric_packets``, independently of the parser under test.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from p4.v1 import p4runtime_pb2

from controller.int_reports import ReportLog
from controller.telemetry import Telemetry
from nicmodel import int_md
from nicmodel.int_md import report_hops
from p4switch.exec import V1Pipeline
from ptf_tests.fabric.fabric_packets import Hop, IntStack, roce, with_int
from topo.builder import leaf_spine

CPU_PORT = 255
PACKET_IN_LEN = 2  # packet_in header: ingress_port (9 bits) + pad (7)
HOST_PORT, UPLINK = 1, 3  # leaf1: h1_1 on port 1, spine1 on port 3
RATE = 100_000
# What the packet carries when it reaches leaf1: leaf2 (source, id 2) and spine1 (id 101) hops.
UPSTREAM = [Hop(101, 2, 1, 3, 3, 4, 120, 123, 9000, RATE), Hop(2, 1, 3, 2, 3, 1, 100, 102, 5000, RATE)]


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
def test_collector_reads_the_leaf_reports_with_every_hop(leaf_switch, profile):
    pipe, _ = leaf_switch(profile)
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


def test_sink_hop_in_a_report_shows_the_host_port_queue(leaf_switch):
    """The report clone queues towards the collector, so the sink's own record takes the host
    port's depth from ``port_qdepth`` (our executor runs the clone's egress first)."""
    pipe, prog = leaf_switch("ai-fabric")
    prog.registers["port_qdepth"].write(HOST_PORT, 7)
    got = run(pipe, int_packet())
    hops = report_hops(got[CPU_PORT][PACKET_IN_LEN:])
    assert (hops[-1].switch_id, hops[-1].egress_port, hops[-1].qdepth_pkts) == (1, HOST_PORT, 7)
    _, stack = int_md.strip(got[HOST_PORT])
    assert stack.hops()[-1].qdepth_pkts == 0  # the forwarded packet's own dequeue depth


def test_only_the_report_format_is_accepted(leaf_switch):
    pipe, _ = leaf_switch("baseline")
    report = run(pipe, int_packet())[CPU_PORT][PACKET_IN_LEN:]
    assert len(report_hops(report)) == 3
    bad_count = bytearray(report)
    bad_count[14 + 20 + 8 + 1] = 2  # report header hop_count
    for bad in (int_packet(), report[:60], bytes(bad_count), report[:14 + 20 + 8] + b"\x21" + report[43:]):
        with pytest.raises(ValueError):
            report_hops(bad)
    tel = telemetry()
    tel.on_packet_in("leaf1", p4runtime_pb2.PacketIn(payload=int_packet()))  # INT without the report around it
    assert (tel.reports["leaf1"], tel.malformed_reports, tel.hops) == (0, 1, [])


def test_the_collector_keeps_each_hop_records_fields_in_fabric_us(leaf_switch):
    """``ReportLog.records``: report_hops' fields of every report taken, the times in fabric
    microseconds whatever units the INT-MD header names; anything that is not a report is
    counted as malformed and leaves nothing."""
    pipe, _ = leaf_switch("baseline")
    report = run(pipe, int_packet())[CPU_PORT][PACKET_IN_LEN:]
    md = int_md.report_stack(report)[0]
    in_ns = bytearray(report)
    in_ns[md + 10:md + 12] = (int_md.DS_TIME_NS | int_md.DS_QUEUE_BYTES).to_bytes(2, "big")
    in_ns[md + 6:md + 8] = int_md.encode_time_scale(76_000).to_bytes(2, "big")
    bad_count = bytearray(report)
    bad_count[14 + 20 + 8 + 1] = 2  # report header hop_count
    log = ReportLog({1: "leaf1"}, ["leaf1", "spine1"])
    for bad in (int_packet(), report[:60], bytes(bad_count)):
        log.take("leaf1", p4runtime_pb2.PacketIn(payload=bad))
    assert (len(log), log.malformed, log.reports) == (0, 3, {"leaf1": 0, "spine1": 0})
    kept = []
    for frame in (report, bytes(in_ns)):
        expected = [("leaf1" if h.switch_id == 1 else f"dev{h.switch_id}", h.egress_port,
                     h.egress_ts_us * (h.ts_unit_ns / 1000), h.qdepth_pkts, h.hop_latency_us * (h.ts_unit_ns / 1000))
                    for h in report_hops(frame)]
        start = len(log)
        log.take("leaf1", p4runtime_pb2.PacketIn(payload=frame))
        assert log.records(start) == expected
        kept += expected
    assert (log.records(), log.malformed, log.reports) == (kept, 3, {"leaf1": 2, "spine1": 0})
    assert [r[0] for r in kept[:3]] == ["dev2", "dev101", "leaf1"]  # source first; unnamed ids as dev<id>
    assert kept[4][2] == pytest.approx(123 / 76_000 / 1000, rel=1 / 4096)  # spine1's egress time: ns, scaled
