"""Reliable transport between two NICs: data arrives intact at the right place under loss,
reordering and duplication; Go-Back-N and selective repeat recover the way they should."""

from __future__ import annotations

import random

import pytest

from nicmodel import Nic, QpConfig, QpState, Reliability, VerbsError, WcOpcode, WcStatus, roce
from nicmodel.cc import ALGORITHMS, AckInfo, create_cc

GBN = Reliability.GO_BACK_N
SR = Reliability.SELECTIVE_REPEAT
WRAP = (1 << 24) - 40  # initial PSN a few dozen packets before the 24-bit wrap


def random_policy(seed: int, loss: float = 0.0, reorder_ns: int = 0, dup: float = 0.0):
    rng = random.Random(seed)

    def policy(direction: str, index: int, frame: bytes) -> list[int]:
        if rng.random() < loss:
            return []
        out = [rng.randrange(reorder_ns + 1)]
        if rng.random() < dup:
            out.append(rng.randrange(reorder_ns + 1))
        return out

    return policy


def drop_first(indexes: set[int], direction: str = "ab"):
    """Lose the first transmission of the given data-packet indexes (0 = first data packet)."""
    count = [0]

    def policy(d: str, index: int, frame: bytes) -> list[int]:
        if d == direction and frame[42] in roce.OP_DATA:
            count[0] += 1
            if count[0] - 1 in indexes:
                return []
        return [0]

    return policy


def written(net, reliability, policy, size=300_000, psn=WRAP, **cfg):
    a, b, qa, qb = net.make_pair(reliability, psn_a=psn, **cfg)
    src = bytearray(random.Random(7).randbytes(size))
    dst = bytearray(size + 4096)
    ma, mb = a.register_mr(src), b.register_mr(dst)
    half = size // 2
    qa.post_write(1, ma, 0, half, mb.addr + 4096, mb.rkey)
    qa.post_write(2, ma, half, size - half, mb.addr + 4096 + half, mb.rkey)
    w = net.Wire(a, b, policy=policy)
    w.run()
    return a, b, qa, qb, src, dst, w


SCENARIOS = {
    "clean": dict(),
    "loss": dict(loss=0.03),
    "reorder": dict(reorder_ns=2_000),
    "duplicate": dict(dup=0.2),
    "all": dict(loss=0.03, reorder_ns=1_000, dup=0.1),
}


@pytest.mark.parametrize("reliability", [GBN, SR])
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_every_byte_arrives_at_its_offset(net, reliability, scenario):
    policy = random_policy(11, **SCENARIOS[scenario])
    a, b, qa, qb, src, dst, w = written(net, reliability, policy)
    assert dst[:4096] == bytes(4096)  # nothing written before the target address
    assert dst[4096:] == src
    cqes = a.poll_cq()
    assert [(c.wr_id, c.status, c.byte_len) for c in cqes] == [
        (1, WcStatus.SUCCESS, 150_000), (2, WcStatus.SUCCESS, 150_000)]
    assert qb.counters.payload_bytes_delivered == len(src)
    assert qb.counters.messages_received == 2
    psns = net.data_psns(w.sent["ab"])
    assert 0 in psns and max(psns) == (1 << 24) - 1  # the PSN space wrapped
    if scenario == "duplicate":
        assert qb.counters.duplicates_received > 0


@pytest.mark.parametrize("reliability", [GBN, SR])
@pytest.mark.parametrize("mtu", [1024, 4096])
def test_large_message_and_odd_sizes(net, reliability, mtu):
    a, b, qa, qb = net.make_pair(reliability, mtu=mtu)
    src = bytearray(random.Random(3).randbytes(1_000_003))
    dst = bytearray(len(src))
    ma, mb = a.register_mr(src), b.register_mr(dst)
    sizes = [1, 3, mtu - 1, mtu, mtu + 1, 0, 1_000_003 - (3 * mtu + 4)]
    off = 0
    for i, n in enumerate(sizes):
        qa.post_write(i, ma, off, n, mb.addr + off, mb.rkey)
        off += n
    net.Wire(a, b, policy=random_policy(5, loss=0.02)).run()
    assert dst == src
    assert [c.status for c in a.poll_cq()] == [WcStatus.SUCCESS] * len(sizes)


