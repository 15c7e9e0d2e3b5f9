"""Go-Back-N as hardware RNICs run it: one PSN-sequence NAK per gap, repeated only after
the responder made progress or the gap outlived ``nak_interval_ns``; the retransmission
timeout in IBA's encoding (4.096 us x 2^local_ack_timeout), with or without backoff."""

from __future__ import annotations

import pytest

from nicmodel import QpConfig, VerbsError, WcStatus, requester, roce
from nicmodel.verbs import ack_timeout_ns

SIZE = 100 * 1024  # 100 packets of 1 KiB: about 87 us at 10 Gb/s


def lose_packet_and_first_nak(direction: str, index: int, frame: bytes) -> list[int]:
    """Drop data packet 1 and the responder's first NAK."""
    if direction == "ab":
        return [] if index == 1 else [0]
    p = roce.parse(frame)
    if p.syndrome is not None and p.syndrome & roce.SYN_KIND_MASK == roce.SYN_NAK:
        lose_packet_and_first_nak.naks += 1
        if lose_packet_and_first_nak.naks == 1:
            return []
    return [0]


def run_lossy_write(net, **cfg):
    lose_packet_and_first_nak.naks = 0
    a, b, qa, qb = net.make_pair(line_rate_bps=10e9, rto_ns=5_000_000, rto_max_ns=5_000_000,
                                 **cfg)
    src = bytearray(bytes(range(256)) * (SIZE // 256))
    dst = bytearray(SIZE)
    ma, mb = a.register_mr(src), b.register_mr(dst)
    qa.post_write(1, ma, 0, SIZE, mb.addr, mb.rkey)
    w = net.Wire(a, b, policy=lose_packet_and_first_nak)
    end = w.run()
    assert dst == src and [c.status for c in a.poll_cq()] == [WcStatus.SUCCESS]
    return qa, qb, end


def test_a_gap_is_naked_once_and_again_only_after_the_nak_interval(net):
    qa, qb, end = run_lossy_write(net, nak_interval_ns=20_000)
    # 98 packets arrived behind the gap and were dropped, yet only two NAKs went out: the
    # first (lost) and one repeat once the gap had lasted 20 us; no timeout was needed
    assert qb.counters.out_of_order_dropped > 20
    assert qb.counters.naks_sent == 2 and qb.counters.naks_repeated == 1
    assert qa.counters.naks_received == 1 and qa.counters.timeouts == 0
    assert end < 5_000_000


def test_without_nak_repeats_a_lost_nak_costs_a_retransmission_timeout(net):
    qa, qb, end = run_lossy_write(net, nak_interval_ns=None)
    assert qb.counters.naks_sent == 1 and qb.counters.naks_repeated == 0
    assert qa.counters.timeouts == 1 and end > 5_000_000


def resend_times(net, **cfg) -> list[int]:
    """Send times of a one-packet WRITE whose first three transmissions are lost."""
    a, b, qa, qb = net.make_pair(**cfg)
    ma, mb = a.register_mr(bytearray(64)), b.register_mr(bytearray(64))
    qa.post_write(1, ma, 0, 64, mb.addr, mb.rkey)
    w = net.Wire(a, b, policy=lambda d, i, f: [] if d == "ab" and i < 3 else [0])
    w.run()
    assert [c.status for c in a.poll_cq()] == [WcStatus.SUCCESS]
    return w.sent_ns["ab"]


def test_retransmission_timeout_follows_the_iba_local_ack_timeout():
    typical = QpConfig(local_ack_timeout=14)  # a common RNIC default: 67 ms
    typical.validate()
    assert typical.base_rto_ns() == ack_timeout_ns(14) == 67_108_864
    assert QpConfig().base_rto_ns() == QpConfig().rto_ns == 500_000
    with pytest.raises(VerbsError, match="local_ack_timeout"):
        QpConfig(local_ack_timeout=0).validate()
    with pytest.raises(VerbsError, match="rto_max_ns"):
        QpConfig(local_ack_timeout=20).validate()  # 4.3 s is above the 2.1 s cap


def test_timeouts_fire_at_the_iba_interval_with_and_without_backoff(net):
    t = ack_timeout_ns(8)  # 1.05 ms
    fixed = resend_times(net, local_ack_timeout=8, rto_backoff=False)
    assert [b - a for a, b in zip(fixed, fixed[1:])] == [t, t, t]
    doubling = resend_times(net, local_ack_timeout=8)
    assert [b - a for a, b in zip(doubling, doubling[1:])] == [t, 2 * t, 4 * t]


def test_outstanding_packets_stop_at_the_psn_window(net, monkeypatch):
    # the real window is 2^23 packets; shrink it to see the requester stop at it
    monkeypatch.setattr(requester, "PSN_WINDOW", 8)
    a, b, qa, qb = net.make_pair(rto_ns=1_000_000, rto_max_ns=1_000_000)
    ma, mb = a.register_mr(bytearray(64 * 1024)), b.register_mr(bytearray(64 * 1024))
    qa.post_write(1, ma, 0, 64 * 1024, mb.addr, mb.rkey)  # 64 packets
    w = net.Wire(a, b, policy=lambda d, i, f: [] if d == "ba" else [0])  # no ACK returns
    w.run(until_ns=900_000)
    assert len(w.sent["ab"]) == 8 and qa.outstanding_wrs == 1
    w.policy = net.deliver_all
    w.run()  # the timeout resends, ACKs now return, the window slides to the end
    assert [c.status for c in a.poll_cq()] == [WcStatus.SUCCESS]
