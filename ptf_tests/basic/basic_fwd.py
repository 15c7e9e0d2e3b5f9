"""PTF tests of basic L3 forwarding (lab/programs/basic.p4), for ours and BMv2 alike."""

from __future__ import annotations

import queue
import re

from ptf import testutils
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import ARP, Ether

from lab.basic_program import FORWARD, PORT_COUNTER, QDEPTH_REGISTER, SWITCH_MAC, TABLE, TO_CPU, routed, udp_frame
from ptf_tests.base import P4RuntimeTest

H1_MAC = "00:00:00:00:01:01"
H2_MAC = "00:00:00:00:02:02"
H3_MAC = "00:00:00:00:03:03"


def udp_packet(dst_ip: str, ttl: int = 64, payload: bytes = b"p4switch-ptf" * 4) -> Ether:
    return udp_frame(dst_ip, payload, ttl, src_mac=H1_MAC)


class BasicTest(P4RuntimeTest):
    def route(self, prefix: str, mac: str, port: int) -> None:
        self.client.insert(self.client.table_entry(TABLE, {"hdr.ipv4.dstAddr": prefix}, FORWARD,
                                                   {"dstAddr": mac, "port": port}))


class Ipv4ForwardTest(BasicTest):
    def runTest(self) -> None:
        self.route("10.0.2.0/24", H2_MAC, 2)
        pkt = udp_packet("10.0.2.2")
        testutils.send_packet(self, 1, pkt)
        testutils.verify_packet(self, routed(pkt, H2_MAC), 2)
        testutils.verify_no_other_packets(self)


class LongestPrefixWinsTest(BasicTest):
    def runTest(self) -> None:
        self.route("10.0.0.0/16", H2_MAC, 2)
        self.route("10.0.3.0/24", H3_MAC, 3)
        for dst, mac, port in (("10.0.3.7", H3_MAC, 3), ("10.0.9.9", H2_MAC, 2)):
            pkt = udp_packet(dst)
            testutils.send_packet(self, 1, pkt)
            testutils.verify_packet(self, routed(pkt, mac), port)
        testutils.verify_no_other_packets(self)


class DropTest(BasicTest):
    """No route, TTL 1 and non-IPv4 frames are dropped."""

    def runTest(self) -> None:
        self.route("10.0.2.0/24", H2_MAC, 2)
        testutils.send_packet(self, 1, udp_packet("10.9.9.9"))
        testutils.send_packet(self, 1, udp_packet("10.0.2.2", ttl=1))
        testutils.send_packet(self, 1, Ether(dst="ff:ff:ff:ff:ff:ff", src=H1_MAC) / ARP(pdst="10.0.1.254"))
        testutils.verify_no_other_packets(self)


class RouteReadBackTest(BasicTest):
    def runTest(self) -> None:
        self.route("10.0.2.0/24", H2_MAC, 2)
        entries = self.client.read_table(TABLE)
        self.assertEqual(len(entries), 1)
        lpm = entries[0].match[0].lpm
        self.assertEqual((int.from_bytes(lpm.value, "big"), lpm.prefix_len), (0x0A000200, 24))
        params = {p.param_id: int.from_bytes(p.value, "big") for p in entries[0].action.action.params}
        self.assertEqual(sorted(params.values()), sorted([0x000000000202, 2]))


class PacketOutTest(BasicTest):
    def runTest(self) -> None:
        pkt = Ether(dst=H3_MAC, src=SWITCH_MAC) / IP(dst="10.0.3.3") / UDP() / b"from the controller"
        self.client.packet_out(bytes(pkt), egress_port=3)
        testutils.verify_packet(self, pkt, 3)
        testutils.verify_no_other_packets(self)


class PacketInTest(BasicTest):
    def runTest(self) -> None:
        self.client.insert(self.client.table_entry(TABLE, {"hdr.ipv4.dstAddr": "10.0.7.0/24"}, TO_CPU))
        pkt = udp_packet("10.0.7.1")
        testutils.send_packet(self, 2, pkt)
        try:
            payload, meta = self.client.packet_in(timeout=5)
        except queue.Empty:
            self.fail("no packet-in arrived")
        self.assertEqual(meta["ingress_port"], 2)
        self.assertEqual(payload, bytes(pkt))
        testutils.verify_no_other_packets(self)


class PortCounterTest(BasicTest):
    def runTest(self) -> None:
        self.route("10.0.2.0/24", H2_MAC, 2)
        before = self.client.read_counter(PORT_COUNTER, 4)
        pkt = udp_packet("10.0.2.2")
        for _ in range(5):
            testutils.send_packet(self, 4, pkt)
            testutils.verify_packet(self, routed(pkt, H2_MAC), 2)
        after = self.client.read_counter(PORT_COUNTER, 4)
        self.assertEqual(after[0] - before[0], 5)
        self.assertEqual(after[1] - before[1], 5 * len(pkt))


class QueueRateCliTest(BasicTest):
    """The shared CLI word set_queue_rate paces a port; everything still arrives, in order."""

    def runTest(self) -> None:
        self.route("10.0.2.0/24", H2_MAC, 2)
        self.cli("set_queue_rate 200 2")
        try:
            pkts = [udp_packet("10.0.2.2", payload=bytes([i]) * 20) for i in range(10)]
            for pkt in pkts:
                testutils.send_packet(self, 1, pkt)
            for pkt in pkts:
                testutils.verify_packet(self, routed(pkt, H2_MAC), 2, timeout=5)
            # The burst arrives far faster than 200 packets/s leave, so the last packet queued
            # behind others: the egress program saw a non-zero enq_qdepth (a rate that did
            # nothing would leave it at 0).
            seen = re.search(r"\[2\]=\s*(\d+)", self.cli(f"register_read {QDEPTH_REGISTER} 2"))
            self.assertIsNotNone(seen)
            self.assertGreater(int(seen.group(1)), 0)
        finally:
            self.cli("set_queue_rate 0 2")
        testutils.verify_no_other_packets(self)
