"""The responder: the receiving half of an RC queue pair (HPCC's ns-3 model calls it
RdmaRxQueuePair). It accepts SEND and RDMA WRITE packets, places their data, completes
messages and answers with ACKs, NAKs and CNPs (the DCQCN notification point):

* Go-Back-N: out-of-order packets are dropped and one PSN-sequence NAK is sent per gap.
* Selective repeat: out-of-order packets are kept (WRITE payloads go straight to memory
  when the message's RETH is known, otherwise they are held), tracked in a bitmap relative
  to the expected PSN and reported in a SACK with every out-of-order arrival (and a
  duplicate report when a packet arrives twice).

Messages complete in PSN order (verbs semantics), so receive WQEs are consumed in order
even when packets are placed early. Sans-IO: ``on_data`` returns an ``Actions``
(completions, whether a control frame waits) and frames are pulled with
``next_control_frame``; it knows no NIC, only the memory regions it may write.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping

from nicmodel import int_md, roce
from nicmodel.actions import Actions
from nicmodel.counters import QpCounters
from nicmodel.psn import to_wire, unwrap
from nicmodel.verbs import Access, Completion, MemoryRegion, QpConfig, Reliability, WcOpcode, WcStatus

RecvWqe = tuple[int, MemoryRegion, int, int]  # wr_id, region, offset, length


class _Held:
    """A packet received beyond the expected PSN (selective repeat)."""

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


class Responder:
    """Receive side of one RC queue pair. ``mrs`` maps rkeys to the NIC's registered
    regions (read only); ``cnp_interval_ns`` rate-limits CNPs; without ``extensions`` its
    ACKs carry no INT echo (a selective-repeat responder needs them for its SACKs, so the
    NIC never builds one without); the templates and ``dest_qpn`` are set when the queue
    pair connects."""

    def __init__(self, qpn: int, config: QpConfig, counters: QpCounters,
                 mrs: Mapping[int, MemoryRegion], cnp_interval_ns: int,
                 cnp_priority: int | None, extensions: bool = True) -> None:
        self.qpn = qpn
        self.config = config
        self.counters = counters
        self.mtu = config.mtu
        # read for every packet received or ACK sent: the settings' (an interpreted class's) by name
        self._ack_every = config.ack_every
        self._pkey = config.pkey
        self.sr = config.reliability is Reliability.SELECTIVE_REPEAT
        self._mrs = mrs
        self.cnp_interval_ns = cnp_interval_ns
        self.cnp_priority = cnp_priority
        self.extensions = extensions  # False: standard RoCEv2 ACKs only (no INT echo)
        self.dest_qpn = 0
        self.ctrl_template: roce.FrameTemplate | None = None
        self.cnp_template: roce.FrameTemplate | None = None
        self.epsn = 0
        self.msn = 0
        self.recv_wqes: deque[RecvWqe] = deque()
        self._in_msg = False
        self._msg_write = False
        self._msg_mr: MemoryRegion | None = None
        self._msg_off = 0
        self._msg_left = 0
        self._msg_bytes = 0
        self._msg_recv: RecvWqe | None = None
        self._ooo: dict[int, _Held] = {}
        self._ooo_mask = 0  # bit i = sequence number epsn + i received
        self._spans: list[_Span] = []
        self._unacked = 0
        self._ack_pending = False
        self._nak: int | None = None  # syndrome of a NAK to send
        self._nak_sent = False  # a NAK went out since the expected PSN last advanced
        self._nak_ns = 0  # when it was queued
        self._ce_since_ack = False
        self._int_echo: int_md.IntStack | None = None
        self._dup_seq: int | None = None  # SR: a duplicate to report in the next ACK
        self._cnp_pending = False
        self._last_cnp_ns: int | None = None

    # ------------------------------------------------------------------ receive

    def on_data(self, p: roce.Packet, now_ns: int) -> Actions:
        """A SEND or RDMA WRITE packet addressed to this responder."""
        out = Actions()
        self._on_data(p, now_ns, out)
        out.control = self.has_control()
        return out

    def _on_data(self, p: roce.Packet, now_ns: int, out: Actions) -> None:
        cnt = self.counters
        if p.ecn == roce.ECN_CE:
            cnt.ce_received += 1
            self._ce_since_ack = True
            last = self._last_cnp_ns
            if last is None or now_ns - last >= self.cnp_interval_ns:
                self._last_cnp_ns = now_ns
                self._cnp_pending = True
        if p.int_stack is not None and self.extensions:
            self._int_echo = p.int_stack
        seq = unwrap(p.psn, self.epsn)
        if seq < self.epsn:
            cnt.duplicates_received += 1
            if self.sr:
                self._dup_seq = seq
            self._ack_pending = True
            return
        if seq == self.epsn:
            if not self._deliver(p.opcode, p.reth, p.imm, p.payload, len(p.payload), False,
                                 now_ns, out):
                return
            cnt.data_pkts_received += 1
            cnt.data_bytes_received += p.frame_len
            self._ooo_mask >>= 1
            drained = self._drain(now_ns, out) if self._ooo_mask else False
            self._unacked += 1
            # while packets are held beyond a hole, every arrival is ACKed at once (as TCP
            # does, RFC 5681 4.2): a coalesced ACK would make the sender's loss detection
            # take a packet for lost that has arrived
            if (drained or self._ooo_mask or p.ackreq or self._unacked >= self._ack_every
                    or p.opcode in roce.OP_ENDS):
                self._ack_pending = True
            return
        cnt.out_of_order_received += 1
        if not self.sr:
            cnt.out_of_order_dropped += 1
            # One NAK per gap (IBA vol. 1 ch. 9.7); again only once the gap has lasted
            # ``nak_interval_ns`` since the last one (its resend may have been lost too)
            interval = self.config.nak_interval_ns
            if not self._nak_sent or (interval is not None
                                      and now_ns - self._nak_ns >= interval):
                if self._nak_sent:
                    cnt.naks_repeated += 1
                self._nak_now(roce.SYN_NAK | roce.NAK_PSN_SEQUENCE, now_ns)
            return
        bit = seq - self.epsn
        if bit >= self.config.sack_window:
            cnt.out_of_order_dropped += 1
            return
        if self._ooo_mask >> bit & 1:
            cnt.duplicates_received += 1
            self._dup_seq = seq
            self._ack_pending = True
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
        self._ack_pending = True

    def _nak_now(self, syndrome: int, now_ns: int) -> bool:
        self._nak = syndrome
        self._nak_sent = True
        self._nak_ns = now_ns
        return False

    def _mr_for_rkey(self, rkey: int) -> MemoryRegion | None:
        return self._mrs.get(rkey)

    def _deliver(self, op: int, reth: tuple[int, int, int] | None, imm: int | None,
                 payload: bytes, n: int, placed: bool, now_ns: int, out: Actions) -> bool:
        """Accept the packet at the expected PSN: check it against the message in progress,
        place its payload (unless placed early), complete the message at its end and advance
        the expected PSN. Returns False (and queues a NAK) when it cannot be accepted."""
        is_write = op in roce.OP_WRITE
        if op in roce.OP_STARTS:
            if self._in_msg:
                return self._nak_now(roce.SYN_NAK | roce.NAK_INVALID_REQUEST, now_ns)
            if is_write:
                va, rkey, dlen = reth  # type: ignore[misc]
                mr = self._mr_for_rkey(rkey)
                if (mr is None or not mr.access & Access.REMOTE_WRITE or va < mr.addr
                        or va + dlen > mr.addr + mr.length):
                    return self._nak_now(roce.SYN_NAK | roce.NAK_REMOTE_ACCESS, now_ns)
                if op in roce.OP_HAS_IMM and not self.recv_wqes:
                    return self._rnr_nak(now_ns)
                self._msg_mr, self._msg_off, self._msg_left = mr, va - mr.addr, dlen
                if op == roce.Opcode.RDMA_WRITE_FIRST and self.sr:
                    self._spans.append(_Span(self.epsn, self.epsn + -(-dlen // self.mtu), mr,
                                             va - mr.addr, dlen))
            else:
                if not self.recv_wqes:
                    return self._rnr_nak(now_ns)
                rw = self.recv_wqes[0]
                self._msg_mr, self._msg_off, self._msg_left = rw[1], rw[2], rw[3]
                self._msg_recv = rw
            self._in_msg = True
            self._msg_write = is_write
            self._msg_bytes = 0
        elif not self._in_msg or self._msg_write != is_write:
            return self._nak_now(roce.SYN_NAK | roce.NAK_INVALID_REQUEST, now_ns)
        elif op in roce.OP_HAS_IMM and is_write and not self.recv_wqes:
            return self._rnr_nak(now_ns)
        if (op not in roce.OP_ENDS and n != self.mtu) or n > self._msg_left or (
                is_write and op in roce.OP_ENDS and n != self._msg_left):
            self._in_msg = False
            if not is_write:
                self._finish_recv(WcStatus.LOC_LEN_ERR, now_ns, None, out)
            return self._nak_now(roce.SYN_NAK | roce.NAK_INVALID_REQUEST, now_ns)
        if not is_write and op in roce.OP_STARTS:
            self.recv_wqes.popleft()
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
                    self._msg_recv = self.recv_wqes.popleft()
                    self._finish_recv(WcStatus.SUCCESS, now_ns, imm, out,
                                      WcOpcode.RECV_RDMA_WITH_IMM)
            else:
                self._finish_recv(WcStatus.SUCCESS, now_ns, imm, out)
        return True

    def _finish_recv(self, status: WcStatus, now_ns: int, imm: int | None, out: Actions,
                     opcode: WcOpcode = WcOpcode.RECV) -> None:
        rw = self._msg_recv
        if rw is None:
            return
        if status is not WcStatus.SUCCESS and self.recv_wqes and self.recv_wqes[0] is rw:
            self.recv_wqes.popleft()
        self._msg_recv = None
        out.completions.append(Completion(rw[0], self.qpn, status, opcode,
                                          self._msg_bytes if status is WcStatus.SUCCESS else 0,
                                          now_ns, imm))

    def _rnr_nak(self, now_ns: int) -> bool:
        self.counters.rnr_naks_sent += 1
        self._flush_ooo()
        return self._nak_now(roce.SYN_RNR | roce.rnr_code_for(self.config.min_rnr_timer_ns),
                             now_ns)

    def _place_early(self, seq: int, p: roce.Packet) -> bool:
        """Selective repeat: put an out-of-order WRITE payload in memory now if its message's
        RETH is known (this packet is the first, or an earlier first was seen)."""
        op = p.opcode
        if op not in roce.OP_WRITE:
            return False
        mtu = self.mtu
        if p.reth is not None:
            va, rkey, dlen = p.reth
            mr = self._mr_for_rkey(rkey)
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

    def _drain(self, now_ns: int, out: Actions) -> bool:
        """Deliver out-of-order packets that the expected PSN has now reached."""
        drained = False
        cnt = self.counters
        while self._ooo_mask & 1:
            held = self._ooo.pop(self.epsn)
            cnt.reassembly_bytes -= held.length
            if not self._deliver(held.opcode, held.reth, held.imm, held.payload, held.length,
                                 held.placed, now_ns, out):
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

    def flush(self, now_ns: int) -> list[Completion]:
        """The queue pair failed: every posted receive WQE completes flushed."""
        done = [Completion(wr_id, self.qpn, WcStatus.WR_FLUSH_ERR, WcOpcode.RECV, 0, now_ns)
                for wr_id, _mr, _o, _l in self.recv_wqes]
        self.recv_wqes.clear()
        return done

    # ------------------------------------------------------------------ control frames

    def has_control(self) -> bool:
        return self._ack_pending or self._nak is not None or self._cnp_pending

    def control_priority(self, data_priority: int) -> int:
        """PFC priority of the control packet :meth:`next_control_frame` would build."""
        if self._cnp_pending and self.cnp_priority is not None:
            return self.cnp_priority
        return data_priority

    def next_control_frame(self) -> bytes:
        """Build one pending control packet: CNP first, then NAK or ACK."""
        if self._cnp_pending:
            self._cnp_pending = False
            self.counters.cnps_sent += 1
            bth = roce.pack_bth(roce.Opcode.CNP, self.dest_qpn, 0, pkey=self.config.pkey,
                                becn=True)
            return self.cnp_template.build(bth, roce.cnp_body(), b"")  # type: ignore[union-attr]
        cnt = self.counters
        flags = 0
        ext = b""
        if self._nak is not None:
            syn = self._nak
            psn = self.epsn
            cnt.naks_sent += 1
        else:
            syn = roce.SYN_ACK | roce.encode_credits(len(self.recv_wqes))
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
        bth = roce.pack_bth(roce.Opcode.ACKNOWLEDGE, self.dest_qpn, psn, pkey=self._pkey,
                            becn=self._ce_since_ack, resv7=flags)
        frame = self.ctrl_template.build(bth, roce.pack_aeth(syn, self.msn) + ext, b"")  # type: ignore[union-attr]
        self._nak = None
        self._ack_pending = False
        self._unacked = 0
        self._ce_since_ack = False
        self._int_echo = None
        return frame
