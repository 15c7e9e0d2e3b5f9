"""One RC queue pair: the requester (sends messages, recovers losses) and the responder
(accepts packets, places data, acknowledges), in the reliability mode of the QP.

Sequence numbers inside are absolute (they never wrap, see nicmodel/psn.py); only the BTH
carries them modulo 2^24. Both modes share one requester and one responder; the
differences are a handful of branches:

* Go-Back-N: the responder drops out-of-order packets and sends one PSN-sequence NAK per
  gap; the requester rewinds ``snd_nxt`` to the NAKed PSN and resends everything from there.
* Selective repeat: the responder keeps out-of-order packets (WRITE payloads go straight to
  memory when the message's RETH is known, otherwise they are held), tracks them in a bitmap
  relative to the expected PSN and sends a SACK with every out-of-order arrival (and a
  duplicate report when a packet arrives twice); the requester resends only holes it judges
  lost, and the retransmission timeout resends every un-SACKed packet. Loss detection
  (``QpConfig.loss_detection``):

  - RACK (RFC 8985), the default: a hole is lost once a packet *sent after it* has been
    (S)ACKed and the hole is overdue by more than the reorder window, i.e. ``now >= its send
    time + RTT of that later packet + reo_wnd``; a timer fires when that moment comes.
    ``reo_wnd`` starts at ``reorder_window_rtt`` minimum RTTs; when a duplicate report shows
    that a resend was spurious it grows by that step (once per round trip) and at once to
    9/8 of the longest lateness measured, kept for 16 loss episodes, never beyond half the
    RTO. Sprayed packets overtake each other by up to the delay spread between paths, so
    the rule that tolerates spraying is one in time; a lost resend is detected the same way
    (no RTO needed).
  - COUNT: a hole is lost once a PSN ``sack_reorder_threshold`` above it is SACKed
    (classic duplicate threshold; fine when a flow keeps to one path).

Messages complete in PSN order at both ends (verbs semantics), so receive WQEs are consumed
in order even when packets are placed early.
"""

from __future__ import annotations

import heapq
import struct
from bisect import bisect_right
from collections import OrderedDict, deque
from typing import TYPE_CHECKING

from netbase.ethernet import wire_time_ns
from nicmodel import int_md, roce
from nicmodel.cc.base import AckInfo, CongestionControl
from nicmodel.counters import QpCounters
from nicmodel.psn import to_wire, unwrap
from nicmodel.verbs import (
    Access,
    Completion,
    LossDetection,
    MemoryRegion,
    QpConfig,
    QpState,
    Reliability,
    VerbsError,
    WcOpcode,
    WcStatus,
    parse_ip,
    parse_mac,
)

if TYPE_CHECKING:
    from nicmodel.nic import Nic

_U32 = struct.Struct("!I")
_HDR = roce.ETH_HLEN + roce.IPV4_HLEN + roce.UDP_HLEN + roce.BTH_LEN + roce.ICRC_LEN
_ZEROS = bytes(4096)
_PADS = (b"", b"\0", b"\0\0", b"\0\0\0")
_REO_PERSIST = 16  # RFC 8985: loss episodes a widened reorder window is kept for
_RTX_LOG = 256  # recent resends remembered to match duplicate reports against
_NAK_STATUS = {
    roce.NAK_INVALID_REQUEST: WcStatus.REM_INV_REQ_ERR,
    roce.NAK_REMOTE_ACCESS: WcStatus.REM_ACCESS_ERR,
    roce.NAK_REMOTE_OPERATIONAL: WcStatus.REM_OP_ERR,
}


class _SendWqe:
    """A posted SEND or RDMA WRITE and the PSN range it was given."""

    __slots__ = ("wr_id", "is_write", "mr", "offset", "length", "remote_addr", "rkey", "imm",
                 "first_seq", "npkts", "ops")

    def __init__(self, wr_id: int, is_write: bool, mr: MemoryRegion, offset: int, length: int,
                 remote_addr: int, rkey: int, imm: int | None, first_seq: int, mtu: int) -> None:
        self.wr_id = wr_id
        self.is_write = is_write
        self.mr = mr
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


class _Sent:
    """Requester bookkeeping of one transmitted, not yet acknowledged packet."""

    __slots__ = ("size", "sent_ns", "first_ns", "retransmitted", "in_flight")

    def __init__(self, size: int, sent_ns: int) -> None:
        self.size = size
        self.sent_ns = sent_ns  # latest transmission
        self.first_ns = sent_ns
        self.retransmitted = False
        self.in_flight = True


class _Held:
    """Responder record of a packet received beyond the expected PSN (selective repeat)."""

    __slots__ = ("opcode", "reth", "imm", "payload", "length", "placed")

    def __init__(self, opcode: int, reth: tuple[int, int, int] | None, imm: int | None,
                 payload: bytes, placed: bool) -> None:
        self.opcode = opcode
        self.reth = reth
        self.imm = imm
        self.length = len(payload)
        self.payload = b"" if placed else payload  # placed data already lives in memory
        self.placed = placed


class _Span:
    """PSN range of one WRITE message whose RETH the responder has seen: where its packets
    go in memory (used to place out-of-order middle/last packets on arrival)."""

    __slots__ = ("first", "end", "mr", "base", "length")

    def __init__(self, first: int, end: int, mr: MemoryRegion, base: int, length: int) -> None:
        self.first = first
        self.end = end
        self.mr = mr
        self.base = base
        self.length = length


