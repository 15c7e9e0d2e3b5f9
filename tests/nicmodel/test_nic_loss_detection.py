"""Selective repeat under packet spraying: time-based loss detection (RACK, RFC 8985) tells
reordering from loss. A WRITE sprayed round robin over four paths of different delay arrives
heavily out of order; selective repeat completes it with no resend, while the classic
duplicate-threshold rule and Go-Back-N resend packets that were only overtaken. Real losses
are still resent once, within a few RTTs, long before the retransmission timeout."""

from __future__ import annotations

import random

import pytest

from nicmodel import LossDetection, QpConfig, Reliability, VerbsError, WcStatus, roce
from nicmodel.settings import NicSettings

GBN = Reliability.GO_BACK_N
SR = Reliability.SELECTIVE_REPEAT
SIZE = 200 * 1024  # 200 packets of 1024 bytes
RTO = 500_000  # QpConfig default: every recovery below is far quicker
# One-way delay 1 us plus a path-dependent extra: packets on the slowest path arrive 1.5 us
# (about seventeen packet times at 100 Gb/s) behind packets sent after them on the fastest
# path, i.e. each is overtaken by up to seventeen later packets. That is within the default
# reorder window: one minimum RTT, 2 us here (the wire's delay both ways).
PATHS_NS = (0, 500, 1_000, 1_500)


def spray(paths=PATHS_NS, lose: dict[int, int] | None = None):
    """Data packets A->B take path (data packet index mod len(paths)); ``lose`` maps a PSN to
    how many of its transmissions are lost (the first ones). ACKs travel undisturbed."""
    lost_so_far: dict[int, int] = {}
    count = [0]

    def policy(d: str, index: int, frame: bytes) -> list[int]:
        if d != "ab" or frame[42] not in roce.OP_DATA:
            return [0]
        n = count[0]
        count[0] += 1
        psn = roce.parse(frame).psn
        if lose and lost_so_far.get(psn, 0) < lose.get(psn, 0):
            lost_so_far[psn] = lost_so_far.get(psn, 0) + 1
            return []
        return [paths[n % len(paths)]]

    return policy


def transfer(net, reliability, policy, size=SIZE, messages=1, **cfg):
    a, b, qa, qb = net.make_pair(reliability, **cfg)
    src = bytearray(random.Random(5).randbytes(size))
    dst = bytearray(size)
    ma, mb = a.register_mr(src), b.register_mr(dst)
    step = size // messages
    for i in range(messages):
        qa.post_write(i, ma, i * step, step, mb.addr + i * step, mb.rkey)
    w = net.Wire(a, b, policy=policy)
    w.run()
    assert dst == src
    assert [c.status for c in a.poll_cq()] == [WcStatus.SUCCESS] * messages
    return qa, qb, w


def test_sprayed_write_completes_without_any_resend(net):
    qa, qb, w = transfer(net, SR, spray())
    assert qa.config.loss_detection is LossDetection.RACK  # the default
    assert qb.counters.out_of_order_received > 100  # most packets arrived out of order
    assert qa.counters.reorder_peak_ns >= 1_400  # packets came up to ~1.5 us behind later ones
    assert qa.counters.retransmitted_pkts == 0
    assert qa.counters.timeouts == 0
    assert qb.counters.duplicates_received == 0
    assert len(net.data_psns(w.sent["ab"])) == SIZE // 1024  # each packet sent exactly once


def test_the_same_spraying_makes_dupthresh_and_go_back_n_resend(net):
    qa, qb, _ = transfer(net, SR, spray(), loss_detection=LossDetection.COUNT)
    assert qa.counters.retransmitted_pkts > 20
    assert qb.counters.duplicates_received == qa.counters.retransmitted_pkts  # all needless
    qa, qb, _ = transfer(net, GBN, spray())
    assert qa.counters.retransmitted_pkts > 20
    assert qb.counters.out_of_order_dropped > 20


def test_a_lost_packet_is_resent_once_within_a_few_rtts(net):
    qa, qb, w = transfer(net, SR, spray(lose={57: 1}))
    assert qa.counters.retransmitted_pkts == 1
    assert qa.counters.timeouts == 0
    assert qb.counters.duplicates_received == 0
    psns = net.data_psns(w.sent["ab"])
    first, again = [i for i, p in enumerate(psns) if p == 57]
    gap = w.sent_ns["ab"][again] - w.sent_ns["ab"][first]
    assert gap < 6_000  # about RTT + reorder window after it was sent; the RTO is 500 us
    assert w.now < RTO


