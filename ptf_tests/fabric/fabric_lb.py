"""fabric.p4 PTF: per-packet spraying (round robin, random, best of two) and flowlet DLB.

The switch runs at time dilation 1 here, so the flowlet timeout is given in wall-clock
microseconds (400 ms), well above the gaps between back-to-back test packets and below the
pause the test makes to end a flowlet.
"""

from __future__ import annotations

import time
from collections import Counter

from ptf_tests.fabric.fabric_base import (
    FAST_PPS,
    LB_DLB,
    LB_SPRAY_BEST_OF_TWO,
    LB_SPRAY_RANDOM,
    LB_SPRAY_RR,
    SW_MAC,
    FabricTest,
)
from ptf_tests.fabric.fabric_packets import roce

FLOWLET_TIMEOUT_US = 400_000


def psn_of(frame: bytes) -> int:
    """BTH PSN of a plain RoCEv2 frame (Ethernet 14 + IPv4 20 + UDP 8, PSN in BTH bytes 9..11)."""
    return int.from_bytes(frame[42 + 9:42 + 12], "big")


class SprayTest(FabricTest):
    group = 0

    def spray_setup(self, mode: int, ports: list[int]) -> None:
        self.route_to_group("10.0.2.0/24", self.group)
        self.lb_group(self.group, ports)
        self.lb_mode(self.group, mode)
        self.next_hops(*ports)

    def one(self, psn: int, sport: int = 49152) -> int:
        pkt = roce(psn=psn, sport=sport, dst_mac=SW_MAC)
        self.send(1, pkt)
        (port, frame), = self.collect(1)
        self.assertEqual(frame, self.forwarded(pkt, port))
        return port


class SprayRoundRobinTest(SprayTest):
    """One flow's packets rotate exactly through the members, in member order."""

    group = 20

    def runTest(self) -> None:
        members = [2, 3, 4]
        self.spray_setup(LB_SPRAY_RR, members)
        ports = [self.one(psn) for psn in range(12)]
        start = members.index(ports[0])
        self.assertEqual(ports, [members[(start + i) % 3] for i in range(12)])


class SprayRandomTest(SprayTest):
    """60 packets of one flow over 3 members: each gets some (expected 20; fewer than 6 has
    probability ~1e-4)."""

    group = 21

    def runTest(self) -> None:
        self.spray_setup(LB_SPRAY_RANDOM, [2, 3, 4])
        counts = Counter(self.one(psn) for psn in range(60))
        self.assertEqual(set(counts), {2, 3, 4}, counts)
        self.assertGreaterEqual(min(counts.values()), 6, counts)


class SprayBestOfTwoTest(SprayTest):
    """With two members, best-of-two compares both: every packet avoids the port whose queue
    is backed up."""

    group = 22

    def runTest(self) -> None:
        self.spray_setup(LB_SPRAY_BEST_OF_TWO, [2, 3])
        self.route_to_port("10.0.9.2/32", 2)
        self.route_to_port("10.0.9.3/32", 3)
        # fresh, empty-queue samples on ports 3 and 2, then a backlog of 15 packets on port 2
        for dst in ("10.0.9.3", "10.0.9.2"):
            self.send(1, roce(dst_ip=dst, dst_mac=SW_MAC))
            self.collect(1)
        self.queue_rate(2, 1)
        for i in range(15):
            self.send(1, roce(dst_ip="10.0.9.2", psn=1000 + i, dst_mac=SW_MAC))
        self.wait_until(lambda: self.register("port_qdepth", 2) > 0,
                        "port 2 dequeued a packet and recorded its backed-up queue depth")
        rx0 = self.counter("FabricIngress.counters.rx_port", 1)
        for psn in range(10):
            self.send(1, roce(psn=psn, dst_mac=SW_MAC))
        self.ingress_seen(1, 10, rx0)  # sprayed while port 2 is still backed up
        self.cli(f"set_queue_rate {FAST_PPS} 2")
        got = self.collect(25, timeout=30)  # BMv2: the backlog keeps its 1 pps departure times
        sprayed_ports = [port for port, frame in got if psn_of(frame) < 1000]
        self.assertEqual(sprayed_ports, [3] * 10, f"sprayed packets went to {sprayed_ports}")
        self.assertEqual(sorted(psn_of(f) for p, f in got if p == 2), list(range(1000, 1015)))


class DlbFlowletTest(FabricTest):
    """A flowlet sticks to its member; after a gap longer than the flowlet timeout the flow
    moves to the less loaded member, and sticks there."""

    def runTest(self) -> None:
        group = 30
        self.route_to_group("10.0.2.0/24", group)
        self.lb_group(group, [2, 3])
        self.lb_mode(group, LB_DLB, flowlet_timeout_us=FLOWLET_TIMEOUT_US)
        self.next_hops(2, 3)
        self.route_to_port("10.0.9.2/32", 2)
        self.route_to_port("10.0.9.3/32", 3)
        for dst in ("10.0.9.2", "10.0.9.3"):   # both ports: a fresh, empty-queue sample
            self.send(1, roce(dst_ip=dst, dst_mac=SW_MAC))
            self.collect(1)

        first = roce(psn=0, dst_mac=SW_MAC)
        self.send(1, first)
        (loaded, _), = self.collect(1)
        other = 5 - loaded
        # back-to-back packets: same flowlet, same member, even though its queue backs up
        self.queue_rate(loaded, 2)
        for psn in range(1, 11):
            self.send(1, roce(psn=psn, dst_mac=SW_MAC))
        last_sent = time.monotonic()
        self.wait_until(lambda: self.register("port_qdepth", loaded) > 0,
                        f"port {loaded} dequeued a packet and recorded its backed-up queue depth")
        self.wait_past(last_sent, FLOWLET_TIMEOUT_US / 1e6 * 1.25)  # the flowlet has ended
        rx0 = self.counter("FabricIngress.counters.rx_port", 1)
        for psn in range(11, 17):
            self.send(1, roce(psn=psn, dst_mac=SW_MAC))
        self.ingress_seen(1, 6, rx0)  # placed while the loaded member is still backed up
        self.cli(f"set_queue_rate {FAST_PPS} {loaded}")
        got = self.collect(16, timeout=30)  # BMv2: the backlog keeps its 2 pps departure times
        by_psn = {psn_of(frame): port for port, frame in got}
        self.assertEqual([by_psn.get(psn) for psn in range(11, 17)], [other] * 6,
                         f"after the gap the flow should use port {other}: {by_psn}")
        self.assertEqual([by_psn.get(psn) for psn in range(1, 11)], [loaded] * 10,
                         f"the first flowlet should stay on port {loaded}: {by_psn}")