class QueuePair:
    """An RC queue pair. Create it with :meth:`Nic.create_qp`, then :meth:`connect`, then
    post work requests; the NIC's driver interface moves the packets."""

    def __init__(self, nic: Nic, qpn: int, config: QpConfig, cc: CongestionControl) -> None:
        config.validate()
        self.nic = nic
        self.qpn = qpn
        self.config = config
        self.cc = cc
        self.state = QpState.RESET
        self.counters = QpCounters()
        self.mtu = config.mtu
        self.sr = config.reliability is Reliability.SELECTIVE_REPEAT
        self.priority = config.priority
        self.udp_sport = config.udp_sport or (0xC000 | ((qpn * 2654435761) >> 7 & 0x3FFF))
        self.dest_mac = b""
        self.dest_ip = b""
        self.dest_qpn = 0
        self._tmpl_data: roce.FrameTemplate | None = None
        self._tmpl_ctrl: roce.FrameTemplate | None = None
        self._tmpl_cnp: roce.FrameTemplate | None = None
        if config.inflight_cap_bytes is not None:
            self.inflight_cap = float(config.inflight_cap_bytes)
        elif self.sr:
            self.inflight_cap = nic.line_rate_bps * config.base_rtt_ns / 8e9
        else:
            self.inflight_cap = float("inf")
        # requester
        s0 = config.initial_psn
        self._wqes: list[_SendWqe] = []
        self._starts: list[int] = []
        self._head = 0  # first WQE not yet completed
        self._cursor = 0  # WQE holding snd_max (the next new packet)
        self._post_end = s0  # first sequence number not yet given to a WQE
        self.snd_una = s0
        self.snd_nxt = s0
        self.snd_max = s0
        self._sent: dict[int, _Sent] = {}
        self.inflight_bytes = 0
        self._sacked: set[int] = set()
        self._rtx: list[int] = []  # heap of holes to resend (SR)
        self._rtx_set: set[int] = set()
        self._loss_scan = s0
        self._high_sack = s0 - 1
        # RACK (selective repeat with time-based loss detection): un-SACKed packets in flight
        # in the order they were (re)sent, the newest send known delivered (time, sequence
        # number, its RTT), the reorder window and its adaptation, the reorder timer
        self.rack = self.sr and config.loss_detection is LossDetection.RACK
        self._order: OrderedDict[int, None] = OrderedDict()
        self._rack_sent = -1
        self._rack_seq = -1
        self._rack_rtt = 0
        self._min_rtt: int | None = None
        self._reo_mult = 1
        self._reo_floor = 0  # window floor set from measured lateness on spurious resends
        self._late_max = 0  # longest a packet came behind a later-sent one, this period
        self._reo_persist = 0
        self._dsack_round = s0  # the window grows at most once until snd_una passes this
        self._episode_end = s0  # losses below this belong to the current loss episode
        self._rtx_log: deque[int] = deque(maxlen=_RTX_LOG)
        self.reo_deadline: int | None = None
        self.rto_deadline: int | None = None
        self._backoff = 0
        self._retries = 0
        self._rnr_retries = 0
        self.rnr_until: int | None = None
        self.next_send_ns = 0
        self._ackreq_seq = s0 - 1  # newest packet sent with the AckReq bit
        # scheduler bookkeeping, owned by the Nic: the time and tag of this QP's live entry
        # in the Nic's data and timer heaps, and whether it sits in the control queue
        self.sched_data: tuple[int, int] | None = None
        self.sched_timer: tuple[int, int] | None = None
        self.in_ctrl = False
        # responder
        self.epsn = 0
        self.msn = 0
        self._recv_wqes: deque[tuple[int, MemoryRegion, int, int]] = deque()
        self._in_msg = False
        self._msg_write = False
        self._msg_mr: MemoryRegion | None = None
        self._msg_off = 0
        self._msg_left = 0
        self._msg_bytes = 0
        self._msg_recv: tuple[int, MemoryRegion, int, int] | None = None
        self._ooo: dict[int, _Held] = {}
        self._ooo_mask = 0  # bit i = sequence number epsn + i received
        self._spans: list[_Span] = []
        self._unacked = 0
        self._ack_pending = False
        self._nak: int | None = None  # syndrome of a NAK to send
        self._nak_sent = False  # a PSN-sequence NAK went out for the current gap
        self._ce_since_ack = False
        self._int_echo: int_md.IntStack | None = None
        self._dup_seq: int | None = None  # SR: a duplicate to report in the next ACK
        self._cnp_pending = False
        self._last_cnp_ns: int | None = None

    # ------------------------------------------------------------------ verbs

    def connect(self, dest_mac: bytes | str, dest_ip: bytes | str, dest_qpn: int, dest_psn: int) -> None:
        """Bring the QP to RTS towards the remote QP ``dest_qpn`` whose first PSN is
        ``dest_psn`` (what ibv_modify_qp to RTR/RTS sets). Addresses as ``Nic`` takes them:
        bytes, or ``"02:00:00:00:00:01"`` / ``"10.0.0.1"``."""
        dest_mac, dest_ip = parse_mac(dest_mac), parse_ip(dest_ip)
        if not 0 <= dest_qpn < 1 << 24 or not 0 <= dest_psn < 1 << 24:
            raise VerbsError("destination QPN and PSN must fit 24 bits")
        if self.state is not QpState.RESET:
            raise VerbsError(f"QP {self.qpn} is already {self.state.value}")
        self.dest_mac = dest_mac
        self.dest_ip = dest_ip
        self.dest_qpn = dest_qpn
        self.epsn = dest_psn
        self._build_templates()
        self.state = QpState.RTS

    def set_entropy(self, udp_sport: int) -> None:
        """Change the UDP source port (flow entropy the fabric hashes on) from now on."""
        if not 0 < udp_sport < 65536:
            raise VerbsError(f"UDP source port {udp_sport}")
        self.udp_sport = udp_sport
        if self.dest_mac:
            self._build_templates()

    def _build_templates(self) -> None:
        nic, c = self.nic, self.config
        ecn = roce.ECN_ECT0 if c.ecn else roce.ECN_NOT_ECT
        self._tmpl_data = roce.FrameTemplate(nic.mac, self.dest_mac, nic.ip, self.dest_ip,
                                             self.udp_sport, c.dscp, ecn)
        self._tmpl_ctrl = roce.FrameTemplate(nic.mac, self.dest_mac, nic.ip, self.dest_ip,
                                             self.udp_sport, c.dscp, roce.ECN_NOT_ECT)
        self._tmpl_cnp = roce.FrameTemplate(nic.mac, self.dest_mac, nic.ip, self.dest_ip,
                                            self.udp_sport, nic.cnp_dscp, roce.ECN_NOT_ECT)

    def post_write(self, wr_id: int, mr: MemoryRegion, offset: int, length: int,
                   remote_addr: int, rkey: int, imm: int | None = None) -> None:
        """RDMA WRITE ``length`` bytes from ``mr[offset:]`` to the remote ``remote_addr``
        under ``rkey``; with ``imm`` it is WRITE-with-immediate (consumes a remote receive
        WQE and completes there as RECV_RDMA_WITH_IMM)."""
        self._post(wr_id, True, mr, offset, length, remote_addr, rkey, imm)

    def post_send(self, wr_id: int, mr: MemoryRegion, offset: int, length: int,
                  imm: int | None = None) -> None:
        """SEND ``length`` bytes from ``mr[offset:]``; the remote consumes a receive WQE."""
        self._post(wr_id, False, mr, offset, length, 0, 0, imm)

    def post_recv(self, wr_id: int, mr: MemoryRegion, offset: int, length: int) -> None:
        """Post a receive WQE: the next incoming SEND lands in ``mr[offset:offset+length]``."""
        self._check_range(mr, offset, length)
        if self.state is QpState.ERROR:
            self.nic.complete(Completion(wr_id, self.qpn, WcStatus.WR_FLUSH_ERR, WcOpcode.RECV,
                                         0, self.nic.now_ns))
            return
        self._recv_wqes.append((wr_id, mr, offset, length))

    def _post(self, wr_id: int, is_write: bool, mr: MemoryRegion, offset: int, length: int,
              remote_addr: int, rkey: int, imm: int | None) -> None:
        self._check_range(mr, offset, length)
        if imm is not None and not 0 <= imm < 1 << 32:
            raise VerbsError("immediate data must fit 32 bits")
        if is_write and not (0 <= remote_addr < 1 << 64 and 0 <= rkey < 1 << 32):
            raise VerbsError("remote address must fit 64 bits and rkey 32 bits")
        if length >= 1 << 31:
            raise VerbsError("message length must be below 2 GiB")
        if self.state is QpState.RESET:
            raise VerbsError(f"QP {self.qpn} is not connected")
        if self.state is QpState.ERROR:
            op = WcOpcode.RDMA_WRITE if is_write else WcOpcode.SEND
            self.nic.complete(Completion(wr_id, self.qpn, WcStatus.WR_FLUSH_ERR, op, 0,
                                         self.nic.now_ns))
            return
        w = _SendWqe(wr_id, is_write, mr, offset, length, remote_addr, rkey, imm,
                     self._post_end, self.mtu)
        self._wqes.append(w)
        self._starts.append(w.first_seq)
        self._post_end += w.npkts
        self.nic.touch(self)

    @staticmethod
    def _check_range(mr: MemoryRegion, offset: int, length: int) -> None:
        if not isinstance(mr, MemoryRegion):
            raise VerbsError("work requests name a registered MemoryRegion")
        if offset < 0 or length < 0 or offset + length > mr.length:
            raise VerbsError(f"[{offset}, {offset + length}) is outside the {mr.length}-byte region")

    @property
    def outstanding_wrs(self) -> int:
        """Posted send work requests not yet completed."""
        return len(self._wqes) - self._head

    # ------------------------------------------------------------------ requester: transmit

    def has_data(self) -> bool:
        """Something to (re)send, ignoring pacing, window and pause."""
        return self.state is QpState.RTS and (
            bool(self._rtx) or self.snd_nxt < self.snd_max or self.snd_max < self._post_end)

    def window_open(self) -> bool:
        """A full-sized packet fits the window (always true with nothing in flight)."""
        return self.inflight_bytes == 0 or self._fits(self.inflight_bytes)

    def _fits(self, inflight: int) -> bool:
        w = self.cc.window_bytes
        cap = self.inflight_cap if w is None else min(w, self.inflight_cap)
        return inflight + _HDR + self.mtu <= cap

    def send_ready_at(self, now_ns: int) -> int | None:
        """Earliest time the next data packet may leave (pacing, RNR wait), or None when the
        QP has nothing to send or its window is closed (an ACK will reopen it)."""
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
            s = heapq.heappop(self._rtx)
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
            elif self.snd_max < self._post_end:
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
        buf = w.mr.buf
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
            ext += _U32.pack(w.imm)
        rec = self._sent.get(seq)
        retransmit = rec is not None
        size = _HDR + len(ext) + len(payload)
        # Ask for an ACK at a message end, on a resend, and when this packet fills a window
        # smaller than ``ack_every`` packets while no ACK request is in flight: a responder
        # coalescing every ``ack_every`` packets (we assume the peer's setting is ours) would
        # otherwise wait for packets that cannot come. Larger windows always produce ACKs.
        after = self.inflight_bytes + (0 if retransmit and rec.in_flight else size)
        ackreq = retransmit or op in roce.OP_ENDS or (
            self._ackreq_seq < self.snd_una and after < self.config.ack_every * (_HDR + self.mtu)
            and not self._fits(after))
        if ackreq and seq > self._ackreq_seq:
            self._ackreq_seq = seq
        bth = roce.pack_bth(op, self.dest_qpn, seq, pad=pad, pkey=self.config.pkey,
                            ackreq=ackreq)
        frame = self._tmpl_data.build(bth, ext, payload)  # type: ignore[union-attr]
        cnt = self.counters
        cnt.data_pkts_sent += 1
        cnt.data_bytes_sent += size
        if retransmit:
            cnt.retransmitted_pkts += 1
            rec.retransmitted = True
            rec.sent_ns = now_ns
            if not rec.in_flight:
                rec.in_flight = True
                self.inflight_bytes += size
            if self.rack:
                self._rtx_log.append(seq)
                self._order.pop(seq, None)
        else:
            self._sent[seq] = _Sent(size, now_ns)
            self.inflight_bytes += size
        if self.rack:
            self._order[seq] = None
        if self.rto_deadline is None:
            self.rto_deadline = now_ns + self._rto()
        rate = self.cc.rate_bps
        if rate < 1000.0:
            rate = 1000.0
        self.next_send_ns = now_ns + int(wire_time_ns(size, rate))
        self.cc.on_packet_sent(now_ns, size, seq)
        return frame

    def _rto(self) -> int:
        return min(self.config.rto_ns << self._backoff, self.config.rto_max_ns)

    # ------------------------------------------------------------------ requester: feedback

    def on_ack(self, p: roce.Packet, now_ns: int) -> None:
        """An ACK, NAK or RNR NAK addressed to this QP's requester."""
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
            return
        acked, rtt, high = self._ack_upto(upto, now_ns)
        if kind == roce.SYN_ACK and ext.sack_base is not None and self.sr:
            a2, r2, h2 = self._on_sack(ext.sack_base, ext.sack_bitmap, now_ns)
            acked += a2
            if r2 is not None and h2 > high:
                rtt, high = r2, h2
        if rtt is not None and (self._min_rtt is None or rtt < self._min_rtt):
            self._min_rtt = rtt
        if self.rack:
            if ext.dsack_psn is not None:
                self._on_duplicate_report(ext.dsack_psn)
            self._rack_detect(now_ns)
        if self.state is QpState.RTS:
            self.cc.on_ack(AckInfo(now_ns, acked, rtt, p.becn, ext.hops,
                                   max(self.snd_una - 1, self._high_sack), self.snd_nxt))
        if kind == roce.SYN_RNR:
            cnt.rnr_naks_received += 1
            self._rnr_retries += 1
            if self.config.rnr_retry != 7 and self._rnr_retries > self.config.rnr_retry:
                self._fail(WcStatus.RNR_RETRY_EXC_ERR, now_ns)
                return
            self.rnr_until = now_ns + roce.RNR_TIMER_NS[syn & 0x1F]
            self._rewind(upto, keep_sacked=False)
            self.rto_deadline = self.rnr_until + self._rto()
        elif kind == roce.SYN_NAK:
            code = syn & 0x1F
            if code == roce.NAK_PSN_SEQUENCE:
                if upto < self.snd_max:
                    self._rewind(upto, keep_sacked=True)
            else:
                self._fail(_NAK_STATUS.get(code, WcStatus.REM_OP_ERR), now_ns)

    def _ack_upto(self, upto: int, now_ns: int) -> tuple[int, int | None, int]:
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
        rack = self.rack
        order = self._order
        for s in range(self.snd_una, upto):
            rec = sent.pop(s, None)
            if rec is None:
                continue
            if s in sacked:
                sacked.discard(s)
                continue
            if rack:
                order.pop(s, None)
                self._rack_delivered(s, rec, now_ns)
            if rec.in_flight:
                self.inflight_bytes -= rec.size
            acked += rec.size
            if not rec.retransmitted:
                rtt = now_ns - rec.sent_ns
                high = s
        self.snd_una = upto
        if self.snd_nxt < upto:
            self.snd_nxt = upto
        if self._loss_scan < upto:
            self._loss_scan = upto
        self._retries = 0
        self._backoff = 0
        self._rnr_retries = 0
        self.rto_deadline = now_ns + self._rto() if sent else None
        self._complete_wqes(now_ns)
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
        rack = self.rack
        order = self._order
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
            if rack:
                order.pop(s, None)
                self._rack_delivered(s, rec, now_ns)
            if rec.in_flight:
                rec.in_flight = False
                self.inflight_bytes -= rec.size
            acked += rec.size
            if not rec.retransmitted:
                rtt = now_ns - rec.sent_ns
                high = s
            if s > self._high_sack:
                self._high_sack = s
        if not rack:
            self._count_detect()
        return acked, rtt, high

    def _lost(self, seq: int, rec: _Sent) -> None:
        """Queue ``seq`` for a resend; it no longer counts as in flight."""
        if rec.in_flight:
            rec.in_flight = False
            self.inflight_bytes -= rec.size
        heapq.heappush(self._rtx, seq)
        self._rtx_set.add(seq)

    def _count_detect(self) -> None:
        """COUNT loss detection: holes at least ``sack_reorder_threshold`` below the highest
        SACKed PSN are lost (each hole once; a lost resend waits for the timeout)."""
        limit = self._high_sack - self.config.sack_reorder_threshold + 1
        sent, sacked = self._sent, self._sacked
        for h in range(max(self._loss_scan, self.snd_una), limit):
            if h in sacked or h in self._rtx_set or h >= self.snd_nxt:
                continue
            rec = sent.get(h)
            if rec is not None:
                self._lost(h, rec)
        if limit > self._loss_scan:
            self._loss_scan = limit

    def _rack_delivered(self, seq: int, rec: _Sent, now_ns: int) -> None:
        """RACK: a packet was (S)ACKed; remember it if it is the newest send known delivered.
        An ACK sooner than the minimum RTT after a resend belongs to the original
        transmission (RFC 8985 step 2), so it says nothing about the resend's time."""
        t = rec.sent_ns
        if rec.retransmitted:
            if self._min_rtt is not None and now_ns - t < self._min_rtt:
                self._note_late(now_ns - rec.first_ns - self._rack_rtt)  # late, not lost
                return
        elif t < self._rack_sent:  # overtaken: how much later than the newer packet it came
            self._note_late(now_ns - t - self._rack_rtt)
        if t > self._rack_sent or (t == self._rack_sent and seq > self._rack_seq):
            self._rack_sent, self._rack_seq, self._rack_rtt = t, seq, now_ns - t

    def _note_late(self, late_ns: int) -> None:
        if late_ns > self._late_max:
            self._late_max = late_ns
            if late_ns > self.counters.reorder_peak_ns:
                self.counters.reorder_peak_ns = late_ns

    def reorder_window_ns(self) -> int:
        """RACK's current reorder window: how late a hole may be, behind a packet sent after
        it, before it counts as lost."""
        base = self._min_rtt if self._min_rtt is not None else self.config.base_rtt_ns
        wnd = max(int(base * self.config.reorder_window_rtt * self._reo_mult), self._reo_floor)
        return min(wnd, self._rto() // 2)

    def _rack_detect(self, now_ns: int) -> None:
        """RACK: mark lost every packet sent before the newest delivered one that is overdue
        by more than the reorder window; arm the reorder timer for the first that is not yet.
        Packets are kept in send order, so the scan stops at the first undecided one."""
        self.reo_deadline = None
        order = self._order
        if self._rack_seq < 0 or not order:
            return
        limit_t, limit_s = self._rack_sent, self._rack_seq
        wait = self._rack_rtt + self.reorder_window_ns()
        sent = self._sent
        lost = False
        while order:
            s = next(iter(order))
            rec = sent[s]
            t = rec.sent_ns
            if t > limit_t or (t == limit_t and s >= limit_s):
                break  # not sent before the newest delivered packet: no evidence yet
            if t + wait > now_ns:
                self.reo_deadline = t + wait
                break
            del order[s]
            self._lost(s, rec)
            lost = True
        if lost and self.snd_una >= self._episode_end:  # a new loss episode begins
            self._episode_end = self.snd_max
            if self._reo_persist:
                self._reo_persist -= 1
                if not self._reo_persist:
                    self._reo_mult = 1
                    self._reo_floor = self._late_max = 0

    def _on_duplicate_report(self, psn: int) -> None:
        """RACK: the responder received ``psn`` twice. If we resent it, the resend was
        spurious: the reorder window was too small for this path's reordering. Widen it by
        one step (at most once per round trip, RFC 8985 section 6.2 step 4) and at once to
        9/8 of the longest lateness measured (packets acknowledged behind later-sent ones,
        originals acknowledged after being resent), so one episode of needless resends is
        enough to learn the path's reordering; keep it for the next 16 loss episodes."""
        seq = unwrap(psn, self.snd_una)
        if seq not in self._rtx_log:
            return  # a duplicate the wire made, not one of our resends
        self._rtx_log.remove(seq)
        self.counters.spurious_retransmits += 1
        if self.snd_una >= self._dsack_round:
            self._dsack_round = self.snd_max
            self._reo_mult += 1
        self._reo_floor = max(self._reo_floor, self._late_max + self._late_max // 8)
        self._reo_persist = _REO_PERSIST

    def _rewind(self, seq: int, keep_sacked: bool) -> None:
        """Resend from ``seq`` onward (Go-Back-N recovery, RNR retry, SR timeout)."""
        order = self._order
        for s in range(seq, self.snd_max):
            rec = self._sent.get(s)
            if rec is not None and rec.in_flight:
                rec.in_flight = False
                self.inflight_bytes -= rec.size
            if order:
                order.pop(s, None)  # resent in sequence from snd_nxt: no RACK verdict needed
        if not keep_sacked:
            for s in [s for s in self._sacked if s >= seq]:
                self._sacked.discard(s)
            self._high_sack = seq - 1
            self._loss_scan = seq
        self._rtx.clear()
        self._rtx_set.clear()
        self.reo_deadline = None
        if seq < self.snd_nxt:
            self.snd_nxt = seq

    def on_timeout(self, now_ns: int) -> None:
        """The retransmission timer fired: back off, resend, or give up after retry_count."""
        self.counters.timeouts += 1
        self._retries += 1
        if self._retries > self.config.retry_count:
            self._fail(WcStatus.RETRY_EXC_ERR, now_ns)
            return
        self.cc.on_timeout(now_ns)
        if self._backoff < 30:
            self._backoff += 1
        self._rewind(self.snd_una, keep_sacked=self.sr)
        self.rto_deadline = now_ns + self._rto()

    def on_cnp(self, now_ns: int) -> None:
        """A CNP for this QP (reaction point of DCQCN)."""
        self.counters.cnps_received += 1
        self.cc.on_cnp(now_ns)

    def _complete_wqes(self, now_ns: int) -> None:
        una = self.snd_una
        wqes = self._wqes
        h = self._head
        while h < len(wqes) and wqes[h].first_seq + wqes[h].npkts <= una:
            w = wqes[h]
            op = WcOpcode.RDMA_WRITE if w.is_write else WcOpcode.SEND
            self.nic.complete(Completion(w.wr_id, self.qpn, WcStatus.SUCCESS, op, w.length, now_ns))
            self.counters.messages_sent += 1
            h += 1
        if h > 256 and h * 2 > len(wqes):
            del wqes[:h]
            del self._starts[:h]
            self._cursor -= h
            h = 0
        self._head = h

    def _fail(self, status: WcStatus, now_ns: int) -> None:
        """Fatal error: the WQE at the head completes with ``status``, the rest are flushed,
        the QP enters the error state (IBA 10.3.1: a requester error is not recoverable)."""
        first = True
        for w in self._wqes[self._head:]:
            op = WcOpcode.RDMA_WRITE if w.is_write else WcOpcode.SEND
            st = status if first else WcStatus.WR_FLUSH_ERR
            self.nic.complete(Completion(w.wr_id, self.qpn, st, op, 0, now_ns))
            first = False
        for wr_id, _mr, _o, _l in self._recv_wqes:
            self.nic.complete(Completion(wr_id, self.qpn, WcStatus.WR_FLUSH_ERR, WcOpcode.RECV,
                                         0, now_ns))
        self._recv_wqes.clear()
        self._wqes.clear()
        self._starts.clear()
        self._head = self._cursor = 0
        self._sent.clear()
        self._sacked.clear()
        self._order.clear()
        self.reo_deadline = None
        self._rtx.clear()
        self._rtx_set.clear()
        self.inflight_bytes = 0
        self.snd_una = self.snd_nxt = self.snd_max = self._post_end
        self.rto_deadline = None
        self.rnr_until = None
        self.state = QpState.ERROR

    # ------------------------------------------------------------------ responder

    def on_data(self, p: roce.Packet, now_ns: int) -> None:
        """A SEND or RDMA WRITE packet addressed to this QP's responder."""
        cnt = self.counters
        if p.ecn == roce.ECN_CE:
            cnt.ce_received += 1
            self._ce_since_ack = True
            last = self._last_cnp_ns
            if last is None or now_ns - last >= self.nic.cnp_interval_ns:
                self._last_cnp_ns = now_ns
                self._cnp_pending = True
                self.nic.want_control(self)
        if p.int_stack is not None:
            self._int_echo = p.int_stack
        seq = unwrap(p.psn, self.epsn)
        if seq < self.epsn:
            cnt.duplicates_received += 1
            if self.sr:
                self._dup_seq = seq
            self._request_ack()
            return
        if seq == self.epsn:
            if not self._deliver(p.opcode, p.reth, p.imm, p.payload, len(p.payload), False,
                                 now_ns):
                return
            cnt.data_pkts_received += 1
            cnt.data_bytes_received += p.frame_len
            self._ooo_mask >>= 1
            drained = self._drain(now_ns) if self._ooo_mask else False
            self._unacked += 1
            # while packets are held beyond a hole, every arrival is ACKed at once (as TCP
            # does, RFC 5681 4.2): a coalesced ACK would make the sender's loss detection
            # take a packet for lost that has arrived
            if (drained or self._ooo_mask or p.ackreq or self._unacked >= self.config.ack_every
                    or p.opcode in roce.OP_ENDS):
                self._request_ack()
            return
        cnt.out_of_order_received += 1
        if not self.sr:
            cnt.out_of_order_dropped += 1
            if not self._nak_sent:
                self._nak_sent = True
                self._nak = roce.SYN_NAK | roce.NAK_PSN_SEQUENCE
                self.nic.want_control(self)
            return
        bit = seq - self.epsn
        if bit >= self.config.sack_window:
            cnt.out_of_order_dropped += 1
            return
        if self._ooo_mask >> bit & 1:
            cnt.duplicates_received += 1
            self._dup_seq = seq
            self._request_ack()
            return
        placed = self._place_early(seq, p)
        self._ooo[seq] = _Held(p.opcode, p.reth, p.imm, p.payload, placed)
        self._ooo_mask |= 1 << bit
        cnt.data_pkts_received += 1
        cnt.data_bytes_received += p.frame_len
        cnt.reassembly_bytes += len(p.payload)
        if cnt.reassembly_bytes > cnt.reassembly_peak_bytes:
            cnt.reassembly_peak_bytes = cnt.reassembly_bytes
        if len(self._ooo) > cnt.reassembly_peak_pkts:
            cnt.reassembly_peak_pkts = len(self._ooo)
        self._request_ack()

    def _request_ack(self) -> None:
        if not self._ack_pending:
            self._ack_pending = True
            self.nic.want_control(self)

    def _nak_now(self, syndrome: int) -> bool:
        self._nak = syndrome
        self._nak_sent = True
        self.nic.want_control(self)
        return False

    def _deliver(self, op: int, reth: tuple[int, int, int] | None, imm: int | None,
                 payload: bytes, n: int, placed: bool, now_ns: int) -> bool:
        """Accept the packet at the expected PSN: check it against the message in progress,
        place its payload (unless placed early), complete the message at its end and advance
        the expected PSN. Returns False (and queues a NAK) when it cannot be accepted."""
        is_write = op in roce.OP_WRITE
        if op in roce.OP_STARTS:
            if self._in_msg:
                return self._nak_now(roce.SYN_NAK | roce.NAK_INVALID_REQUEST)
            if is_write:
                va, rkey, dlen = reth  # type: ignore[misc]
                mr = self.nic.mr_for_rkey(rkey)
                if (mr is None or not mr.access & Access.REMOTE_WRITE or va < mr.addr
                        or va + dlen > mr.addr + mr.length):
                    return self._nak_now(roce.SYN_NAK | roce.NAK_REMOTE_ACCESS)
                if op in roce.OP_HAS_IMM and not self._recv_wqes:
                    return self._rnr_nak()
                self._msg_mr, self._msg_off, self._msg_left = mr, va - mr.addr, dlen
                if op == roce.Opcode.RDMA_WRITE_FIRST and self.sr:
                    self._spans.append(_Span(self.epsn, self.epsn + -(-dlen // self.mtu), mr,
                                             va - mr.addr, dlen))
            else:
                if not self._recv_wqes:
                    return self._rnr_nak()
                rw = self._recv_wqes[0]
                self._msg_mr, self._msg_off, self._msg_left = rw[1], rw[2], rw[3]
                self._msg_recv = rw
            self._in_msg = True
            self._msg_write = is_write
            self._msg_bytes = 0
        elif not self._in_msg or self._msg_write != is_write:
            return self._nak_now(roce.SYN_NAK | roce.NAK_INVALID_REQUEST)
        elif op in roce.OP_HAS_IMM and is_write and not self._recv_wqes:
            return self._rnr_nak()
        if (op not in roce.OP_ENDS and n != self.mtu) or n > self._msg_left or (
                is_write and op in roce.OP_ENDS and n != self._msg_left):
            self._in_msg = False
            if not is_write:
                self._finish_recv(WcStatus.LOC_LEN_ERR, now_ns, None)
            return self._nak_now(roce.SYN_NAK | roce.NAK_INVALID_REQUEST)
        if not is_write and op in roce.OP_STARTS:
            self._recv_wqes.popleft()
        mr = self._msg_mr
        if not placed and n and mr.buf is not None:  # type: ignore[union-attr]
            mr.buf[self._msg_off:self._msg_off + n] = payload  # type: ignore[union-attr]
        self._msg_off += n
        self._msg_left -= n
        self._msg_bytes += n
        self.counters.payload_bytes_delivered += n
        self.epsn += 1
        self._nak_sent = False
        if op in roce.OP_ENDS:
            self._in_msg = False
            self.msn = (self.msn + 1) & 0xFFFFFF
            self.counters.messages_received += 1
            if is_write:
                if self._spans and self._spans[0].end <= self.epsn:
                    self._spans = [s for s in self._spans if s.end > self.epsn]
                if op in roce.OP_HAS_IMM:
                    self._msg_recv = self._recv_wqes.popleft()
                    self._finish_recv(WcStatus.SUCCESS, now_ns, imm, WcOpcode.RECV_RDMA_WITH_IMM)
            else:
                self._finish_recv(WcStatus.SUCCESS, now_ns, imm)
        return True

    def _finish_recv(self, status: WcStatus, now_ns: int, imm: int | None,
                     opcode: WcOpcode = WcOpcode.RECV) -> None:
        rw = self._msg_recv
        if rw is None:
            return
        if status is not WcStatus.SUCCESS and self._recv_wqes and self._recv_wqes[0] is rw:
            self._recv_wqes.popleft()
        self._msg_recv = None
        self.nic.complete(Completion(rw[0], self.qpn, status, opcode,
                                     self._msg_bytes if status is WcStatus.SUCCESS else 0,
                                     now_ns, imm))

    def _rnr_nak(self) -> bool:
        self.counters.rnr_naks_sent += 1
        self._flush_ooo()
        return self._nak_now(roce.SYN_RNR | roce.rnr_code_for(self.config.min_rnr_timer_ns))

    def _place_early(self, seq: int, p: roce.Packet) -> bool:
        """Selective repeat: put an out-of-order WRITE payload in memory now if its message's
        RETH is known (this packet is the first, or an earlier first was seen)."""
        op = p.opcode
        if op not in roce.OP_WRITE:
            return False
        mtu = self.mtu
        if p.reth is not None:
            va, rkey, dlen = p.reth
            mr = self.nic.mr_for_rkey(rkey)
            if (mr is None or not mr.access & Access.REMOTE_WRITE or va < mr.addr
                    or va + dlen > mr.addr + mr.length):
                return False
            span = _Span(seq, seq + max(1, -(-dlen // mtu)), mr, va - mr.addr, dlen)
            if op == roce.Opcode.RDMA_WRITE_FIRST:
                self._spans.append(span)
                for s in range(seq + 1, span.end):
                    held = self._ooo.get(s)
                    if held is not None and not held.placed and held.opcode in roce.OP_WRITE:
                        if self._write_at(span, s, held.payload):
                            held.placed = True
                            held.payload = b""
            return self._write_at(span, seq, p.payload)
        for span in self._spans:
            if span.first < seq < span.end:
                return self._write_at(span, seq, p.payload)
        return False

    def _write_at(self, span: _Span, seq: int, payload: bytes) -> bool:
        off = (seq - span.first) * self.mtu
        n = len(payload)
        if off + n > span.length:
            return False  # not what the RETH promised: the in-order check will NAK it
        buf = span.mr.buf
        if buf is not None and n:
            a = span.base + off
            buf[a:a + n] = payload
        return True

    def _drain(self, now_ns: int) -> bool:
        """Deliver out-of-order packets that the expected PSN has now reached."""
        drained = False
        cnt = self.counters
        while self._ooo_mask & 1:
            held = self._ooo.pop(self.epsn)
            cnt.reassembly_bytes -= held.length
            if not self._deliver(held.opcode, held.reth, held.imm, held.payload, held.length,
                                 held.placed, now_ns):
                self._flush_ooo()
                return drained
            self._ooo_mask >>= 1
            drained = True
        return drained

    def _flush_ooo(self) -> None:
        """Forget out-of-order state (the requester will resend from the NAKed PSN)."""
        self._ooo.clear()
        self._ooo_mask = 0
        self.counters.reassembly_bytes = 0

    def has_control(self) -> bool:
        return self._ack_pending or self._nak is not None or self._cnp_pending

    def control_priority(self) -> int:
        """PFC priority of the control packet :meth:`next_control_frame` would build."""
        if self._cnp_pending and self.nic.cnp_priority is not None:
            return self.nic.cnp_priority
        return self.priority

    def next_control_frame(self) -> bytes:
        """Build one pending control packet: CNP first, then NAK or ACK."""
        if self._cnp_pending:
            self._cnp_pending = False
            self.counters.cnps_sent += 1
            bth = roce.pack_bth(roce.Opcode.CNP, self.dest_qpn, 0, pkey=self.config.pkey,
                                becn=True)
            return self._tmpl_cnp.build(bth, roce.cnp_body(), b"")  # type: ignore[union-attr]
        cnt = self.counters
        flags = 0
        ext = b""
        if self._nak is not None:
            syn = self._nak
            psn = self.epsn
            cnt.naks_sent += 1
        else:
            syn = roce.SYN_ACK | roce.encode_credits(len(self._recv_wqes))
            psn = self.epsn - 1
            cnt.acks_sent += 1
        if self._int_echo is not None:
            flags |= roce.ACK_EXT_INT
            ext = int_md.encode_echo(self._int_echo)
        if self._ooo_mask and self._nak is None:
            flags |= roce.ACK_EXT_SACK
            ext += roce.pack_sack(to_wire(self.epsn), self._ooo_mask >> 1)
        if self._dup_seq is not None and self._nak is None:
            flags |= roce.ACK_EXT_DSACK
            ext += roce.pack_dsack(to_wire(self._dup_seq))
            self._dup_seq = None
        bth = roce.pack_bth(roce.Opcode.ACKNOWLEDGE, self.dest_qpn, psn, pkey=self.config.pkey,
                            becn=self._ce_since_ack, resv7=flags)
        frame = self._tmpl_ctrl.build(bth, roce.pack_aeth(syn, self.msn) + ext, b"")  # type: ignore[union-attr]
        self._nak = None
        self._ack_pending = False
        self._unacked = 0
        self._ce_since_ack = False
        self._int_echo = None
        return frame

    # ------------------------------------------------------------------ timers

    def next_timer(self) -> int | None:
        """Earliest of the retransmission, RACK reorder and congestion-control timers."""
        t = self.rto_deadline
        r = self.reo_deadline
        if r is not None and (t is None or r < t):
            t = r
        c = self.cc.next_timer()
        if c is not None and (t is None or c < t):
            t = c
        return t

    def run_timers(self, now_ns: int) -> None:
        if self.rto_deadline is not None and now_ns >= self.rto_deadline:
            self.rto_deadline = None
            if self._sent and self.state is QpState.RTS:
                self.on_timeout(now_ns)
        if self.reo_deadline is not None and now_ns >= self.reo_deadline:
            self._rack_detect(now_ns)
        c = self.cc.next_timer()
        if c is not None and now_ns >= c:
            self.cc.on_timer(now_ns)
        if self.rnr_until is not None and now_ns >= self.rnr_until:
            self.rnr_until = None
