"""Packet spraying in virtual time: a sender NIC's port serializes at 100 Gb/s and sprays its
data packets round robin over four paths whose delays differ by up to 3 us (about thirty-five
packet times), so the receiver sees most packets out of order. Selective repeat with the
default time-based loss detection (RACK) delivers 2 MiB with no resend; the duplicate-
threshold rule and Go-Back-N resend on the same paths; a packet really lost on one path is
resent once, within a few round trips, not after the retransmission timeout."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from fabricsim.engine import Simulator
from fabricsim.host import SimHost
from fabricsim.link import Link, LinkConfig
from fabricsim.reference_cli import main
from nicmodel import LossDetection, Nic, QpConfig, Reliability, WcStatus, roce

BASE_NS = 2_000  # one-way propagation of every path
PATHS_NS = (0, 1_000, 2_000, 3_000)  # extra delay of each sprayed path
SIZE = 2 << 20
RTO = QpConfig().rto_ns


class SprayingPort:
    """The sender's port: its ``wire`` serializes each frame (the host's uplink), then the
    port sends data packets over the paths in turn; ``drop`` names data-packet indexes lost on
    their path."""

    def __init__(self, sim: Simulator, deliver: Callable[[bytes], None], drop: set[int]) -> None:
        self.sim = sim
        self.deliver = deliver
        self.drop = drop
        self.wire = Link(sim, LinkConfig(delay_ns=0), self._arrived)  # serialization only
        self.sent = 0
        self.resends: list[tuple[int, int]] = []  # (PSN, time) of every data packet seen twice
        self.first_sent: dict[int, int] = {}

    def _arrived(self, frame: bytes) -> None:  # the frame has left the port
        if frame[42] not in roce.OP_DATA:
            self.sim.after(BASE_NS, self.deliver, frame)
            return
        psn = roce.parse(frame).psn
        if psn in self.first_sent:
            self.resends.append((psn, self.sim.now - self.first_sent[psn]))
        else:
            self.first_sent[psn] = self.sim.now
        n = self.sent
        self.sent += 1
        if n not in self.drop:
            self.sim.after(BASE_NS + PATHS_NS[n % len(PATHS_NS)], self.deliver, frame)


def sprayed_write(reliability: Reliability, drop: set[int] = frozenset(), **cfg):
    sim = Simulator()
    a = Nic("02:00:00:00:01:01", "10.0.0.1", 100e9)
    b = Nic("02:00:00:00:01:02", "10.0.0.2", 100e9)
    qa = a.create_qp(QpConfig(reliability=reliability, **cfg))
    qb = b.create_qp(QpConfig(reliability=reliability, **cfg))
    qa.connect(b.mac, b.ip, qb.qpn, 0)
    qb.connect(a.mac, a.ip, qa.qpn, 0)
    ha, hb = SimHost(sim, a, "a"), SimHost(sim, b, "b")
    port = SprayingPort(sim, hb.receive, set(drop))
    ha.attach(port.wire)
    hb.attach(Link(sim, LinkConfig(delay_ns=BASE_NS), ha.receive))
    src = bytearray(random.Random(9).randbytes(SIZE))
    dst = bytearray(SIZE)
    ma, mb = a.register_mr(src), b.register_mr(dst)
    for i in range(4):
        part = SIZE // 4
        qa.post_write(i, ma, i * part, part, mb.addr + i * part, mb.rkey)
    ha.service()
    sim.run(max_events=2_000_000)
    assert dst == src
    assert [c.status for c in a.poll_cq()] == [WcStatus.SUCCESS] * 4
    return qa, qb, port, sim.now


def test_sprayed_transfer_needs_no_resend_with_time_based_loss_detection() -> None:
    qa, qb, port, _ = sprayed_write(Reliability.SELECTIVE_REPEAT)
    assert qb.counters.out_of_order_received > SIZE // 1024 // 2
    assert qa.counters.reorder_peak_ns > 2_500  # overtaken by up to ~3 us
    assert qa.counters.retransmitted_pkts == 0 and port.resends == []
    assert qa.counters.timeouts == 0


def test_duplicate_threshold_and_go_back_n_resend_on_the_same_paths() -> None:
    qa, qb, port, _ = sprayed_write(Reliability.SELECTIVE_REPEAT,
                                    loss_detection=LossDetection.COUNT)
    assert qa.counters.retransmitted_pkts > 100
    assert qb.counters.duplicates_received == qa.counters.retransmitted_pkts  # all needless
    qa, qb, port, _ = sprayed_write(Reliability.GO_BACK_N)
    assert qa.counters.retransmitted_pkts > 100


def test_a_packet_lost_on_one_path_is_resent_once_long_before_the_timeout() -> None:
    qa, qb, port, end = sprayed_write(Reliability.SELECTIVE_REPEAT, drop={1000})
    [(psn, after_ns)] = port.resends
    assert psn == 1000
    assert after_ns < 4 * 2 * (BASE_NS + PATHS_NS[-1])  # a few RTTs; the RTO is 500 us
    assert qa.counters.retransmitted_pkts == 1 and qa.counters.timeouts == 0
    assert qb.counters.duplicates_received == 0
    assert end < RTO


def test_reference_cli_selects_the_loss_detection(capsys) -> None:

    assert main(["p2p", "--hosts", "2", "--size", "64KiB", "--reliability", "sr",
                 "--loss", "0.02", "--loss-detection", "count"]) == 0
    assert "messages        1/1 completed" in capsys.readouterr().out
    assert main(["p2p", "--hosts", "2", "--reliability", "sr",
                 "--reorder-window-rtt", "0"]) == 2
    assert "reorder_window_rtt: 0.0 is outside (0..16)" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["p2p", "--loss-detection", "fast"])
    assert e.value.code == 2 and "invalid choice" in capsys.readouterr().err
