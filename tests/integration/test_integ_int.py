"""INT layout agreement between fabric.p4 (run on our executor) and the NIC model.

RoCEv2 WRITEs built by a nicmodel ``Nic`` cross three fabric.p4 switches (leaf = INT source,
spine = transit, leaf = sink) with chosen queueing metadata; the frames that come out are
read with ``nicmodel.int_md`` and checked hop by hop against what each switch was told and
saw. The receiving ``Nic`` echoes the INT in its ACK, which crosses the switches back
untouched and reaches the sender's congestion control with the same hops. In report mode
the sink gives the host the original RoCE packet back and the collector a report. With A and
B on one leaf (single-hop INT) that leaf is source and sink: B's NIC gets and echoes its one
hop, and the collector gets the report of it.

Topology (ports):  A --1[S1 0x11]3-- 1[S2 0x22]2-- 3[S3 0x33]1-- B     S3 port 4: collector
Single hop:        A --1[L 0x44]2-- B                                  L port 4: collector
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from netbase import ipv4
from nicmodel import Nic, QpConfig, int_md, roce
from nicmodel.cc.base import AckInfo, HopInt, LineRate
from nicmodel.int_md import report_hops
from nicmodel.nic import parse_ip
from nicmodel.verbs import WcStatus
from p4rt.entries import ActionCall, Exact

MAC_A = bytes.fromhex("02000000a001")
MAC_B = bytes.fromhex("02000000b002")
MAC_COLLECTOR = bytes.fromhex("02000000c004")
IP_A, IP_B = "10.0.1.1", "10.0.2.2"
RATE_MBPS = 100_000
DSCP_ROCE, PRIO_ROCE = 26, 3
REPORT_UDP_PORT = 32766


def port_mac(switch_id: int, port: int) -> bytes:
    return bytes((0x02, switch_id, 0, 0, 0, port))


def ip_int(ip: str) -> int:
    return int(ipaddress.IPv4Address(ip))


@dataclass(frozen=True)
class Hop:
    """What one switch was told (id, ports) and what its queue looked like for a packet."""

    switch_id: int
    in_port: int
    out_port: int
    latency_us: int
    qdepth: int


# Data direction A -> B; the ACK travels the same switches the other way.
PATH = (Hop(0x11, 1, 3, 3, 2), Hop(0x22, 1, 2, 7, 5), Hop(0x33, 3, 1, 11, 9))
HOP_GAP_US = 10  # fabric time between one switch's ingress and the next one's


class RecordingCc(LineRate):
    """Line rate, and remembers every ACK the transport reports (echoed INT included)."""

    def __init__(self) -> None:
        super().__init__(100e9)
        self.acks: list[AckInfo] = []

    def on_ack(self, ack: AckInfo) -> None:
        self.acks.append(ack)


def build_fabric(make_switch, sink_report: bool, max_hops: int = 5):
    s1, s2, s3 = (make_switch() for _ in range(3))
    peers = {  # (switch, port) -> MAC of the neighbour on that port
        (0x11, 1): MAC_A, (0x11, 3): port_mac(0x22, 1),
        (0x22, 1): port_mac(0x11, 3), (0x22, 2): port_mac(0x33, 3),
        (0x33, 3): port_mac(0x22, 2), (0x33, 1): MAC_B,
    }
    for sw, sid, to_b, to_a in ((s1, 0x11, 3, 1), (s2, 0x22, 2, 1), (s3, 0x33, 1, 3)):
        sw.route(ip_int(IP_B), to_b, port_mac(sid, to_b), peers[(sid, to_b)])
        sw.route(ip_int(IP_A), to_a, port_mac(sid, to_a), peers[(sid, to_a)])
        sw.classify_dscp(DSCP_ROCE, PRIO_ROCE)
        for port in (to_a, to_b):  # hops on both directions: ACKs must still get none
            sw.int_transit(port, sid, RATE_MBPS)
    s1.int_source(ip_int(IP_A), max_hops)
    s3.int_sink(1, report=sink_report)
    if sink_report:
        s3.clone_session(1, 4)
        s3.prog.tables["FabricEgress.int_egress.int_report_encap"].set_default(ActionCall(
            "FabricEgress.int_egress.set_report_encap",
            {"src_mac": int.from_bytes(port_mac(0x33, 4), "big"),
             "dst_mac": int.from_bytes(MAC_COLLECTOR, "big"),
             "src_ip": ip_int("10.0.0.33"), "dst_ip": ip_int("10.0.9.9"),
             "udp_dport": REPORT_UDP_PORT, "switch_id_value": 0x33}))
    return (s1, s2, s3)


def connected_nics(cc: RecordingCc | None = None, mtu: int = 1024, gw_a: bytes = port_mac(0x11, 1),
                   gw_b: bytes = port_mac(0x33, 1)):
    """NICs A and B with one connected QP each; ``gw_*``: the switch port MAC each one sends to."""
    a = Nic(MAC_A, IP_A)
    b = Nic(MAC_B, IP_B)
    qa = a.create_qp(QpConfig(mtu=mtu, dscp=DSCP_ROCE, priority=PRIO_ROCE), cc=cc)
    qb = b.create_qp(QpConfig(mtu=mtu, dscp=DSCP_ROCE, priority=PRIO_ROCE))
    qa.connect(gw_a, parse_ip(IP_B), qb.qpn, qb.config.initial_psn)
    qb.connect(gw_b, parse_ip(IP_A), qa.qpn, qa.config.initial_psn)
    return a, b, qa, qb


def through(switches, hops, frame: bytes, start_us: int) -> tuple[bytes, list[tuple[int, bytes]]]:
    """Forward ``frame`` across the switches along ``hops``; returns the frame leaving the
    last switch on the hop's out port and everything else the last switch sent."""
    others: list[tuple[int, bytes]] = []
    for i, (sw, hop) in enumerate(zip(switches, hops)):
        out = sw.forward(hop.in_port, frame, start_us + i * HOP_GAP_US, hop.latency_us, hop.qdepth)
        mine = [f for p, f in out if p == hop.out_port]
        assert len(mine) == 1, f"switch {hop.switch_id:#x} sent {[(p, len(f)) for p, f in out]}"
        frame = mine[0]
        others = [(p, f) for p, f in out if p != hop.out_port]
    return frame, others