def test_duplicate_threshold_3_resends_on_the_ack_that_sacks_hole_plus_3(net):
    # an 8-packet WRITE with PSN 2 lost; the responder's ACKs are held and handed to the
    # requester one by one, each followed by everything the requester then transmits
    hole = 2
    a, b, qa, _ = net.make_pair(SR, loss_detection=LossDetection.COUNT,
                                sack_reorder_threshold=3)
    src, dst = bytearray(random.Random(7).randbytes(8 * 1024)), bytearray(8 * 1024)
    ma, mb = a.register_mr(src), b.register_mr(dst)
    qa.post_write(1, ma, 0, len(src), mb.addr, mb.rkey)

    def lose_hole_hold_acks(d: str, index: int, frame: bytes) -> list[int]:
        return [] if d == "ba" or (index == hole and roce.parse(frame).psn == hole) else [0]

    w = net.Wire(a, b, policy=lose_hole_hold_acks)
    w.run(until_ns=50_000)  # all data sent, nothing acknowledged yet; far below the RTO
    assert net.data_psns(w.sent["ab"]) == list(range(8))
    acks = w.sent["ba"]
    highest_sacked = []
    for ack in acks:
        ext = roce.parse_ack_ext(roce.parse(ack))
        assert ext.sack_base == hole
        highest_sacked.append(ext.sack_base + ext.sack_bitmap.bit_length())
    assert highest_sacked == [3, 4, 5, 6, 7]  # one SACK per packet after the hole
    resent_after = []
    for i, ack in enumerate(acks):
        now = w.now + (i + 1) * 10_000
        a.receive(ack, now)
        while (f := a.poll_transmit(now)) is not None:
            resent_after += [highest_sacked[i]] * net.data_psns([f]).count(hole)
    assert resent_after == [hole + 3]  # not on hole+2's ACK, and exactly once
    assert qa.counters.retransmitted_pkts == 1 and qa.counters.timeouts == 0


def test_a_lost_resend_is_detected_again_without_the_timeout(net):
    # PSN 20's first two transmissions are lost; packets sent after the resend are SACKed,
    # so RACK judges the resend lost too (a duplicate threshold would wait for the RTO)
    qa, qb, w = transfer(net, SR, spray(lose={20: 2}))
    assert net.data_psns(w.sent["ab"]).count(20) == 3
    assert qa.counters.retransmitted_pkts == 2
    assert qa.counters.timeouts == 0
    assert w.now < RTO
    qa, qb, w = transfer(net, SR, spray(lose={20: 2}), loss_detection=LossDetection.COUNT)
    assert qa.counters.timeouts == 1  # the classic rule needed the timeout for it


def test_reordering_beyond_the_window_widens_it_after_duplicate_reports(net):
    # the slowest path is 3 us behind: more than the initial window, so the first round
    # resends packets that were only late; the responder reports the duplicates, the window
    # widens, and the later messages go through without a resend
    slow = (0, 1_000, 2_000, 3_000)
    qa, qb, w = transfer(net, SR, spray(slow), size=800 * 1024, messages=8)
    first_window = QpConfig().reorder_window_rtt * 2_000
    assert qa.counters.spurious_retransmits > 0
    assert qa.counters.spurious_retransmits == qb.counters.duplicates_received
    assert qa.reorder_window_ns() >= 3_000 > first_window
    psns = net.data_psns(w.sent["ab"])
    resent = [i for i, p in enumerate(psns) if p in psns[:i]]
    assert resent and max(resent) < len(psns) // 4  # resends only early on
    assert qa.counters.timeouts == 0


def test_responder_reports_a_duplicate_in_its_ack(net):
    a, b, qa, qb = net.make_pair(SR)
    src, dst = bytearray(b"d" * 4096), bytearray(4096)
    ma, mb = a.register_mr(src), b.register_mr(dst)
    qa.post_write(1, ma, 0, 4096, mb.addr, mb.rkey)
    w = net.Wire(a, b)
    w.run()
    second = w.sent["ab"][1]  # PSN 1 again, after the message completed
    w.inject("ab", second)
    w.run()
    ack = roce.parse(w.sent["ba"][-1])
    assert ack.opcode == roce.Opcode.ACKNOWLEDGE and ack.resv7 & roce.ACK_EXT_DSACK
    assert roce.parse_ack_ext(ack).dsack_psn == 1
    assert qb.counters.duplicates_received == 1
    assert qa.counters.spurious_retransmits == 0  # we never resent PSN 1: the wire did it


def test_truncated_duplicate_report_is_counted_and_dropped(net):
    a, b, qa, qb = net.make_pair(SR)
    bth = roce.pack_bth(roce.Opcode.ACKNOWLEDGE, qa.qpn, 0, resv7=roce.ACK_EXT_DSACK)
    tmpl = roce.FrameTemplate(b.mac, a.mac, b.ip, a.ip, 0xC001, 26, roce.ECN_NOT_ECT)
    a.receive(tmpl.build(bth, roce.pack_aeth(roce.SYN_ACK, 0), b""), 0)
    assert a.counters.drops["truncated"] == 1


def test_bad_loss_detection_settings_are_refused():
    with pytest.raises(VerbsError):
        QpConfig(loss_detection="rack").validate()  # type: ignore[arg-type]
    for bad in (0, -1.0, 17, True):
        with pytest.raises(VerbsError):
            QpConfig(reorder_window_rtt=bad).validate()
    with pytest.raises(ValueError):
        NicSettings(reliability="sr", loss_detection="fast").validate(100e9)
    cfg = NicSettings(reliability="sr", loss_detection="count", reorder_window_rtt=1.0).qp_config()
    assert cfg.loss_detection is LossDetection.COUNT and cfg.reorder_window_rtt == 1.0


def test_a_lost_tail_is_left_to_the_retransmission_timeout(net):
    # nothing is sent after the last packet, so no later packet can show it lost: the RTO
    # (the backstop) resends it, once
    qa, qb, w = transfer(net, SR, spray(lose={SIZE // 1024 - 1: 1}))
    assert qa.counters.timeouts == 1
    assert qa.counters.retransmitted_pkts == 1
    assert w.now > RTO
