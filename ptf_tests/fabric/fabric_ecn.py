"""fabric.p4 PTF: RED-style ECN marking on a slow egress queue.

Port 2 is slowed to 4 packets/s; 20 Not-ECT filler packets fill its queue, then 20 ECT probes
arrive on top, so probe i is enqueued behind roughly 20 + i packets. Once ingress has taken
all of them the rate is restored (on BMv2 the backlog still leaves at 4/s: departure times are
fixed at enqueue) and every frame is checked: Not-ECT never changes; probes are marked always
(depth >= Kmax), never (depth <= Kmin), or with probability Pmax x (depth - Kmin) /
(Kmax - Kmin) in between (checked within wide binomial bounds).
"""

from __future__ import annotations

from ptf_tests.fabric.fabric_base import FAST_PPS, FabricTest
from ptf_tests.fabric.fabric_packets import ECT0, udp

FILL = 20
PROBES = 20
SLOW_PPS = 4


class EcnTest(FabricTest):
    kmin = 0
    kmax = 0
    pmax = 0.0

    def marks(self) -> int:
        """Fill port 2's queue, send ECT probes, drain; returns how many probes came out CE."""
        self.route_to_port("10.0.2.0/24", 2)
        self.next_hops(2)
        self.ecn_thresholds(2, 0, self.kmin, self.kmax, self.pmax)
        self.queue_rate(2, SLOW_PPS)
        fillers = [udp(dst_ip="10.0.2.2", sport=1000 + i, ecn=0) for i in range(FILL)]
        probes = [udp(dst_ip="10.0.2.2", sport=2000 + i, ecn=ECT0) for i in range(PROBES)]
        rx0 = self.counter("FabricIngress.counters.rx_port", 1)
        for frame in fillers + probes:
            self.send(1, frame)
        self.ingress_seen(1, FILL + PROBES, rx0)  # every depth is set before the rate changes
        self.cli(f"set_queue_rate {FAST_PPS} 2")
        got = self.collect(FILL + PROBES, timeout=2 * (FILL + PROBES) / SLOW_PPS)
        sent = {frame[34:36]: frame for frame in fillers + probes}   # by UDP source port
        marked = 0
        for port, frame in got:
            self.assertEqual(port, 2)
            original = sent[frame[34:36]]
            ecn = frame[15] & 3
            if original[15] & 3 == 0:
                self.assertEqual(frame, self.forwarded(original, 2), "a Not-ECT packet was changed")
            else:
                self.assertIn(ecn, (ECT0, 3))
                self.assertEqual(frame, self.forwarded(original, 2, ecn))
                marked += ecn == 3
        return marked


class EcnAboveKmaxTest(EcnTest):
    kmin, kmax, pmax = 4, 10, 0.0

    def runTest(self) -> None:
        self.assertEqual(self.marks(), PROBES)
        self.assertGreaterEqual(self.counter("FabricEgress.ecn.ecn_marks", 2 * 8), PROBES)


class EcnBelowKminTest(EcnTest):
    kmin, kmax, pmax = 50, 60, 1.0

    def runTest(self) -> None:
        self.assertEqual(self.marks(), 0)


class EcnProbabilisticTest(EcnTest):
    """Depths about 20..39 with Kmin 0, Kmax 80, Pmax 1: expected marks = sum(d / 80) ~ 7.4
    (standard deviation ~ 2.1); the bounds below fail with probability < 1e-3."""

    kmin, kmax, pmax = 0, 80, 1.0

    def runTest(self) -> None:
        marked = self.marks()
        self.assertGreaterEqual(marked, 1)
        self.assertLessEqual(marked, 16)
