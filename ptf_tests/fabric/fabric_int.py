"""fabric.p4 PTF: INT source/transit values, sink stripping and telemetry reports, HPCC mode,
HPCC mode with reports, single-hop INT (source and sink on one switch), and INT within the
egress port's MTU."""

from __future__ import annotations

import time

from ptf_tests.fabric.fabric_base import INT_REPORT_SESSION, NEIGHBOUR, PORT_MAC, PRIO_ROCE, SW_MAC, FabricTest
from ptf_tests.fabric.fabric_packets import OP_ACK, Hop, IntStack, parse_int, parse_report, roce, with_int

SWITCH_ID = 0x51
RATE_MBPS = 100_000
MAX_HOPS = 5


class IntTest(FabricTest):
    def int_setup(self) -> None:
        self.classify_roce()
        self.route_to_port("10.0.2.0/24", 2)
        self.route_to_port("10.0.3.0/24", 3)
        self.next_hops(2, 3)
        for port in (2, 3):
            self.add("FabricEgress.int_egress.int_transit_port", {"meta.out_port": port},
                     "FabricEgress.int_egress.int_transit",
                     {"switch_id_value": SWITCH_ID, "link_rate_mbps": RATE_MBPS})

    def watch(self, src_ip: str) -> None:
        self.add("FabricIngress.int_ingress.int_watchlist", {"hdr.ipv4.src_addr": (src_ip, 0xFFFFFFFF)},
                 "FabricIngress.int_ingress.int_source", {"max_hops": MAX_HOPS}, priority=10)


class IntSourceValuesTest(IntTest):
    """The first hop's record: ids, ports, queue, link rate right; timestamps increase; the
    queue occupancy and hop latency grow when the egress queue is congested."""

    def runTest(self) -> None:
        self.int_setup()
        self.watch("10.0.1.1")
        calm = []
        for psn in range(3):
            self.send(1, roce(psn=psn, dst_mac=SW_MAC))
            (port, frame), = self.collect(1)
            self.assertEqual(port, 2)
            calm.append(parse_int(frame))
            time.sleep(0.01)
        for stack in calm:
            self.assertIsNotNone(stack)
            self.assertEqual(stack.remaining_hop_cnt, MAX_HOPS - 1)
            self.assertEqual(stack.udp_dport, 4791)
            self.assertEqual(len(stack.hops), 1)
            hop = stack.hops[0]
            self.assertEqual((hop.switch_id, hop.ingress_port, hop.egress_port, hop.queue_id, hop.egress_link_rate),
                             (SWITCH_ID, 1, 2, PRIO_ROCE, RATE_MBPS))
            self.assertEqual(hop.hop_latency, (hop.egress_tstamp - hop.ingress_tstamp) & 0xFFFFFFFF)
        stamps = [s.hops[0].ingress_tstamp for s in calm]
        self.assertEqual(stamps, sorted(set(stamps)), "ingress timestamps must increase")
        tx = [s.hops[0].egress_tx_bytes for s in calm]
        self.assertTrue(tx[0] < tx[1] < tx[2], f"egress tx bytes must grow: {tx}")

        # congestion: a burst into a 5 packet/s queue
        self.queue_rate(2, 5)
        for psn in range(10, 22):
            self.send(1, roce(psn=psn, dst_mac=SW_MAC))
        busy = [parse_int(frame) for _, frame in self.collect(12)]
        self.assertGreaterEqual(max(s.hops[0].queue_occupancy for s in busy), 3)
        self.assertGreater(max(s.hops[0].hop_latency for s in busy), max(s.hops[0].hop_latency for s in calm))
        self.assertGreater(max(s.hops[0].queue_occupancy for s in busy),
                           max(s.hops[0].queue_occupancy for s in calm))


class IntOnlyDataTest(IntTest):
    """ACKs and flows off the watch list get no INT."""

    def runTest(self) -> None:
        self.int_setup()
        self.watch("10.0.1.1")
        for pkt in (roce(opcode=OP_ACK, dst_mac=SW_MAC), roce(src_ip="10.0.1.9", dst_mac=SW_MAC)):
            self.send(1, pkt)
            self.assertEqual(self.collect(1), [(2, self.forwarded(pkt, 2))])