def expected_hop(i: int, hop: Hop, start_us: int, tx_bytes: int) -> HopInt:
    t_in = start_us + i * HOP_GAP_US
    return HopInt(hop.switch_id, hop.in_port, hop.out_port, hop.latency_us, PRIO_ROCE, hop.qdepth,
                  t_in, t_in + hop.latency_us, tx_bytes, RATE_MBPS)


def test_int_hops_reach_nic_and_come_back_in_the_ack(make_switch, drain):
    switches = build_fabric(make_switch, sink_report=False)
    cc = RecordingCc()
    a, b, qa, qb = connected_nics(cc)
    data = bytes(range(256)) * 8  # 2048 bytes = WRITE FIRST + WRITE LAST at MTU 1024
    src = a.register_mr(bytearray(data))
    dst = b.register_mr(bytearray(len(data)))
    qa.post_write(wr_id=1, mr=src, offset=0, length=len(data), remote_addr=dst.addr, rkey=dst.rkey)
    frames = drain(a, 0)
    assert len(frames) == 2

    delivered = []
    arrived_len = [[len(f)] for f in frames]  # per packet: its length as each switch received it
    for k, frame in enumerate(frames):
        start = 1000 + 100 * k
        f = frame
        for i, (sw, hop) in enumerate(zip(switches, PATH)):
            out = sw.forward(hop.in_port, f, start + i * HOP_GAP_US, hop.latency_us, hop.qdepth)
            assert [p for p, _ in out] == [hop.out_port]
            f = out[0][1]
            arrived_len[k].append(len(f))
        delivered.append(f)

    for k, f in enumerate(delivered):
        p = roce.parse(f, MAC_B, parse_ip(IP_B))
        stack = p.int_stack
        assert stack is not None and stack.orig_dport == roce.ROCE_UDP_PORT
        assert stack.hop_count == 3 and stack.hop_ml == int_md.HOP_WORDS
        md = stack.md_header
        assert md[0] >> 4 == int_md.MD_VERSION and not md[0] & 0x04  # e bit clear
        assert md[3] == 5 - 3  # remaining hop count
        assert md[4:6] == int_md.INSTRUCTIONS.to_bytes(2, "big")
        assert md[8:10] == int_md.DOMAIN_ID.to_bytes(2, "big")
        start = 1000 + 100 * k
        # tx bytes on each egress port before this packet: the earlier packet, counted at
        # the length it had when it left that switch (with that switch's INT bytes), as the
        # simulated switch (fabricsim/reference_switch.py) counts the frame it sends.
        want = tuple(expected_hop(i, hop, start, arrived_len[0][i + 1] if k else 0)
                     for i, hop in enumerate(PATH))
        assert stack.hops() == want
        assert len(f) == len(frames[k]) + int_md.SHIM_LEN + int_md.MD_LEN + 3 * int_md.HOP_LEN
        assert f[:6] == MAC_B and f[22] == 64 - 3  # MACs rewritten, TTL decremented per hop

    for f in delivered:
        b.receive(f, 2_000_000)
    assert dict(b.counters.drops) == {}
    assert bytes(dst.buf) == data
    acks = drain(b, 2_000_000)
    assert len(acks) == 1
    ack = roce.parse(acks[0])
    assert ack.opcode == roce.Opcode.ACKNOWLEDGE and ack.resv7 & roce.ACK_EXT_INT
    echoed = roce.parse_ack_ext(ack).hops
    last_hops = roce.parse(delivered[-1]).int_stack.hops()
    assert echoed == last_hops

    back = tuple(Hop(h.switch_id, h.out_port, h.in_port, 1, 0) for h in reversed(PATH))
    ack_out, _ = through(switches[::-1], back, acks[0], 3000)
    assert len(ack_out) == len(acks[0])  # no hop pushed onto an ACK
    assert int.from_bytes(ack_out[36:38], "big") == roce.ROCE_UDP_PORT
    assert ack_out[42:] == acks[0][42:]  # BTH, AETH, INT echo and ICRC untouched
    a.receive(ack_out, 3_000_000)
    assert dict(a.counters.drops) == {}
    assert [c.status for c in a.poll_cq()] == [WcStatus.SUCCESS]
    assert cc.acks and cc.acks[-1].hops == last_hops
    assert [h.switch_id for h in cc.acks[-1].hops] == [0x11, 0x22, 0x33]