def test_go_back_n_resends_from_the_lost_psn(net):
    a, b, qa, qb, src, dst, w = written(net, GBN, drop_first({5}), size=20 * 1024, psn=100)
    assert dst[4096:] == src
    psns = net.data_psns(w.sent["ab"])
    assert psns[:20] == list(range(100, 120))
    assert psns[20:] == list(range(105, 120))  # everything from the lost PSN on, once
    assert qa.counters.retransmitted_pkts == 15
    assert qb.counters.naks_sent == 1  # one NAK for the gap, not one per dropped packet
    assert qb.counters.out_of_order_dropped == 14
    assert qa.counters.naks_received == 1


def test_selective_repeat_resends_only_the_lost(net):
    a, b, qa, qb, src, dst, w = written(net, SR, drop_first({5, 12}), size=20 * 1024, psn=100)
    assert dst[4096:] == src
    psns = net.data_psns(w.sent["ab"])
    assert sorted(psns[20:]) == [105, 112]
    assert qa.counters.retransmitted_pkts == 2
    assert qb.counters.naks_sent == 0
    assert qb.counters.out_of_order_received == 13  # 106..111 and 113..119
    assert qb.counters.reassembly_peak_pkts == 13
    assert qb.counters.reassembly_peak_bytes == 13 * 1024
    assert qb.counters.reassembly_bytes == 0


def late(index: int, extra_ns: int, direction: str = "ab"):
    def policy(d: str, i: int, frame: bytes) -> list[int]:
        return [extra_ns if (d == direction and i == index) else 0]

    return policy


def test_out_of_order_completes_without_resends_in_selective_repeat(net):
    # data packet 3 arrives after five later packets (about 5 x 90 ns later)
    a, b, qa, qb, src, dst, w = written(net, SR, late(3, 480), size=16 * 1024, psn=7,
                                        sack_reorder_threshold=8)
    assert dst[4096:] == src
    assert qa.counters.retransmitted_pkts == 0
    assert qb.counters.out_of_order_received >= 5
    assert [c.status for c in a.poll_cq()] == [WcStatus.SUCCESS] * 2
    # the same reordering makes Go-Back-N resend
    a, b, qa, qb, src, dst, w = written(net, GBN, late(3, 480), size=16 * 1024, psn=7)
    assert dst[4096:] == src
    assert qa.counters.retransmitted_pkts > 0


def test_selective_repeat_places_write_packets_when_the_first_is_lost(net):
    # the FIRST packet (with the RETH) of the second message is lost: its middle packets
    # are held, then placed when the FIRST comes back
    a, b, qa, qb, src, dst, w = written(net, SR, drop_first({10}), size=20 * 1024, psn=0)
    assert dst[4096:] == src
    assert qa.counters.retransmitted_pkts == 1
    assert qb.counters.reassembly_peak_pkts >= 9


def test_nothing_completes_that_did_not_arrive(net):
    """The last packet never gets through: the requester retries with exponential backoff,
    gives up with RETRY_EXC_ERR, the QP goes to ERROR, later work is flushed, and the
    missing bytes are not in the destination."""

    def lose_last(d, i, frame):
        p = roce.parse(frame)
        return [] if p.opcode == roce.Opcode.RDMA_WRITE_LAST else [0]

    a, b, qa, qb = net.make_pair(GBN, retry_count=3, rto_ns=100_000, ack_every=1)
    src = bytearray(b"\x5a" * 4096)
    dst = bytearray(4096)
    ma, mb = a.register_mr(src), b.register_mr(dst)
    qa.post_write(1, ma, 0, 4096, mb.addr, mb.rkey)
    w = net.Wire(a, b, policy=lose_last)
    w.run()
    cqes = a.poll_cq()
    assert [(c.wr_id, c.status) for c in cqes] == [(1, WcStatus.RETRY_EXC_ERR)]
    assert qa.state is QpState.ERROR
    assert qa.counters.timeouts == 4
    assert dst[:3072] == src[:3072] and dst[3072:] == bytes(1024)
    last_times = [t for t, f in zip(w.sent_ns["ab"], w.sent["ab"])
                  if f[42] == roce.Opcode.RDMA_WRITE_LAST]
    gaps = [y - x for x, y in zip(last_times, last_times[1:])]
    assert len(gaps) == 3
    assert gaps[1:] == [200_000, 400_000]  # the timeout doubles each time
    qa.post_write(2, ma, 0, 10, mb.addr, mb.rkey)
    assert [(c.wr_id, c.status) for c in a.poll_cq()] == [(2, WcStatus.WR_FLUSH_ERR)]