class IntTransitTest(IntTest):
    """A packet with an upstream hop leaves with two, this switch's first; remaining - 1."""

    def runTest(self) -> None:
        self.int_setup()
        upstream = Hop(0x50, 3, 1, 4, 3, 2, 1000, 1004, 123456, RATE_MBPS)
        arriving = with_int(roce(src_ip="10.0.4.4", dst_mac=SW_MAC), IntStack(MAX_HOPS - 1, [upstream]))
        self.send(1, arriving)
        (port, frame), = self.collect(1)
        self.assertEqual(port, 2)
        stack = parse_int(frame)
        self.assertEqual(stack.remaining_hop_cnt, MAX_HOPS - 2)
        self.assertEqual(len(stack.hops), 2)
        self.assertEqual(stack.hops[1], upstream)
        self.assertEqual(stack.hops[0].switch_id, SWITCH_ID)
        self.assertEqual(len(frame), len(arriving) + 32)


class IntSinkReportTest(IntTest):
    """Report mode: the host gets the packet without INT; the collector gets a report with
    the upstream hops and the sink's own, and sequence numbers that count up."""

    def runTest(self) -> None:
        self.int_setup()
        self.add("FabricIngress.int_ingress.int_sink", {"standard_metadata.egress_spec": 2},
                 "FabricIngress.int_ingress.int_sink_report")
        self.clone_session(INT_REPORT_SESSION, 4)
        self.set_default("FabricEgress.int_egress.int_report_encap", "FabricEgress.int_egress.set_report_encap",
                         {"src_mac": PORT_MAC[4], "dst_mac": NEIGHBOUR[4], "src_ip": "10.0.0.1",
                          "dst_ip": "10.0.4.4", "udp_dport": 32766, "switch_id_value": SWITCH_ID})
        upstream = [Hop(0x50, 3, 1, 4, 3, 2, 1000, 1004, 123456, RATE_MBPS)]
        seqs = []
        for psn in range(2):
            plain = roce(src_ip="10.0.4.4", psn=psn, dst_mac=SW_MAC)
            self.send(1, with_int(plain, IntStack(MAX_HOPS - 1, upstream)))
            got = dict(self.collect(2))
            self.assertEqual(set(got), {2, 4})
            self.assertEqual(got[2], self.forwarded(plain, 2), "the host must get the packet without INT")
            rep = parse_report(got[4])
            self.assertIsNotNone(rep)
            self.assertEqual((rep.hop_count, rep.switch_id), (2, SWITCH_ID))
            inner = parse_int(rep.inner)
            self.assertEqual(inner.hops[1:], upstream)
            self.assertEqual((inner.hops[0].switch_id, inner.hops[0].ingress_port, inner.hops[0].egress_port),
                             (SWITCH_ID, 1, 2))
            seqs.append(rep.seq_no)
        self.assertEqual(seqs[1], seqs[0] + 1)
        self.assertGreaterEqual(self.counter("FabricEgress.int_egress.int_reports", 2), 2)


class IntSinkToHostTest(IntTest):
    """HPCC mode: the host gets the INT, with the sink's hop on top, for its NIC to echo."""

    def runTest(self) -> None:
        self.int_setup()
        self.add("FabricIngress.int_ingress.int_sink", {"standard_metadata.egress_spec": 3},
                 "FabricIngress.int_ingress.int_sink_to_host")
        upstream = [Hop(0x50, 3, 1, 4, 3, 2, 1000, 1004, 123456, RATE_MBPS)]
        self.send(1, with_int(roce(src_ip="10.0.4.4", dst_ip="10.0.3.3", dst_mac=SW_MAC),
                              IntStack(MAX_HOPS - 1, upstream)))
        (port, frame), = self.collect(1)
        self.assertEqual(port, 3)
        stack = parse_int(frame)
        self.assertEqual([h.switch_id for h in stack.hops], [SWITCH_ID, 0x50])
        self.assertEqual(stack.hops[0].egress_port, 3)