def test_int_max_hops_sets_e_bit_and_nic_still_accepts(make_switch, drain):
    switches = build_fabric(make_switch, sink_report=False, max_hops=2)
    a, b, qa, qb = connected_nics()
    src = a.register_mr(bytearray(b"\x5a" * 100))
    dst = b.register_mr(bytearray(100))
    qa.post_write(wr_id=1, mr=src, offset=0, length=100, remote_addr=dst.addr, rkey=dst.rkey)
    (frame,) = drain(a, 0)
    out, _ = through(switches, PATH, frame, 500)
    stack = roce.parse(out).int_stack
    assert stack.hop_count == 2 and stack.md_header[3] == 0 and stack.md_header[0] & 0x04
    assert [h.switch_id for h in stack.hops()] == [0x11, 0x22]
    b.receive(out, 1_000_000)
    assert dict(b.counters.drops) == {} and bytes(dst.buf) == b"\x5a" * 100


def test_int_sink_strip_restores_roce_and_reports(make_switch, drain):
    switches = build_fabric(make_switch, sink_report=True)
    a, b, qa, qb = connected_nics()
    payload = bytes(range(200))
    src = a.register_mr(bytearray(payload))
    dst = b.register_mr(bytearray(len(payload)))
    qa.post_write(wr_id=1, mr=src, offset=0, length=len(payload), remote_addr=dst.addr, rkey=dst.rkey)
    (orig,) = drain(a, 0)
    host, others = through(switches, PATH, orig, 700)

    # The host gets the packet exactly as A built it, but for MACs, TTL and IP checksum.
    assert len(host) == len(orig)
    assert host[:6] == MAC_B and host[6:12] == port_mac(0x33, 1)
    assert host[12:22] == orig[12:22] and host[22] == orig[22] - 3 and host[23:24] == orig[23:24]
    assert host[26:] == orig[26:]
    assert ipv4.checksum(host[14:34]) == 0
    pkt = Ether(host)
    assert pkt[UDP].dport == roce.ROCE_UDP_PORT and pkt[UDP].len == len(orig) - 34
    assert pkt[IP].len == len(orig) - 14
    b.receive(host, 1_000_000)  # ICRC and lengths as the sender made them
    assert dict(b.counters.drops) == {} and bytes(dst.buf) == payload

    # The report: outer headers from set_report_encap, then the 16-byte report header,
    # then the packet as it reached the sink with the sink's hop, cut after the BTH.
    assert [p for p, _ in others] == [4]
    report = others[0][1]
    outer = Ether(report)
    assert outer.dst == "02:00:00:00:c0:04" and outer[IP].dst == "10.0.9.9"
    assert outer[UDP].dport == REPORT_UDP_PORT and outer[IP].len == len(report) - 14
    rep = int_md.parse_report(report)
    sink_in_us = 700 + 2 * HOP_GAP_US
    assert (rep.hop_count, rep.switch_id, rep.seq_no, rep.ingress_ts_us) == (3, 0x33, 0, sink_in_us)
    inner = rep.inner
    assert inner[12:14] == b"\x08\x00" and int.from_bytes(inner[36:38], "big") == int_md.INT_UDP_PORT
    stack = rep.stack()
    assert [h.switch_id for h in stack.hops()] == [0x11, 0x22, 0x33]
    assert stack.hops()[:2] == tuple(expected_hop(i, h, 700, 0) for i, h in enumerate(PATH[:2]))
    sink = stack.hops()[2]
    assert (sink.ingress_port, sink.egress_port, sink.ingress_ts_us) == (3, 1, sink_in_us)
    bth_off = 42 + stack.nbytes
    assert len(inner) == bth_off + roce.BTH_LEN  # cut after the BTH: the original one
    assert inner[bth_off:] == orig[42:42 + roce.BTH_LEN]
    assert report_hops(report) == stack.hops()  # the controller's collector reads the same


