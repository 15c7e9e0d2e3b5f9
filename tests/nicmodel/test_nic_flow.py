"""What paces and stops the sender: congestion-control hooks (rate, window, timers),
CNP generation at the notification point, and PFC pause frames per priority."""

from __future__ import annotations

import struct

from netbase import ipv4, pfc
from netbase.ethernet import WIRE_OVERHEAD_BYTES
from nicmodel import Nic, QpConfig, Reliability, WcStatus, roce
from nicmodel.cc.base import AckInfo, CongestionControl


class Scripted(CongestionControl):
    """A congestion control with a fixed rate/window that records every call."""

    def __init__(self, rate_bps: float = 100e9, window_bytes: float | None = None,
                 timer_at: int | None = None) -> None:
        self.name = "scripted"
        self.rate_bps = rate_bps
        self.window_bytes = window_bytes
        self.timer_at = timer_at
        self.sent: list[tuple[int, int, int]] = []
        self.acks: list[AckInfo] = []
        self.cnps: list[int] = []
        self.timeouts: list[int] = []
        self.timers: list[int] = []

    def on_packet_sent(self, now_ns, nbytes, psn):
        self.sent.append((now_ns, nbytes, psn))

    def on_ack(self, ack):
        self.acks.append(ack)

    def on_cnp(self, now_ns):
        self.cnps.append(now_ns)

    def on_timeout(self, now_ns):
        self.timeouts.append(now_ns)

    def on_timer(self, now_ns):
        self.timers.append(now_ns)
        self.timer_at = None

    def next_timer(self):
        return self.timer_at


def mark_ce(d: str, frame: bytes) -> bytes:
    """The fabric marks CE on every ECN-capable data packet (a congested switch)."""
    if d != "ab" or frame[15] & 3 != roce.ECN_ECT0:
        return frame
    f = bytearray(frame)
    f[15] |= roce.ECN_CE
    f[24:26] = b"\0\0"
    f[24:26] = struct.pack("!H", ipv4.checksum(bytes(f[14:34])))
    return bytes(f)


def cnp_times(w) -> list[int]:
    return [t for t, f in zip(w.sent_ns["ba"], w.sent["ba"]) if f[42] == roce.Opcode.CNP]


def test_at_most_one_cnp_per_qp_per_interval(net):
    cc = Scripted()
    a, b, qa, qb = net.make_pair(cc_a=cc)
    size = 3_000_000  # ~250 us at 100 Gb/s, every packet CE-marked
    ma, mb = a.register_mr(length=size), b.register_mr(length=size)
    qa.post_write(1, ma, 0, size, mb.addr, mb.rkey)
    w = net.Wire(a, b, rewrite=mark_ce)
    w.run()
    times = cnp_times(w)
    assert qb.counters.ce_received == qa.counters.data_pkts_sent
    gaps = [y - x for x, y in zip(times, times[1:])]
    assert len(times) >= 5
    assert all(50_000 <= g < 50_000 + 200 for g in gaps)  # one as soon as allowed, no more
    assert qb.counters.cnps_sent == len(times) == qa.counters.cnps_received == len(cc.cnps)
    assert all(roce.parse(f).dqpn == qa.qpn for f in w.sent["ba"] if f[42] == 0x81)
    # acks echo the congestion (BECN) to the sender as well
    assert cc.acks and all(ack.ecn_echo for ack in cc.acks)


def test_cnp_interval_is_settable_and_per_qp(net):
    a = Nic(net.MAC_A, net.IP_A)
    b = Nic(net.MAC_B, net.IP_B, cnp_interval_ns=10_000)
    pairs = []
    for _ in range(2):
        qa = a.create_qp(QpConfig())
        qb = b.create_qp(QpConfig())
        qa.connect(b.mac, b.ip, qb.qpn, 0)
        qb.connect(a.mac, a.ip, qa.qpn, 0)
        ma, mb = a.register_mr(length=600_000), b.register_mr(length=600_000)
        qa.post_write(1, ma, 0, 600_000, mb.addr, mb.rkey)
        pairs.append((qa, qb))
    w = net.Wire(a, b, rewrite=mark_ce)
    w.run()
    for qa, _ in pairs:
        mine = [t for t, f in zip(w.sent_ns["ba"], w.sent["ba"])
                if f[42] == 0x81 and roce.parse(f).dqpn == qa.qpn]
        assert len(mine) >= 5 and qa.counters.cnps_received == len(mine)
        assert all(10_000 <= y - x < 10_200 for x, y in zip(mine, mine[1:]))


