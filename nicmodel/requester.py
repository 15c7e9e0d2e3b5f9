"""The requester: the sending half of an RC queue pair (HPCC's ns-3 model calls it
RdmaQueuePair). It segments posted messages into packets, paces them by its congestion
control, keeps what is in flight, and recovers losses:

* Go-Back-N: on a PSN-sequence NAK it rewinds ``snd_nxt`` to the NAKed PSN and resends
  everything from there.
* Selective repeat: SACKs mark what arrived; it resends only holes its loss detector
  (nicmodel/loss_detection.py) judges lost, and on a timeout every un-SACKed packet.

Sequence numbers inside are absolute (they never wrap, see nicmodel/psn.py); only the BTH
carries them modulo 2^24. Sans-IO: every event handler returns an ``Actions`` (completions,
fatal error) and frames are pulled with ``next_data_frame``; it knows no NIC.
"""

from __future__ import annotations

import heapq
from bisect import bisect_right
from typing import Final

from netbase.ethernet import wire_time_ns
from nicmodel import roce
from nicmodel.actions import Actions
from nicmodel.cc.base import AckInfo, CongestionControl
from nicmodel.counters import QpCounters
from nicmodel.loss_detection import Sent, detector_for
from nicmodel.psn import PSN_WINDOW, unwrap
from nicmodel.verbs import Completion, MemoryRegion, QpConfig, Reliability, WcOpcode, WcStatus

HEADER_BYTES: Final = roce.DATA_HEADER_BYTES
# heapq's functions from module Finals (see nic.py)
_heappush: Final = heapq.heappush
_heappop: Final = heapq.heappop
_ZEROS: Final = bytes(4096)
_PADS: Final = (b"", b"\0", b"\0\0", b"\0\0\0")
_NAK_STATUS: Final = {
    roce.NAK_INVALID_REQUEST: WcStatus.REM_INV_REQ_ERR,
    roce.NAK_REMOTE_ACCESS: WcStatus.REM_ACCESS_ERR,
    roce.NAK_REMOTE_OPERATIONAL: WcStatus.REM_OP_ERR,
}


