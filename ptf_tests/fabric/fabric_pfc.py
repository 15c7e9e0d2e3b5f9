"""fabric.p4 PTF: PFC pause generation. A burst of RoCE data (priority 3) from port 1 into a
slow egress queue passes XOFF: the switch sends an 802.1Qbb pause for priority 3 out of port
1; once the queue drains to XON it sends a resume (time 0). Received PFC frames are dropped."""

from __future__ import annotations

import time

from ptf_tests.fabric.fabric_base import FAST_PPS, PFC_SESSION_BASE, PRIO_ROCE, SW_MAC, FabricTest, quiet_after
from ptf_tests.fabric.fabric_packets import parse_pfc, pfc, roce

XOFF = 8
XON = 2
QUANTA = 0xFFFF
DROP_MAC_CONTROL = 3  # p4src/include/defines.p4
BURST = 14


class PfcTest(FabricTest):
    refresh_us = 10_000_000
    stale_us = 10_000_000  # lost-packet forgetting on, far beyond every test's length
    xoff, xon = XOFF, XON

    def pfc_setup(self) -> None:
        self.classify_roce()
        self.route_to_port("10.0.2.0/24", 2)
        self.next_hops(2)
        self.add("FabricIngress.pfc.pfc_port", {"standard_metadata.ingress_port": 1},
                 "FabricIngress.pfc.set_pfc_port",
                 {"enable_mask_value": 1 << PRIO_ROCE, "xoff_pkts": self.xoff, "xon_pkts": self.xon,
                  "pause_quanta": QUANTA, "refresh_us": self.refresh_us, "stale_us": self.stale_us})
        self.clone_session(PFC_SESSION_BASE + 1, 1)


class PfcPauseResumeTest(PfcTest):
    def runTest(self) -> None:
        self.pfc_setup()
        index = 1 * 8 + PRIO_ROCE
        pauses0 = self.counter("FabricIngress.pfc.pfc_pauses_sent", index)
        resumes0 = self.counter("FabricEgress.pfc.pfc_resumes_sent", index)
        self.queue_rate(2, 2)
        for psn in range(BURST):
            self.send(1, roce(psn=psn, dst_mac=SW_MAC))
        self.cli(f"set_queue_rate {FAST_PPS} 2")
        got = self.collect(BURST + 2, timeout=15)
        frames_on_1 = [parse_pfc(frame) for port, frame in got if port == 1]
        self.assertEqual(len(frames_on_1), 2, f"expected a pause and a resume on port 1, got {frames_on_1}")
        (pause_vector, pause_times), (resume_vector, resume_times) = frames_on_1
        self.assertEqual(pause_vector, 1 << PRIO_ROCE)
        self.assertEqual(pause_times, [QUANTA if c == PRIO_ROCE else 0 for c in range(8)])
        self.assertEqual(resume_vector, 1 << PRIO_ROCE)
        self.assertEqual(resume_times, [0] * 8)
        pause_frame = next(frame for port, frame in got if port == 1)
        self.assertEqual(pause_frame, pfc(SW_MAC, PRIO_ROCE, QUANTA))
        self.assertEqual(sum(1 for port, _ in got if port == 2), BURST)
        self.assertEqual(self.counter("FabricIngress.pfc.pfc_pauses_sent", index) - pauses0, 1)
        self.assertEqual(self.counter("FabricEgress.pfc.pfc_resumes_sent", index) - resumes0, 1)


class PfcRefreshTest(PfcTest):
    """While the count stays at or above XOFF, a new arrival after the refresh interval sends
    the pause again (so the sender stays paused past one pause time); one resume at the end."""

    refresh_us = 200_000

    def runTest(self) -> None:
        self.pfc_setup()
        index = 1 * 8 + PRIO_ROCE
        pauses0 = self.counter("FabricIngress.pfc.pfc_pauses_sent", index)
        self.queue_rate(2, 1)
        for psn in range(XOFF + 2):
            self.send(1, roce(psn=psn, dst_mac=SW_MAC))
        self.wait_until(lambda: self.counter("FabricIngress.pfc.pfc_pauses_sent", index) > pauses0,
                        "the first pause was sent")
        self.wait_past(time.monotonic(), self.refresh_us / 1e6 * 1.5)  # the refresh interval has passed
        for psn in range(XOFF + 2, XOFF + 4):
            self.send(1, roce(psn=psn, dst_mac=SW_MAC))
        self.cli(f"set_queue_rate {FAST_PPS} 2")
        got = self.collect(XOFF + 4 + 3, timeout=30)  # BMv2: the backlog keeps its 1 pps departure times
        times = [parse_pfc(frame)[1][PRIO_ROCE] for port, frame in got if port == 1]
        self.assertEqual(times, [QUANTA, QUANTA, 0])