class IntSinkToHostAndReportTest(IntTest):
    """HPCC with telemetry: the host gets the INT with the sink's hop for its NIC to echo, and
    the collector the report of the same packet, as in report mode."""

    def runTest(self) -> None:
        self.int_setup()
        self.add("FabricIngress.int_ingress.int_sink", {"standard_metadata.egress_spec": 3},
                 "FabricIngress.int_ingress.int_sink_to_host_and_report")
        self.clone_session(INT_REPORT_SESSION, 4)
        self.set_default("FabricEgress.int_egress.int_report_encap", "FabricEgress.int_egress.set_report_encap",
                         {"src_mac": PORT_MAC[4], "dst_mac": NEIGHBOUR[4], "src_ip": "10.0.0.1",
                          "dst_ip": "10.0.4.4", "udp_dport": 32766, "switch_id_value": SWITCH_ID})
        upstream = [Hop(0x50, 3, 1, 4, 3, 2, 1000, 1004, 123456, RATE_MBPS)]
        self.send(1, with_int(roce(src_ip="10.0.4.4", dst_ip="10.0.3.3", dst_mac=SW_MAC),
                              IntStack(MAX_HOPS - 1, upstream)))
        got = dict(self.collect(2))
        self.assertEqual(set(got), {3, 4})
        stack = parse_int(got[3])
        self.assertIsNotNone(stack, "the host must get the INT to echo")
        self.assertEqual(stack.hops[1:], upstream)
        self.assertEqual((stack.hops[0].switch_id, stack.hops[0].egress_port), (SWITCH_ID, 3))
        rep = parse_report(got[4])
        self.assertIsNotNone(rep)
        self.assertEqual((rep.hop_count, rep.switch_id), (2, SWITCH_ID))
        inner = parse_int(rep.inner)
        self.assertEqual(inner.hops[1:], upstream)
        self.assertEqual((inner.hops[0].switch_id, inner.hops[0].ingress_port, inner.hops[0].egress_port),
                         (SWITCH_ID, 1, 3))
        self.assertGreaterEqual(self.counter("FabricEgress.int_egress.int_reports", 3), 1)


class IntSingleHopTest(IntTest):
    """Source and sink on one switch (two hosts on one leaf): a watched flow gets this switch's
    one hop. Report mode (port 2): the host gets the plain packet and the collector a report
    with hop_count 1 whose inner frame is the packet as sent plus that INT. To-host-and-report
    mode (port 3): the host gets the INT with the one hop to echo, and the collector the same
    kind of report."""

    def runTest(self) -> None:
        self.int_setup()
        self.watch("10.0.1.1")
        self.add("FabricIngress.int_ingress.int_sink", {"standard_metadata.egress_spec": 2},
                 "FabricIngress.int_ingress.int_sink_report")
        self.add("FabricIngress.int_ingress.int_sink", {"standard_metadata.egress_spec": 3},
                 "FabricIngress.int_ingress.int_sink_to_host_and_report")
        self.clone_session(INT_REPORT_SESSION, 4)
        self.set_default("FabricEgress.int_egress.int_report_encap", "FabricEgress.int_egress.set_report_encap",
                         {"src_mac": PORT_MAC[4], "dst_mac": NEIGHBOUR[4], "src_ip": "10.0.0.1",
                          "dst_ip": "10.0.4.4", "udp_dport": 32766, "switch_id_value": SWITCH_ID})
        seqs = []
        for out_port, dst_ip in ((2, "10.0.2.2"), (3, "10.0.3.3")):
            sent = roce(dst_ip=dst_ip, dst_mac=SW_MAC)
            self.send(1, sent)
            got = dict(self.collect(2))
            self.assertEqual(set(got), {out_port, 4})
            rep = parse_report(got[4])
            self.assertIsNotNone(rep, "a single-hop path must be reported")
            self.assertEqual((rep.hop_count, rep.switch_id), (1, SWITCH_ID))
            seqs.append(rep.seq_no)
            inner = parse_int(rep.inner)
            self.assertEqual((inner.remaining_hop_cnt, inner.e, inner.udp_dport), (MAX_HOPS - 1, 0, 4791))
            (hop,) = inner.hops
            self.assertEqual((hop.switch_id, hop.ingress_port, hop.egress_port, hop.queue_id, hop.egress_link_rate),
                             (SWITCH_ID, 1, out_port, PRIO_ROCE, RATE_MBPS))
            self.assertEqual(hop.ingress_tstamp, rep.ingress_tstamp)
            self.assertEqual(hop.hop_latency, (hop.egress_tstamp - hop.ingress_tstamp) & 0xFFFFFFFF)
            # the inner frame is the packet as sent with the source's INT and this hop, cut after the BTH
            self.assertEqual(rep.inner, with_int(sent, inner)[:len(rep.inner)])
            self.assertEqual(len(rep.inner), 14 + 20 + 8 + 16 + 32 + 12)
            if out_port == 2:
                self.assertEqual(got[2], self.forwarded(sent, 2), "the host must get the packet without INT")
            else:
                stack = parse_int(got[3])
                self.assertIsNotNone(stack, "the host must get the one hop to echo")
                self.assertEqual((stack.remaining_hop_cnt, stack.udp_dport), (MAX_HOPS - 1, 4791))
                self.assertEqual([(h.switch_id, h.ingress_port, h.egress_port) for h in stack.hops],
                                 [(SWITCH_ID, 1, 3)])
                self.assertEqual(len(got[3]), len(sent) + 16 + 32)
        self.assertEqual(seqs[1], seqs[0] + 1)
        self.assertGreaterEqual(self.counter("FabricEgress.int_egress.int_reports", 2), 1)
        self.assertGreaterEqual(self.counter("FabricEgress.int_egress.int_reports", 3), 1)