class SendWqe:
    """A posted SEND or RDMA WRITE and the PSN range it was given."""

    __slots__ = ("wr_id", "is_write", "buf", "offset", "length", "remote_addr", "rkey", "imm",
                 "first_seq", "npkts", "ops")

    def __init__(self, wr_id: int, is_write: bool, mr: MemoryRegion, offset: int, length: int,
                 remote_addr: int, rkey: int, imm: int | None, first_seq: int, mtu: int) -> None:
        self.wr_id = wr_id
        self.is_write = is_write
        self.buf = mr.buf  # the region's bytes (None: a sink), read for every packet sent
        self.offset = offset
        self.length = length
        self.remote_addr = remote_addr
        self.rkey = rkey
        self.imm = imm
        self.first_seq = first_seq
        self.npkts = max(1, -(-length // mtu))
        if is_write:
            self.ops = roce.WRITE_IMM_OPS if imm is not None else roce.WRITE_OPS
        else:
            self.ops = roce.SEND_IMM_OPS if imm is not None else roce.SEND_OPS

    @property
    def wc_opcode(self) -> WcOpcode:
        return WcOpcode.RDMA_WRITE if self.is_write else WcOpcode.SEND


class Requester:
    """Send side of one RC queue pair. ``template`` and ``dest_qpn`` are set when the queue
    pair connects; until then nothing is posted."""

    def __init__(self, qpn: int, config: QpConfig, cc: CongestionControl, line_rate_bps: float,
                 counters: QpCounters) -> None:
        self.qpn = qpn
        self.config = config
        self.cc = cc
        self.counters = counters
        self.mtu = config.mtu
        # read for every packet sent or ACK: the settings' (an interpreted class's) by name each
        # time, the base timeout through an interpreted method
        self._pkey = config.pkey
        self._ack_every = config.ack_every
        self._base_rto_ns = config.base_rto_ns()
        self._rto_max_ns = config.rto_max_ns
        self.sr = config.reliability is Reliability.SELECTIVE_REPEAT
        if config.inflight_cap_bytes is not None:
            self.inflight_cap = float(config.inflight_cap_bytes)
        elif self.sr:
            self.inflight_cap = line_rate_bps * config.base_rtt_ns / 8e9
        else:
            self.inflight_cap = float("inf")
        self.detector = detector_for(config, counters)
        self.template: roce.FrameTemplate | None = None
        self.dest_qpn = 0
        s0 = config.initial_psn
        self._wqes: list[SendWqe] = []
        self._starts: list[int] = []
        self._head = 0  # first WQE not yet completed
        self._cursor = 0  # WQE holding snd_max (the next new packet)
        self._post_end = s0  # first sequence number not yet given to a WQE
        self.snd_una = s0
        self.snd_nxt = s0
        self.snd_max = s0
        self._sent: dict[int, Sent] = {}
        self.inflight_bytes = 0
        self._sacked: set[int] = set()
        self._rtx: list[int] = []  # heap of holes to resend (SR)
        self._rtx_set: set[int] = set()
        self._high_sack = s0 - 1
        self.min_rtt: int | None = None
        self.rto_deadline: int | None = None
        self._backoff = 0
        self._retries = 0
        self._rnr_retries = 0
        self.rnr_until: int | None = None
        self.next_send_ns = 0
        self._ackreq_seq = s0 - 1  # newest packet sent with the AckReq bit

    # ------------------------------------------------------------------ posting

    def post(self, wr_id: int, is_write: bool, mr: MemoryRegion, offset: int, length: int,
             remote_addr: int, rkey: int, imm: int | None) -> None:
        """Queue a checked work request; its packets get the next sequence numbers."""
        w = SendWqe(wr_id, is_write, mr, offset, length, remote_addr, rkey, imm,
                    self._post_end, self.mtu)
        self._wqes.append(w)
        self._starts.append(w.first_seq)
        self._post_end += w.npkts

    @property
    def outstanding_wrs(self) -> int:
        return len(self._wqes) - self._head

    # ------------------------------------------------------------------ transmit

    def has_data(self) -> bool:
        """Something to (re)send, ignoring pacing, window and pause."""
        return bool(self._rtx) or self.snd_nxt < self.snd_max or self._may_send_new()

    def _may_send_new(self) -> bool:
        """A new packet is posted and fits the PSN window: at most 2^23 packets may be
        unacknowledged (IBA vol. 1 ch. 9.7: the responder tells new PSNs from duplicates by which
        half of the 24-bit space they fall in)."""
        return self.snd_max < self._post_end and self.snd_max - self.snd_una < PSN_WINDOW

    def window_open(self) -> bool:
        """A full-sized packet fits the window (always true with nothing in flight)."""
        return self.inflight_bytes == 0 or self._fits(self.inflight_bytes)

    def _fits(self, inflight: int) -> bool:
        w = self.cc.window_bytes
        cap = self.inflight_cap if w is None else min(w, self.inflight_cap)
        return inflight + HEADER_BYTES + self.mtu <= cap

    def send_ready_at(self) -> int | None:
        """Earliest time the next data packet may leave (pacing, RNR wait), or None when
        there is nothing to send or the window is closed (an ACK will reopen it)."""
        if not self.has_data() or not self.window_open():
            return None
        t = self.next_send_ns
        if self.rnr_until is not None and self.rnr_until > t:
            t = self.rnr_until
        return t

    def next_data_frame(self, now_ns: int) -> bytes | None:
        """Build the next data packet: SR holes first, then a Go-Back-N rewind range, then
        new data. The caller checked pacing, pause and window."""
        seq = -1
        while self._rtx:
            s = _heappop(self._rtx)
            self._rtx_set.discard(s)
            if s >= self.snd_una and s not in self._sacked:
                seq = s
                break
        if seq < 0:
            while self.snd_nxt < self.snd_max and self.snd_nxt in self._sacked:
                self.snd_nxt += 1
            if self.snd_nxt < self.snd_max:
                seq = self.snd_nxt
                self.snd_nxt += 1
            elif self._may_send_new():
                seq = self.snd_max
                self.snd_max = self.snd_nxt = seq + 1
            else:
                return None
        return self._emit(seq, now_ns)

    def _emit(self, seq: int, now_ns: int) -> bytes:
        wqes = self._wqes
        c = self._cursor
        w = wqes[c] if c < len(wqes) else None
        if w is None or not w.first_seq <= seq < w.first_seq + w.npkts:
            c = bisect_right(self._starts, seq, self._head) - 1
            w = wqes[c]
        if seq + 1 == w.first_seq + w.npkts and seq + 1 == self.snd_max:
            self._cursor = c + 1
        i = seq - w.first_seq
        n = w.npkts
        ops = w.ops
        if n == 1:
            op = ops[3]
        elif i == 0:
            op = ops[0]
        elif i == n - 1:
            op = ops[2]
        else:
            op = ops[1]
        start = i * self.mtu
        plen = min(self.mtu, w.length - start)
        buf = w.buf
        if buf is None:
            payload = _ZEROS[:plen]  # sink region: zeros (the MTU is at most 4096)
        else:
            a = w.offset + start
            payload = bytes(buf[a:a + plen])
        pad = -plen & 3
        if pad:
            payload += _PADS[pad]
        ext = b""
        if op in roce.OP_HAS_RETH:
            ext = roce.pack_reth(w.remote_addr, w.rkey, w.length)
        if op in roce.OP_HAS_IMM:
            imm = w.imm
            assert imm is not None  # an opcode with ImmDt is chosen only for a WQE that has one
            ext += roce.pack_u32(imm)
        rec = self._sent.get(seq)
        retransmit = rec is not None
        size = HEADER_BYTES + len(ext) + len(payload)
        # Ask for an ACK at a message end, on a resend, and when this packet fills a window
        # smaller than ``ack_every`` packets while no ACK request is in flight: a responder
        # coalescing every ``ack_every`` packets (we assume the peer's setting is ours) would
        # otherwise wait for packets that cannot come. Larger windows always produce ACKs.
        after = self.inflight_bytes + (0 if rec is not None and rec.in_flight else size)
        ackreq = retransmit or op in roce.OP_ENDS or (
            self._ackreq_seq < self.snd_una
            and after < self._ack_every * (HEADER_BYTES + self.mtu)
            and not self._fits(after))
        if ackreq and seq > self._ackreq_seq:
            self._ackreq_seq = seq
        bth = roce.pack_bth(op, self.dest_qpn, seq, pad=pad, pkey=self._pkey,
                            ackreq=ackreq)
        frame = self.template.build(bth, ext, payload)  # type: ignore[union-attr]
        cnt = self.counters
        cnt.data_pkts_sent += 1
        cnt.data_bytes_sent += size
        if rec is not None:
            cnt.retransmitted_pkts += 1
            rec.retransmitted = True
            rec.sent_ns = now_ns
            if not rec.in_flight:
                rec.in_flight = True
                self.inflight_bytes += size
        else:
            self._sent[seq] = Sent(size, now_ns)
            self.inflight_bytes += size
        self.detector.on_sent(seq, retransmit)
        if self.rto_deadline is None:
            self.rto_deadline = now_ns + self.rto_ns()
        rate = self.cc.rate_bps
        if rate < 1000.0:
            rate = 1000.0
        self.next_send_ns = now_ns + int(wire_time_ns(size, rate))
        self.cc.on_packet_sent(now_ns, size, seq)
        return frame

    def rto_ns(self) -> int:
        """The retransmission timeout now: doubled per consecutive timeout, capped."""
        return min(self._base_rto_ns << self._backoff, self._rto_max_ns)

    def reorder_window_ns(self) -> int:
        return self.detector.window_ns(self.min_rtt, self.rto_ns())

    # ------------------------------------------------------------------ feedback

    def on_ack(self, p: roce.Packet, now_ns: int) -> Actions:
        """An ACK, NAK or RNR NAK addressed to this requester."""
        out = Actions()
        cnt = self.counters
        ext = roce.parse_ack_ext(p)
        syn = p.syndrome or 0
        kind = syn & roce.SYN_KIND_MASK
        if kind == roce.SYN_ACK:
            cnt.acks_received += 1
            upto = unwrap(p.psn, self.snd_una) + 1
        else:
            cnt.naks_received += 1
            upto = unwrap(p.psn, self.snd_una)
        if not self.snd_una <= upto <= self.snd_max:
            cnt.stale_acks += 1
            return out
        acked, rtt, high = self._ack_upto(upto, now_ns, out)
        if kind == roce.SYN_ACK and ext.sack_base is not None and self.sr:
            a2, r2, h2 = self._on_sack(ext.sack_base, ext.sack_bitmap, now_ns)
            acked += a2
            if r2 is not None and h2 > high:
                rtt, high = r2, h2
        if rtt is not None and (self.min_rtt is None or rtt < self.min_rtt):
            self.min_rtt = rtt
        det = self.detector
        if ext.dsack_psn is not None and det.on_duplicate_report(
                unwrap(ext.dsack_psn, self.snd_una), self.snd_una, self.snd_max):
            cnt.spurious_retransmits += 1
        self._mark_lost(det.after_ack(now_ns, self._sent, self.min_rtt, self.rto_ns(),
                                      self.snd_una, self.snd_max))
        self.cc.on_ack(AckInfo(now_ns, acked, rtt, p.becn, ext.hops,
                               max(self.snd_una - 1, self._high_sack), self.snd_nxt))
        if kind == roce.SYN_RNR:
            cnt.rnr_naks_received += 1
            self._rnr_retries += 1
            if self.config.rnr_retry != 7 and self._rnr_retries > self.config.rnr_retry:
                self._fail(WcStatus.RNR_RETRY_EXC_ERR, now_ns, out)
                return out
            self.rnr_until = now_ns + roce.RNR_TIMER_NS[syn & 0x1F]
            self._rewind(upto, keep_sacked=False)
            self.rto_deadline = self.rnr_until + self.rto_ns()
        elif kind == roce.SYN_NAK:
            code = syn & 0x1F
            if code == roce.NAK_PSN_SEQUENCE:
                if upto < self.snd_max:
                    self._rewind(upto, keep_sacked=True)
            else:
                self._fail(_NAK_STATUS.get(code, WcStatus.REM_OP_ERR), now_ns, out)
        return out

    def _ack_upto(self, upto: int, now_ns: int, out: Actions) -> tuple[int, int | None, int]:
        """Cumulative acknowledgement of everything below ``upto``: free the packets,
        complete finished WQEs, restart the timer. Returns (newly acked bytes, RTT sample,
        sequence number the sample belongs to)."""
        acked = 0
        rtt: int | None = None
        high = self.snd_una - 1
        if upto <= self.snd_una:
            return 0, None, high
        sent = self._sent
        sacked = self._sacked
        det = self.detector
        min_rtt = self.min_rtt
        for s in range(self.snd_una, upto):
            rec = sent.get(s)  # a probe and a deletion: compiled, ``pop`` is a call by name
            if rec is None:
                continue
            del sent[s]
            if s in sacked:
                sacked.discard(s)
                continue
            det.on_delivered(s, rec, now_ns, min_rtt)
            if rec.in_flight:
                self.inflight_bytes -= rec.size
            acked += rec.size
            if not rec.retransmitted:
                rtt = now_ns - rec.sent_ns
                high = s
        self.snd_una = upto
        if self.snd_nxt < upto:
            self.snd_nxt = upto
        det.on_cumulative(upto)
        self._retries = 0
        self._backoff = 0
        self._rnr_retries = 0
        self.rto_deadline = now_ns + self.rto_ns() if sent else None
        self._complete_wqes(now_ns, out)
        return acked, rtt, high

    def _on_sack(self, base_psn: int, bitmap: int, now_ns: int) -> tuple[int, int | None, int]:
        base = unwrap(base_psn, self.snd_una)
        if base != self.snd_una:
            return 0, None, -1
        acked = 0
        rtt: int | None = None
        high = -1
        sent = self._sent
        sacked = self._sacked
        det = self.detector
        min_rtt = self.min_rtt
        bm = bitmap
        while bm:
            low = bm & -bm
            s = base + low.bit_length()
            bm ^= low
            if s >= self.snd_max:
                break
            if s in sacked:
                continue
            rec = sent.get(s)
            if rec is None:
                continue
            sacked.add(s)
            det.on_delivered(s, rec, now_ns, min_rtt)
            if rec.in_flight:
                rec.in_flight = False
                self.inflight_bytes -= rec.size
            acked += rec.size
            if not rec.retransmitted:
                rtt = now_ns - rec.sent_ns
                high = s
            if s > self._high_sack:
                self._high_sack = s
        for h in det.after_sack(self._high_sack, self.snd_una, self.snd_nxt):
            if h in sacked or h in self._rtx_set or h >= self.snd_nxt:
                continue
            rec = sent.get(h)
            if rec is not None:
                self._lost(h, rec)
        return acked, rtt, high

    def _mark_lost(self, seqs: list[int]) -> None:
        sent = self._sent
        for s in seqs:
            self._lost(s, sent[s])

    def _lost(self, seq: int, rec: Sent) -> None:
        """Queue ``seq`` for a resend; it no longer counts as in flight."""
        if rec.in_flight:
            rec.in_flight = False
            self.inflight_bytes -= rec.size
        _heappush(self._rtx, seq)
        self._rtx_set.add(seq)

    def _rewind(self, seq: int, keep_sacked: bool) -> None:
        """Resend from ``seq`` onward (Go-Back-N recovery, RNR retry, SR timeout)."""
        det = self.detector
        for s in range(seq, self.snd_max):
            rec = self._sent.get(s)
            if rec is not None and rec.in_flight:
                rec.in_flight = False
                self.inflight_bytes -= rec.size
            det.on_forget(s)  # resent in sequence from snd_nxt: no verdict needed
        if not keep_sacked:
            for s in [s for s in self._sacked if s >= seq]:
                self._sacked.discard(s)
            self._high_sack = seq - 1
        det.on_rewind(seq, keep_sacked)
        self._rtx.clear()
        self._rtx_set.clear()
        if seq < self.snd_nxt:
            self.snd_nxt = seq

    def on_cnp(self, now_ns: int) -> None:
        """A CNP for this QP (reaction point of DCQCN)."""
        self.counters.cnps_received += 1
        self.cc.on_cnp(now_ns)

    def _complete_wqes(self, now_ns: int, out: Actions) -> None:
        una = self.snd_una
        wqes = self._wqes
        h = self._head
        while h < len(wqes) and wqes[h].first_seq + wqes[h].npkts <= una:
            w = wqes[h]
            out.completions.append(Completion(w.wr_id, self.qpn, WcStatus.SUCCESS, w.wc_opcode,
                                              w.length, now_ns))
            self.counters.messages_sent += 1
            h += 1
        if h > 256 and h * 2 > len(wqes):
            del wqes[:h]
            del self._starts[:h]
            self._cursor -= h
            h = 0
        self._head = h

    def _fail(self, status: WcStatus, now_ns: int, out: Actions) -> None:
        """Fatal error: the WQE at the head completes with ``status``, the rest are flushed
        (IBA 10.3.1: a requester error is not recoverable; the QP enters ERROR)."""
        first = True
        for w in self._wqes[self._head:]:
            st = status if first else WcStatus.WR_FLUSH_ERR
            out.completions.append(Completion(w.wr_id, self.qpn, st, w.wc_opcode, 0, now_ns))
            first = False
        out.fatal = True
        self._wqes.clear()
        self._starts.clear()
        self._head = self._cursor = 0
        self._sent.clear()
        self._sacked.clear()
        self.detector.clear()
        self._rtx.clear()
        self._rtx_set.clear()
        self.inflight_bytes = 0
        self.snd_una = self.snd_nxt = self.snd_max = self._post_end
        self.rto_deadline = None
        self.rnr_until = None

    # ------------------------------------------------------------------ timers

    def next_timer(self) -> int | None:
        """Earliest of the retransmission, loss-detection and congestion-control timers."""
        t = self.rto_deadline
        r = self.detector.deadline
        if r is not None and (t is None or r < t):
            t = r
        c = self.cc.next_timer()
        if c is not None and (t is None or c < t):
            t = c
        return t

    def run_timers(self, now_ns: int) -> Actions:
        out = Actions()
        if self.rto_deadline is not None and now_ns >= self.rto_deadline:
            self.rto_deadline = None
            if self._sent:
                self._on_timeout(now_ns, out)
        det = self.detector
        if det.deadline is not None and now_ns >= det.deadline:
            self._mark_lost(det.on_timer(now_ns, self._sent, self.min_rtt, self.rto_ns(),
                                         self.snd_una, self.snd_max))
        c = self.cc.next_timer()
        if c is not None and now_ns >= c:
            self.cc.on_timer(now_ns)
        if self.rnr_until is not None and now_ns >= self.rnr_until:
            self.rnr_until = None
        return out

    def _on_timeout(self, now_ns: int, out: Actions) -> None:
        """The retransmission timer fired: back off, resend, or give up after retry_count."""
        self.counters.timeouts += 1
        self._retries += 1
        if self._retries > self.config.retry_count:
            self._fail(WcStatus.RETRY_EXC_ERR, now_ns, out)
            return
        self.cc.on_timeout(now_ns)
        if self._backoff < 30 and self.config.rto_backoff:
            self._backoff += 1
        self._rewind(self.snd_una, keep_sacked=self.sr)
        self.rto_deadline = now_ns + self.rto_ns()