@pytest.mark.parametrize("reliability", [GBN, SR])
def test_send_consumes_receive_wqes_in_order(net, reliability):
    a, b, qa, qb = net.make_pair(reliability)
    src = bytearray(random.Random(1).randbytes(20_000))
    ma = a.register_mr(src)
    bufs = [bytearray(8192) for _ in range(3)]
    mrs = [b.register_mr(x) for x in bufs]
    for i, mr in enumerate(mrs):
        qb.post_recv(100 + i, mr, 0, 8192)
    qa.post_send(1, ma, 0, 100)
    qa.post_send(2, ma, 100, 5000, imm=0xCAFE)
    qa.post_send(3, ma, 5100, 0)
    net.Wire(a, b, policy=random_policy(2, loss=0.1, reorder_ns=500)).run()
    recv = b.poll_cq()
    assert [(c.wr_id, c.opcode, c.status, c.byte_len, c.imm) for c in recv] == [
        (100, WcOpcode.RECV, WcStatus.SUCCESS, 100, None),
        (101, WcOpcode.RECV, WcStatus.SUCCESS, 5000, 0xCAFE),
        (102, WcOpcode.RECV, WcStatus.SUCCESS, 0, None)]
    assert bufs[0][:100] == src[:100] and bufs[0][100:] == bytes(8092)
    assert bufs[1][:5000] == src[100:5100]
    assert [(c.wr_id, c.opcode, c.status) for c in a.poll_cq()] == [
        (1, WcOpcode.SEND, WcStatus.SUCCESS), (2, WcOpcode.SEND, WcStatus.SUCCESS),
        (3, WcOpcode.SEND, WcStatus.SUCCESS)]


def test_write_with_immediate_completes_at_the_responder(net):
    a, b, qa, qb = net.make_pair(SR)
    src = bytearray(range(256)) * 20
    dst = bytearray(len(src))
    ma, mb = a.register_mr(src), b.register_mr(dst)
    qb.post_recv(9, mb, 0, 0)
    qa.post_write(1, ma, 0, len(src), mb.addr, mb.rkey, imm=77)
    net.Wire(a, b).run()
    assert dst == src
    [c] = b.poll_cq()
    assert (c.wr_id, c.opcode, c.byte_len, c.imm) == (9, WcOpcode.RECV_RDMA_WITH_IMM, len(src), 77)


def test_receiver_not_ready_then_ready(net):
    a, b, qa, qb = net.make_pair(GBN, min_rnr_timer_ns=20_000)
    ma = a.register_mr(bytearray(b"hello" * 400))
    buf = bytearray(4096)
    mb = b.register_mr(buf)
    qa.post_send(1, ma, 0, 2000)
    w = net.Wire(a, b)
    w.run(until_ns=100_000)
    assert qa.counters.rnr_naks_received >= 2
    assert a.poll_cq() == [] and b.poll_cq() == []
    qb.post_recv(5, mb, 0, 4096)
    w.run()
    assert buf[:2000] == b"hello" * 400
    assert [c.status for c in a.poll_cq()] == [WcStatus.SUCCESS]
    assert [(c.wr_id, c.byte_len) for c in b.poll_cq()] == [(5, 2000)]


def test_rnr_retry_exceeded(net):
    a, b, qa, qb = net.make_pair(GBN, rnr_retry=2)
    ma = a.register_mr(bytearray(100))
    qa.post_send(1, ma, 0, 100)
    net.Wire(a, b).run()
    assert [c.status for c in a.poll_cq()] == [WcStatus.RNR_RETRY_EXC_ERR]
    assert qa.counters.rnr_naks_received == 3


