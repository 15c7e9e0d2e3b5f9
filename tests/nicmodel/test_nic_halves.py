"""The two halves of a queue pair and the loss detectors, alone: no Nic, no wire. Packets
in, Actions (completions, a control frame waiting, a fatal error) and frames out."""

from __future__ import annotations

from nicmodel import roce
from nicmodel.cc.base import LineRate
from nicmodel.counters import QpCounters
from nicmodel.loss_detection import DuplicateThreshold, NakOnly, Rack, detector_for
from nicmodel.requester import Requester, Sent
from nicmodel.responder import Responder
from nicmodel.verbs import Access, LossDetection, MemoryRegion, QpConfig, Reliability, WcOpcode, WcStatus

MAC_A, MAC_B = bytes.fromhex("020000000001"), bytes.fromhex("020000000002")
IP_A, IP_B = bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])


def halves(cfg: QpConfig | None = None):
    cfg = cfg or QpConfig()
    req = Requester(0x11, cfg, LineRate(100e9), 100e9, QpCounters())
    req.template = roce.FrameTemplate(MAC_A, MAC_B, IP_A, IP_B, 0xC000, 26, roce.ECN_ECT0)
    req.dest_qpn = 0x22
    dst = MemoryRegion(0x100, 0x1000, 4096, bytearray(4096), Access.ALL)
    rsp = Responder(0x22, cfg, QpCounters(), {dst.rkey: dst}, 50_000, None)
    rsp.ctrl_template = roce.FrameTemplate(MAC_B, MAC_A, IP_B, IP_A, 0xC000, 26, roce.ECN_NOT_ECT)
    rsp.dest_qpn = 0x11
    src = MemoryRegion(0x200, 0x9000, 4096, bytearray(b"\x5a" * 4096), Access.ALL)
    return req, rsp, src, dst


def test_a_write_round_trip_between_the_halves_returns_actions():
    req, rsp, src, dst = halves()
    req.post(7, True, src, 0, 2048, dst.addr, dst.rkey, None)
    frames = [req.next_data_frame(t) for t in (0, 100)]
    assert req.next_data_frame(200) is None and req.inflight_bytes > 0
    first = rsp.on_data(roce.parse(frames[0]), 1_000)
    assert first.completions == [] and not first.control  # ACKs coalesce (ack_every 4)
    last = rsp.on_data(roce.parse(frames[1]), 1_100)
    assert last.control and last.completions == []  # message end: an ACK waits
    assert dst.buf[:2048] == src.buf[:2048]
    ack = rsp.next_control_frame()
    assert not rsp.has_control()
    done = req.on_ack(roce.parse(ack), 2_000)
    assert not done.fatal
    assert [(c.wr_id, c.status, c.opcode, c.byte_len) for c in done.completions] == [
        (7, WcStatus.SUCCESS, WcOpcode.RDMA_WRITE, 2048)]
    assert req.inflight_bytes == 0 and req.rto_deadline is None


def test_a_remote_access_nak_is_fatal_for_the_requester():
    req, rsp, src, dst = halves()
    req.post(1, True, src, 0, 64, dst.addr, dst.rkey + 1, None)  # unknown rkey
    req.post(2, True, src, 0, 64, dst.addr, dst.rkey, None)
    out = rsp.on_data(roce.parse(req.next_data_frame(0)), 1_000)
    assert out.control
    nak = roce.parse(rsp.next_control_frame())
    assert nak.syndrome == roce.SYN_NAK | roce.NAK_REMOTE_ACCESS
    failed = req.on_ack(nak, 2_000)
    assert failed.fatal
    assert [(c.wr_id, c.status) for c in failed.completions] == [
        (1, WcStatus.REM_ACCESS_ERR), (2, WcStatus.WR_FLUSH_ERR)]
    assert not req.has_data()


def test_a_responder_flush_completes_every_receive_wqe():
    _req, rsp, _src, dst = halves()
    rsp.recv_wqes.extend([(1, dst, 0, 64), (2, dst, 64, 64)])
    assert [(c.wr_id, c.status) for c in rsp.flush(5)] == [
        (1, WcStatus.WR_FLUSH_ERR), (2, WcStatus.WR_FLUSH_ERR)]
    assert not rsp.recv_wqes


def test_detector_follows_the_settings():
    sr = Reliability.SELECTIVE_REPEAT
    assert type(detector_for(QpConfig(), QpCounters())) is NakOnly
    assert isinstance(detector_for(QpConfig(reliability=sr), QpCounters()), Rack)
    count = QpConfig(reliability=sr, loss_detection=LossDetection.COUNT)
    assert isinstance(detector_for(count, QpCounters()), DuplicateThreshold)


def test_duplicate_threshold_judges_each_hole_once():
    d = DuplicateThreshold(3, 0)
    assert list(d.after_sack(high_sack=2, snd_una=0, snd_nxt=10)) == []  # 2 - 3 + 1 = 0
    # PSN 5 SACKed: holes up to 5 - 3 = 2 are lost
    assert list(d.after_sack(high_sack=5, snd_una=0, snd_nxt=10)) == [0, 1, 2]
    assert list(d.after_sack(high_sack=6, snd_una=0, snd_nxt=10)) == [3]  # not 0..2 again
    d.on_rewind(2, keep_sacked=False)  # an RNR rewind forgot the SACKs: judge from 2 again
    assert list(d.after_sack(high_sack=6, snd_una=2, snd_nxt=10)) == [2, 3]


def test_rack_loses_a_hole_only_after_the_reorder_window():
    rack = Rack(reorder_window_rtt=1.0, base_rtt_ns=10_000, first_seq=0, counters=QpCounters())
    sent = {s: Sent(1000, 100 * s) for s in range(3)}  # sent at 0, 100, 200 ns
    for s in sent:
        rack.on_sent(s, retransmit=False)
    rack.on_delivered(2, sent[2], now_ns=10_200, min_rtt=None)  # RTT 10 us, 0 and 1 behind
    args = (sent, 10_000, 1_000_000, 0, 3)  # min RTT, RTO, snd_una, snd_max
    # wait = RTT of the delivered packet (10 us) + window (1 min RTT = 10 us)
    assert rack.after_ack(10_200, *args) == [] and rack.deadline == 20_000
    assert rack.on_timer(20_050, *args) == [0] and rack.deadline == 20_100
    assert rack.on_timer(20_100, *args) == [1] and rack.deadline is None