class PfcLostPacketsForgottenTest(PfcTest):
    """A burst of 20 into a queue of 8 (XOFF 4, XON 2): 12 packets are tail-dropped after
    ingress counted them, so egress never brings the count down to XON. Once the stale time
    has passed twice, the sender's next packet resets the count and resumes it, and the packet
    after that does not pause it again (without the stale time it would stay paused for good)."""

    xoff, xon, queue, burst = 4, 2, 8, 20
    refresh_us = 300_000
    stale_us = 400_000

    def runTest(self) -> None:
        self.pfc_setup()
        index = 1 * 8 + PRIO_ROCE
        rx0 = self.counter("FabricIngress.counters.rx_port", 1)
        resumes0 = self.counter("FabricEgress.pfc.pfc_resumes_sent", index)
        self.cli(f"set_queue_depth {self.queue} 2")
        try:
            self.queue_rate(2, 1)
            for psn in range(self.burst):
                self.send(1, roce(psn=psn, dst_mac=SW_MAC))
            self.ingress_seen(1, self.burst, rx0)
            last_arrival = time.monotonic()
            self.cli(f"set_queue_rate {FAST_PPS} 2")
            got = self.drain(quiet=quiet_after(1))
        finally:
            self.cli("set_queue_depth 64 2")
        forwarded = sum(1 for port, _ in got if port == 2)
        self.assertGreaterEqual(forwarded, self.queue)
        self.assertLess(forwarded, self.burst, "no tail drop: the scenario needs a full queue")
        times = [parse_pfc(frame)[1][PRIO_ROCE] for port, frame in got if port == 1]
        self.assertTrue(times and all(t == QUANTA for t in times), times)
        self.assertGreaterEqual(self.register("pfc_buffered", index), self.xoff)  # the lost packets

        self.wait_past(last_arrival, 2 * self.stale_us / 1e6 + 0.2)  # the lost packets are forgotten
        self.send(1, roce(psn=self.burst, dst_mac=SW_MAC))
        got = self.collect(2)
        self.assertEqual(sorted(port for port, _ in got), [1, 2])
        resume = next(frame for port, frame in got if port == 1)
        self.assertEqual(parse_pfc(resume), (1 << PRIO_ROCE, [0] * 8))
        self.assertEqual(self.counter("FabricEgress.pfc.pfc_resumes_sent", index) - resumes0, 1)

        self.send(1, roce(psn=self.burst + 1, dst_mac=SW_MAC))
        got = self.collect(1)
        self.assertEqual(got[0][0], 2)
        self.assert_silent()
        self.assertEqual(self.register("pfc_buffered", index), 0)
        self.assertEqual(self.register("pfc_paused", index), 0)


class PfcBelowXoffTest(PfcTest):
    """Fewer than XOFF packets buffered: no PFC frame."""

    def runTest(self) -> None:
        self.pfc_setup()
        self.queue_rate(2, 10)
        for psn in range(XOFF - 2):
            self.send(1, roce(psn=psn, dst_mac=SW_MAC))
        self.cli(f"set_queue_rate {FAST_PPS} 2")
        got = self.collect(XOFF - 2)
        self.assertEqual({port for port, _ in got}, {2})
        self.assert_silent()


class PfcReceivedFrameDroppedTest(PfcTest):
    """A received PFC frame is never forwarded. Who stops it differs: our target's MAC
    consumes it below the pipeline (as a switch MAC does); BMv2 has no MAC-level PFC and hands
    it to the program, whose ingress drops it as ``DROP_MAC_CONTROL``, checked there."""

    def runTest(self) -> None:
        self.pfc_setup()
        dropped0 = self.counter("FabricIngress.counters.drop_reasons", DROP_MAC_CONTROL)
        self.send(1, pfc("00:00:00:00:01:01", PRIO_ROCE, 0))
        if self.target == "bmv2":
            self.wait_until(lambda: self.counter("FabricIngress.counters.drop_reasons", DROP_MAC_CONTROL)
                            > dropped0, "the program dropped the PFC frame as MAC control")
        else:
            print("ours: the MAC consumes PFC frames; the program's MAC-control drop is checked on bmv2")
        self.assert_silent()