@pytest.mark.parametrize("mode", ["int_sink_to_host", "int_sink_to_host_and_report"])
def test_single_hop_int_is_echoed_by_the_nic_and_reported(make_switch, drain, mode):
    """A and B on one leaf: the leaf is INT source and sink. B's NIC receives the packet with
    the leaf's one hop and echoes it in its ACK, which crosses the leaf back without a hop
    and gives A's congestion control that hop (HPCC on intra-leaf flows); in
    to-host-and-report mode the collector also gets a report of that hop."""
    sid, to_a, to_b, collector = 0x44, 1, 2, 4
    leaf = make_switch()
    leaf.route(ip_int(IP_B), to_b, port_mac(sid, to_b), MAC_B)
    leaf.route(ip_int(IP_A), to_a, port_mac(sid, to_a), MAC_A)
    leaf.classify_dscp(DSCP_ROCE, PRIO_ROCE)
    for port in (to_a, to_b):
        leaf.int_transit(port, sid, RATE_MBPS)
        leaf.add("FabricIngress.int_ingress.int_sink", {"standard_metadata.egress_spec": Exact(port)},
                 f"FabricIngress.int_ingress.{mode}")
    leaf.int_source(ip_int(IP_A))
    leaf.clone_session(1, collector)
    leaf.prog.tables["FabricEgress.int_egress.int_report_encap"].set_default(ActionCall(
        "FabricEgress.int_egress.set_report_encap",
        {"src_mac": int.from_bytes(port_mac(sid, collector), "big"),
         "dst_mac": int.from_bytes(MAC_COLLECTOR, "big"),
         "src_ip": ip_int("10.0.0.44"), "dst_ip": ip_int("10.0.9.9"),
         "udp_dport": REPORT_UDP_PORT, "switch_id_value": sid}))
    cc = RecordingCc()
    a, b, qa, qb = connected_nics(cc, gw_a=port_mac(sid, to_a), gw_b=port_mac(sid, to_b))
    payload = bytes(range(150))
    src = a.register_mr(bytearray(payload))
    dst = b.register_mr(bytearray(len(payload)))
    qa.post_write(wr_id=1, mr=src, offset=0, length=len(payload), remote_addr=dst.addr, rkey=dst.rkey)
    (orig,) = drain(a, 0)

    out = dict(leaf.forward(to_a, orig, 900, latency_us=6, qdepth=4))
    reported = mode == "int_sink_to_host_and_report"
    assert sorted(out) == ([to_b, collector] if reported else [to_b])
    host = out[to_b]
    stack = roce.parse(host, MAC_B, parse_ip(IP_B)).int_stack
    assert stack is not None and stack.orig_dport == roce.ROCE_UDP_PORT
    assert stack.md_header[3] == 5 - 1 and not stack.md_header[0] & 0x04
    hop = HopInt(sid, to_a, to_b, 6, PRIO_ROCE, 4, 900, 906, 0, RATE_MBPS)
    assert stack.hops() == (hop,)
    assert len(host) == len(orig) + int_md.SHIM_LEN + int_md.MD_LEN + int_md.HOP_LEN

    b.receive(host, 1_000_000)
    assert dict(b.counters.drops) == {} and bytes(dst.buf) == payload
    (ack,) = drain(b, 1_000_000)
    assert roce.parse_ack_ext(roce.parse(ack)).hops == (hop,)
    back = dict(leaf.forward(to_b, ack, 2000))
    assert list(back) == [to_a]  # an ACK is never instrumented nor reported
    assert back[to_a][42:] == ack[42:]
    a.receive(back[to_a], 2_000_000)
    assert [c.status for c in a.poll_cq()] == [WcStatus.SUCCESS]
    assert cc.acks and cc.acks[-1].hops == (hop,)

    if reported:
        report = out[collector]
        rep = int_md.parse_report(report)
        assert (rep.hop_count, rep.switch_id, rep.seq_no, rep.ingress_ts_us) == (1, sid, 0, 900)
        (rep_hop,) = rep.stack().hops()
        assert (rep_hop.switch_id, rep_hop.ingress_port, rep_hop.egress_port, rep_hop.ingress_ts_us) == \
            (sid, to_a, to_b, 900)
        inner = rep.inner  # the packet as A sent it, with the leaf's INT, cut after the BTH
        assert inner[:14] == orig[:14] and inner[26:34] == orig[26:34]
        assert inner[42 + rep.stack().nbytes:] == orig[42:42 + roce.BTH_LEN]
        assert report_hops(report) == rep.stack().hops()
