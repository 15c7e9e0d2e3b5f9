"""fabric.p4 PTF: routing, ECMP / E-ECMP spread and stickiness, PacketIn/PacketOut, drops."""

from __future__ import annotations

import queue

from scapy.layers.l2 import ARP, Ether

from ptf_tests.fabric.fabric_base import LB_ECMP, NEIGHBOUR, PORT_MAC, SW_MAC, FabricTest
from ptf_tests.fabric.fabric_packets import roce, udp


class RouteToPortTest(FabricTest):
    def runTest(self) -> None:
        self.route_to_port("10.0.2.0/24", 2)
        self.route_to_port("10.0.0.0/16", 3)
        self.next_hops(2, 3)
        for dst, port in (("10.0.2.7", 2), ("10.0.5.5", 3)):
            pkt = udp(dst_ip=dst, dst_mac=SW_MAC)
            self.send(1, pkt)
            self.assertEqual(self.collect(1), [(port, self.forwarded(pkt, port))])
        self.send(1, udp(dst_ip="10.9.0.1", dst_mac=SW_MAC))     # no route
        self.send(1, udp(dst_ip="10.0.2.7", ttl=1, dst_mac=SW_MAC))
        self.assert_silent()
        self.assertGreaterEqual(self.counter("FabricIngress.counters.drop_reasons", 6), 1)
        self.assertGreaterEqual(self.counter("FabricIngress.counters.drop_reasons", 5), 1)


class EcmpSpreadAndStickTest(FabricTest):
    """Different flows spread over the group's members; each flow stays on one member."""

    def runTest(self) -> None:
        self.route_to_group("10.0.2.0/24", 10)
        self.ecmp_group(10, [2, 3, 4])
        self.next_hops(2, 3, 4)
        port_of_flow: dict[int, int] = {}
        for sport in range(49152, 49152 + 36):
            for psn in range(3):
                pkt = roce(sport=sport, psn=psn, dst_mac=SW_MAC)
                self.send(1, pkt)
                (port, frame), = self.collect(1)
                self.assertEqual(frame, self.forwarded(pkt, port))
                self.assertEqual(port_of_flow.setdefault(sport, port), port, f"flow {sport} moved")
        self.assertGreaterEqual(len(set(port_of_flow.values())), 2, port_of_flow)
        chosen = sum(self.counter("FabricIngress.counters.lb_choices", p * 8 + LB_ECMP) for p in (2, 3, 4))
        self.assertGreaterEqual(chosen, 36 * 3)


class EnhancedEcmpTest(FabricTest):
    """One 5-tuple, many destination QPs: one member with plain ECMP, several with E-ECMP."""

    def ports_for_qps(self) -> set[int]:
        ports = set()
        for qp in range(1, 25):
            pkt = roce(dqpn=qp, dst_mac=SW_MAC)
            self.send(1, pkt)
            (port, _), = self.collect(1)
            ports.add(port)
        return ports

    def runTest(self) -> None:
        self.route_to_group("10.0.2.0/24", 11)
        self.ecmp_group(11, [2, 3, 4])
        self.next_hops(2, 3, 4)
        self.assertEqual(len(self.ports_for_qps()), 1)
        self.lb_mode(11, LB_ECMP, hash_qp=1)
        self.assertGreaterEqual(len(self.ports_for_qps()), 2)


class PacketInOutTest(FabricTest):
    def runTest(self) -> None:
        self.add("FabricIngress.acl.acl", {"hdr.ethernet.ether_type": (0x0806, 0xFFFF)},
                 "FabricIngress.acl.punt_to_cpu", priority=10)
        arp = bytes(Ether(dst="ff:ff:ff:ff:ff:ff", src=NEIGHBOUR[1]) / ARP(psrc="10.0.1.1", pdst="10.0.1.254"))
        self.send(1, arp)
        try:
            payload, meta = self.client.packet_in(timeout=3.0)
        except queue.Empty:
            self.fail("no PacketIn for the punted ARP request")
        self.assertEqual(payload, arp)
        self.assertEqual(meta["ingress_port"], 1)
        out = udp(dst_ip="10.0.3.3", src_mac=PORT_MAC[3], dst_mac=NEIGHBOUR[3])
        self.client.packet_out(out, egress_port=3)
        self.assertEqual(self.collect(1), [(3, out)])