def test_remote_access_error(net):
    a, b, qa, qb = net.make_pair(SR)
    ma = a.register_mr(bytearray(b"x" * 5000))
    dst = bytearray(4096)
    mb = b.register_mr(dst)
    qa.post_write(1, ma, 0, 5000, mb.addr, mb.rkey)  # runs past the end of the region
    qa.post_write(2, ma, 0, 10, mb.addr, mb.rkey + 1)  # never sent: flushed
    net.Wire(a, b).run()
    assert [(c.wr_id, c.status) for c in a.poll_cq()] == [
        (1, WcStatus.REM_ACCESS_ERR), (2, WcStatus.WR_FLUSH_ERR)]
    assert dst == bytes(4096)
    assert qa.state is QpState.ERROR


def test_send_longer_than_receive_buffer(net):
    a, b, qa, qb = net.make_pair(GBN)
    ma = a.register_mr(bytearray(3000))
    mb = b.register_mr(bytearray(3000))
    qb.post_recv(4, mb, 0, 1500)
    qa.post_send(1, ma, 0, 3000)
    net.Wire(a, b).run()
    assert [(c.wr_id, c.status) for c in b.poll_cq()] == [(4, WcStatus.LOC_LEN_ERR)]
    assert [(c.wr_id, c.status) for c in a.poll_cq()] == [(1, WcStatus.REM_INV_REQ_ERR)]


def test_sink_regions_move_data_without_storage(net):
    a, b, qa, qb = net.make_pair(SR)
    ma = a.register_mr(length=1 << 20)
    mb = b.register_mr(length=1 << 20)
    qa.post_write(1, ma, 0, 1 << 20, mb.addr, mb.rkey)
    net.Wire(a, b).run()
    assert [c.status for c in a.poll_cq()] == [WcStatus.SUCCESS]
    assert qb.counters.payload_bytes_delivered == 1 << 20


def test_coalesced_acks(net):
    a, b, qa, qb = net.make_pair(GBN, ack_every=4)
    ma = a.register_mr(bytearray(32 * 1024))
    mb = b.register_mr(bytearray(32 * 1024))
    qa.post_write(1, ma, 0, 32 * 1024, mb.addr, mb.rkey)
    w = net.Wire(a, b)
    w.run()
    acks = [roce.parse(f) for f in w.sent["ba"]]
    assert len(acks) == 32 // 4
    assert all(p.opcode == roce.Opcode.ACKNOWLEDGE for p in acks)
    last = acks[-1]
    assert last.psn == 31 and last.msn == 1 and last.syndrome >> 5 == 0
    c, d = qa.counters, qb.counters
    assert c.data_pkts_sent == d.data_pkts_received == 32
    assert c.data_bytes_sent == d.data_bytes_received == sum(len(f) for f in w.sent["ab"])
    assert d.acks_sent == c.acks_received == 8 and c.retransmitted_pkts == 0
    assert [c.status for c in a.poll_cq()] == [WcStatus.SUCCESS]


def test_bad_verbs_calls_raise_and_post_nothing(net):
    a, b, qa, qb = net.make_pair()
    ma = a.register_mr(bytearray(100))
    bad_calls = [
        lambda: qa.post_write(1, ma, 50, 51, 0, 1),  # beyond the region
        lambda: qa.post_send(1, ma, -1, 10),
        lambda: qa.post_write(1, ma, 0, 10, -5, 1),
        lambda: qa.post_send(1, ma, 0, 10, imm=1 << 32),
        lambda: qa.post_send(1, bytearray(10), 0, 10),  # not a registered region
        lambda: qb.post_recv(1, ma, 0, 101),
        lambda: a.create_qp(QpConfig(mtu=1000)),
        lambda: a.create_qp(QpConfig(priority=8)),
        lambda: Nic(net.MAC_A, net.IP_A, max_mtu=1024).create_qp(QpConfig(mtu=4096)),
        lambda: a.create_qp(qpn=qa.qpn),
        lambda: a.register_mr(b"immutable"),
        lambda: Nic("02:00", "10.0.0.1"),
        lambda: Nic("zz:00:00:00:00:01", "10.0.0.1"),
        lambda: Nic(net.MAC_A, "10.0.0.300"),
        lambda: a.create_qp().post_send(1, ma, 0, 1),  # not connected
        lambda: qa.connect(net.MAC_B, net.IP_B, 5, 0),  # already connected
    ]
    for call in bad_calls:
        with pytest.raises(VerbsError):
            call()
    assert qa.outstanding_wrs == 0 and a.poll_cq() == []
    assert a.poll_transmit(0) is None