class IntMtuTest(IntTest):
    """INT within the egress port's MTU (int_port_mtu = 1500, the veths' own): a watched packet
    that INT would grow beyond it leaves without INT (a frame the kernel would refuse otherwise)
    and is counted; one that fits exactly gets INT; a transit without room for its hop sets the
    M bit instead, counted too."""

    def runTest(self) -> None:
        self.int_setup()
        self.watch("10.0.1.1")
        self.add("FabricIngress.int_ingress.int_port_mtu", {"standard_metadata.egress_spec": 2},
                 "FabricIngress.int_ingress.set_int_mtu", {"ip_mtu": 1500})
        around = 20 + 8 + 12 + 4  # IPv4, UDP, BTH, ICRC around the payload
        source_skips = self.counter("FabricIngress.int_ingress.int_source_mtu_skips", 2)
        transit_skips = self.counter("FabricEgress.int_egress.int_transit_mtu_skips", 2)

        fits = roce(dst_mac=SW_MAC, psn=1, payload=bytes(1500 - 48 - around))
        self.send(1, fits)
        (port, frame), = self.collect(1)
        self.assertEqual((port, len(frame) - 14, len(parse_int(frame).hops)), (2, 1500, 1))

        too_big = roce(dst_mac=SW_MAC, psn=2, payload=bytes(1500 - 47 - around))
        self.send(1, too_big)
        self.assertEqual(self.collect(1), [(2, self.forwarded(too_big, 2))], "too big for INT: sent without it")
        self.assertEqual(self.counter("FabricIngress.int_ingress.int_source_mtu_skips", 2), source_skips + 1)

        upstream = [Hop(0x50, 3, 1, 4, 3, 1, 10, 14, 100, RATE_MBPS)]
        full = with_int(roce(src_ip="10.0.4.4", dst_mac=SW_MAC, payload=bytes(1500 - 48 - 31 - around)),
                        IntStack(MAX_HOPS - 1, upstream))
        self.send(1, full)
        (port, frame), = self.collect(1)
        stack = parse_int(frame)
        self.assertEqual((port, stack.m, len(stack.hops), stack.remaining_hop_cnt), (2, 1, 1, MAX_HOPS - 1))
        self.assertEqual(self.counter("FabricEgress.int_egress.int_transit_mtu_skips", 2), transit_skips + 1)