def test_pacing_follows_the_cc_rate(net):
    cc = Scripted(rate_bps=10e9)
    a, b, qa, qb = net.make_pair(cc_a=cc)
    ma, mb = a.register_mr(length=20 * 1024), b.register_mr(length=20 * 1024)
    qa.post_write(1, ma, 0, 20 * 1024, mb.addr, mb.rkey)
    w = net.Wire(a, b)
    w.run()
    times = [t for t, _n, _p in cc.sent]
    sizes = [n for _t, n, _p in cc.sent]
    assert len(times) == 20
    for (t0, n0), t1 in zip(zip(times, sizes), times[1:]):
        assert t1 - t0 == int((n0 + WIRE_OVERHEAD_BYTES) * 8e9 / 10e9)  # 10 Gb/s, not 100
    assert [c.status for c in a.poll_cq()] == [WcStatus.SUCCESS]


def test_window_caps_bytes_in_flight(net):
    frame = 14 + 20 + 8 + 12 + 1024 + 4  # a middle packet
    cc = Scripted(window_bytes=3 * frame + 100)
    a, b, qa, qb = net.make_pair(cc_a=cc, ack_every=1)
    ma, mb = a.register_mr(length=64 * 1024), b.register_mr(length=64 * 1024)
    qa.post_write(1, ma, 0, 64 * 1024, mb.addr, mb.rkey)
    w = net.Wire(a, b, delay_ns=5_000)
    w.run()
    sent = [t for t, _n, _p in cc.sent]
    # before the first ACK returns (2 x 5 us) only a window's worth has left
    assert sum(1 for t in sent if t < 10_000) == 3
    assert all(0 < ack.acked_bytes <= 3 * frame + 16 for ack in cc.acks)
    assert qa.inflight_bytes == 0 and [c.status for c in a.poll_cq()] == [WcStatus.SUCCESS]


def test_selective_repeat_inflight_cap_defaults_to_one_bdp(net):
    a, b, qa, qb = net.make_pair(Reliability.SELECTIVE_REPEAT, base_rtt_ns=4_000)
    assert qa.inflight_cap == 100e9 * 4_000 / 8e9  # 50 KB
    ma, mb = a.register_mr(length=200_000), b.register_mr(length=200_000)
    qa.post_write(1, ma, 0, 200_000, mb.addr, mb.rkey)
    w = net.Wire(a, b, delay_ns=20_000)
    w.run(until_ns=30_000)  # no ACK back yet: the cap holds the sender
    assert qa.inflight_bytes <= 50_000 and qa.counters.data_pkts_sent == 50_000 // 1082
    w.run()
    assert [c.status for c in a.poll_cq()] == [WcStatus.SUCCESS]


def test_cc_hooks_see_absolute_psns_timeouts_and_timers(net):
    cc = Scripted(timer_at=5_000)
    start = (1 << 24) - 3
    a, b, qa, qb = net.make_pair(cc_a=cc, psn_a=start, rto_ns=50_000, ack_every=1)
    ma, mb = a.register_mr(length=8 * 1024), b.register_mr(length=8 * 1024)
    qa.post_write(1, ma, 0, 8 * 1024, mb.addr, mb.rkey)
    dropped = []

    def lose_psn_2(d, i, f):  # first transmission of the third packet vanishes
        if d == "ab" and roce.parse(f).psn == (start + 7) & 0xFFFFFF and not dropped:
            dropped.append(i)
            return []
        return [0]

    w = net.Wire(a, b, policy=lose_psn_2)
    w.run()
    assert [p for _t, _n, p in cc.sent][:8] == list(range(start, start + 8))
    assert cc.sent[-1][2] == start + 7  # the tail loss is resent by the timeout
    assert len(cc.timeouts) == 1 and qa.counters.timeouts == 1
    assert cc.timers == [5_000]  # on_timer called exactly when next_timer asked
    assert cc.acks[-1].acked_psn == start + 7 and cc.acks[-1].next_psn == start + 8
    assert all(ack.rtt_ns is None or ack.rtt_ns >= 2_000 for ack in cc.acks)