def test_flow_entropy_is_the_udp_source_port_and_settable(net):
    a, b, qa, qb = net.make_pair(udp_sport=50_000)
    ma, mb = a.register_mr(bytearray(3000)), b.register_mr(bytearray(3000))
    qa.post_write(1, ma, 0, 3000, mb.addr, mb.rkey)
    first = a.poll_transmit(0)
    qa.set_entropy(50_001)  # e.g. a new flowlet path
    second = a.poll_transmit(1_000)
    assert roce.parse(first).sport == 50_000 and roce.parse(second).sport == 50_001
    w = net.Wire(a, b)
    w.inject("ab", first, 1_000)
    w.inject("ab", second, 1_100)
    w.run()
    assert [c.status for c in a.poll_cq()] == [WcStatus.SUCCESS]


def test_selective_repeat_places_packets_at_their_offset_before_the_hole_fills(net):
    """Frames delivered by hand with one PSN missing: the later packets' bytes are already
    in the destination buffer (placed on arrival, not held until the hole fills), the hole
    is still zero and nothing has completed; the missing packet then completes the WRITE."""
    mtu, npkts, hole = 1024, 8, 3
    a, b, qa, qb = net.make_pair(SR, psn_a=500, mtu=mtu)
    src = bytearray(random.Random(9).randbytes(npkts * mtu))
    dst = bytearray(len(src))
    ma, mb = a.register_mr(src), b.register_mr(dst)
    qb.post_recv(4, mb, 0, 0)
    qa.post_write(1, ma, 0, len(src), mb.addr, mb.rkey, imm=5)
    frames, now = [], 0
    while len(frames) < npkts:  # the requester's first transmissions, paced at line rate
        while (f := a.poll_transmit(now)) is not None:
            frames.append(f)
        now = a.next_wakeup(now)
    assert [roce.parse(f).psn for f in frames] == list(range(500, 500 + npkts))

    def acks_to_a(t: int) -> int:
        """Hand the responder's ACKs to the requester until it has nothing more to send."""
        while True:
            while (f := b.poll_transmit(t)) is not None:
                a.receive(f, t)
            nxt = b.next_wakeup(t)
            if nxt is None:
                return t
            t = nxt

    for f in frames[:hole] + frames[hole + 1:]:
        b.receive(f, now)
    now = acks_to_a(now)
    lo, hi = hole * mtu, (hole + 1) * mtu
    assert dst[:lo] == src[:lo]
    assert dst[hi:] == src[hi:]  # placed at their offsets while PSN 503 is still missing
    assert dst[lo:hi] == bytes(mtu)  # the hole
    assert b.poll_cq() == [] and a.poll_cq() == []  # nothing completed: not all of it is in
    assert qb.counters.out_of_order_received == npkts - hole - 1
    b.receive(frames[hole], now)
    acks_to_a(now)
    assert dst == src
    [rc] = b.poll_cq()
    assert (rc.wr_id, rc.opcode, rc.status, rc.byte_len, rc.imm) == (
        4, WcOpcode.RECV_RDMA_WITH_IMM, WcStatus.SUCCESS, len(src), 5)
    [wc] = a.poll_cq()
    assert (wc.wr_id, wc.status, wc.byte_len) == (1, WcStatus.SUCCESS, len(src))


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_a_python_subclass_of_each_algorithm_drives_a_queue_pair(net, name):
    """Every algorithm can be varied by subclassing it in Python (a user's variant, a test's
    recording one), also when the algorithms run compiled: the QP calls the override."""
    params_cls, _factory = ALGORITHMS[name]

    class Counting(type(create_cc(name, 100e9))):  # type: ignore[misc]
        acks = 0

        def on_ack(self, ack: AckInfo) -> None:
            self.acks += 1
            super().on_ack(ack)

    cc = Counting(100e9) if params_cls is None else Counting(100e9, params_cls())
    a, b, qa, qb, src, dst, _ = written(net, GBN, net.deliver_all, size=64_000, cc_a=cc)
    assert dst[4096:4096 + len(src)] == src
    assert [c.status for c in a.poll_cq()] == [WcStatus.SUCCESS] * 2
    assert cc.acks > 0 and cc.rate_bps > 0