def two_priorities(net):
    a = Nic(net.MAC_A, net.IP_A, 10e9)
    b = Nic(net.MAC_B, net.IP_B, 10e9)
    qps = []
    for prio in (3, 5):
        qa = a.create_qp(QpConfig(priority=prio))
        qb = b.create_qp(QpConfig(priority=prio))
        qa.connect(b.mac, b.ip, qb.qpn, 0)
        qb.connect(a.mac, a.ip, qa.qpn, 0)
        ma, mb = a.register_mr(length=400_000), b.register_mr(length=400_000)
        qa.post_write(prio, ma, 0, 400_000, mb.addr, mb.rkey)
        qps.append(qb.qpn)
    return a, b, qps


def sends_by_qpn(w, qpn):
    return [t for t, f in zip(w.sent_ns["ab"], w.sent["ab"]) if roce.parse(f).dqpn == qpn]


def test_pause_stops_only_its_priority_and_resumes_on_zero(net):
    a, b, (q3, q5) = two_priorities(net)
    w = net.Wire(a, b)
    w.inject("ba", pfc.build(b.mac, {3: 0xFFFF}), at_ns=50_000)  # ~3.4 ms at 10 Gb/s
    w.inject("ba", pfc.build(b.mac, {3: 0}), at_ns=150_000)  # resume early
    w.run()
    t3, t5 = sends_by_qpn(w, q3), sends_by_qpn(w, q5)
    assert not [t for t in t3 if 50_000 < t < 150_000]  # priority 3 silent while paused
    assert len([t for t in t5 if 50_000 < t < 150_000]) > 50  # priority 5 carries on
    assert any(150_000 <= t < 152_000 for t in t3)  # and 3 restarts on the resume frame
    assert a.pause_ns(3, w.now) == 100_000 and a.pause_ns(5, w.now) == 0
    assert a.counters.pause_frames_received == 2
    assert [c.status for c in a.poll_cq()] == [WcStatus.SUCCESS] * 2


def test_pause_expires_after_its_quanta(net):
    a, b, (q3, q5) = two_priorities(net)
    w = net.Wire(a, b)
    quanta = 1000  # 1000 x 512 bits at 10 Gb/s = 51.2 us
    w.inject("ba", pfc.build(b.mac, {3: quanta, 5: quanta}), at_ns=20_000)
    w.inject("ba", pfc.build(b.mac, {5: quanta}), at_ns=40_000)  # extends 5 only
    w.run()
    t3, t5 = sends_by_qpn(w, q3), sends_by_qpn(w, q5)
    assert not [t for t in t3 if 20_000 < t < 71_200]
    assert min(t for t in t3 if t > 20_000) < 71_200 + 2_000
    assert not [t for t in t5 if 20_000 < t < 91_200]
    assert a.pause_ns(3, w.now) == 51_200 and a.pause_ns(5, w.now) == 71_200


def test_queue_pairs_share_the_port_round_robin(net):
    a = Nic(net.MAC_A, net.IP_A)
    b = Nic(net.MAC_B, net.IP_B)
    remote = []
    for _ in range(3):
        qa, qb = a.create_qp(), b.create_qp()
        qa.connect(b.mac, b.ip, qb.qpn, 0)
        qb.connect(a.mac, a.ip, qa.qpn, 0)
        ma, mb = a.register_mr(length=50_000), b.register_mr(length=50_000)
        qa.post_write(1, ma, 0, 50_000, mb.addr, mb.rkey)
        remote.append(qb.qpn)
    w = net.Wire(a, b)
    w.run()
    order = [roce.parse(f).dqpn for f in w.sent["ab"]]
    assert order[:30] == remote * 10
    assert [c.status for c in a.poll_cq()] == [WcStatus.SUCCESS] * 3


def test_a_full_window_asks_for_an_ack_so_coalescing_cannot_stall(net):
    frame = 14 + 20 + 8 + 12 + 1024 + 4
    cc = Scripted(window_bytes=2 * frame + 16)  # the first packet carries a 16-byte RETH
    a, b, qa, qb = net.make_pair(cc_a=cc, ack_every=16, rto_ns=1_000_000)
    ma, mb = a.register_mr(length=40 * 1024), b.register_mr(length=40 * 1024)
    qa.post_write(1, ma, 0, 40 * 1024, mb.addr, mb.rkey)
    w = net.Wire(a, b)
    w.run()
    [c] = a.poll_cq()
    assert c.status is WcStatus.SUCCESS and qa.counters.timeouts == 0
    assert c.time_ns < 100_000  # 20 window rounds of ~2 us, not a 1 ms timeout
    ackreq = [roce.parse(f).ackreq for f in w.sent["ab"]]
    assert ackreq[:4] == [False, True, False, True]  # every second packet fills the window
