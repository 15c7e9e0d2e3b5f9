"""How a requester decides that a packet it sent is lost: one small strategy per rule.

The requester (nicmodel/requester.py) tells its detector what it sent and what came back
acknowledged; the detector answers with the sequence numbers it judges lost (to resend) and
the time of the timer it wants (``deadline``). Detectors never send, resend or arm anything
themselves. Sequence numbers are absolute (nicmodel/psn.py).

* ``NakOnly`` (Go-Back-N): the requester never guesses; the responder's PSN-sequence NAK
  names the first missing packet and the retransmission timeout covers lost NAKs and tails.
* ``DuplicateThreshold`` (selective repeat, ``LossDetection.COUNT``): TCP's dupthresh / IRN:
  a hole is lost once a PSN ``threshold`` above it is SACKed; a lost resend waits for the RTO.
* ``Rack`` (selective repeat, ``LossDetection.RACK``, RFC 8985): by time, see the class.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from typing import Final

from nicmodel.verbs import LossDetection, QpConfig, Reliability

_REO_PERSIST: Final = 16  # RFC 8985: loss episodes a widened reorder window is kept for
_RTX_LOG: Final = 256  # recent resends remembered to match duplicate reports against


class Sent:
    """The requester's bookkeeping of one transmitted, not yet acknowledged packet, which the
    detectors read too (a class here, not a protocol: compiled, they read its fields natively)."""

    __slots__ = ("size", "sent_ns", "first_ns", "retransmitted", "in_flight")

    def __init__(self, size: int, sent_ns: int) -> None:
        self.size = size
        self.sent_ns = sent_ns  # latest transmission
        self.first_ns = sent_ns  # first transmission
        self.retransmitted = False
        self.in_flight = True


class NakOnly:
    """Go-Back-N: no sender-side loss inference (the NAK and the timeout do the work).
    Also the base of the other detectors: every event is a no-op unless overridden."""

    deadline: int | None = None  # absolute time the detector wants ``on_timer``; None: none

    def on_sent(self, seq: int, retransmit: bool) -> None:
        """``seq`` left the port (again when ``retransmit``)."""

    def on_delivered(self, seq: int, rec: Sent, now_ns: int, min_rtt: int | None) -> None:
        """``seq`` was newly acknowledged (cumulatively or by SACK) at ``now_ns``."""

    def on_forget(self, seq: int) -> None:
        """``seq`` will be resent in sequence (rewind): it needs no verdict any more."""

    def on_cumulative(self, upto: int) -> None:
        """Everything below ``upto`` is acknowledged."""

    def on_rewind(self, seq: int, keep_sacked: bool) -> None:
        """The requester resends from ``seq`` (NAK, RNR, timeout); without ``keep_sacked``
        it also forgot what the responder SACKed at and above ``seq``."""
        self.deadline = None

    def after_sack(self, high_sack: int, snd_una: int, snd_nxt: int) -> range:
        """After a SACK block was applied: the range of sequence numbers to examine for
        loss (the requester skips SACKed, already queued and unsent ones)."""
        return range(0)

    def after_ack(self, now_ns: int, sent: dict[int, Sent], min_rtt: int | None, rto_ns: int,
                  snd_una: int, snd_max: int) -> list[int]:
        """After an ACK was applied: sequence numbers now judged lost, in order."""
        return []

    def on_timer(self, now_ns: int, sent: dict[int, Sent], min_rtt: int | None, rto_ns: int,
                 snd_una: int, snd_max: int) -> list[int]:
        return []

    def on_duplicate_report(self, seq: int, snd_una: int, snd_max: int) -> bool:
        """The responder received ``seq`` twice. True if that exposes a spurious resend."""
        return False

    def window_ns(self, min_rtt: int | None, rto_ns: int) -> int:
        """How late a packet may come before it counts as lost (0: no time rule)."""
        return 0

    def clear(self) -> None:
        """The QP failed: forget everything."""
        self.deadline = None


class DuplicateThreshold(NakOnly):
    """A hole is lost once a PSN at least ``threshold`` above it is SACKed (each hole once;
    a lost resend waits for the timeout)."""

    def __init__(self, threshold: int, first_seq: int) -> None:
        self.threshold = threshold
        self._scan = first_seq  # holes below this were judged already

    def on_cumulative(self, upto: int) -> None:
        if self._scan < upto:
            self._scan = upto

    def on_rewind(self, seq: int, keep_sacked: bool) -> None:
        self.deadline = None
        if not keep_sacked:
            self._scan = seq

    def after_sack(self, high_sack: int, snd_una: int, snd_nxt: int) -> range:
        limit = high_sack - self.threshold + 1
        lo = max(self._scan, snd_una)
        if limit > self._scan:
            self._scan = limit
        return range(lo, limit)


class Rack(NakOnly):
    """RACK (RFC 8985): a hole is lost once a packet *sent after it* has been (S)ACKed and
    the hole is overdue by more than the reorder window, i.e. ``now >= its send time + RTT
    of that later packet + reo_wnd``; the detector's timer fires when that moment comes.
    ``reo_wnd`` starts at ``reorder_window_rtt`` minimum RTTs; when a duplicate report shows
    that a resend was spurious it grows by that step (once per round trip) and at once to
    9/8 of the longest lateness measured, kept for 16 loss episodes, never beyond half the
    RTO. Sprayed packets overtake each other by up to the delay spread between paths, so
    the rule that tolerates spraying is one in time; a lost resend is detected the same way
    (no RTO needed)."""

    def __init__(self, reorder_window_rtt: float, base_rtt_ns: int, first_seq: int,
                 counters) -> None:
        self.reorder_window_rtt = reorder_window_rtt
        self.base_rtt_ns = base_rtt_ns
        self.counters = counters
        # un-SACKed packets in flight in the order they were (re)sent
        self._order: OrderedDict[int, None] = OrderedDict()
        # the newest send known delivered: its time, sequence number and RTT
        self._rack_sent = -1
        self._rack_seq = -1
        self._rack_rtt = 0
        self._reo_mult = 1
        self._reo_floor = 0  # window floor set from measured lateness on spurious resends
        self._late_max = 0  # longest a packet came behind a later-sent one, this period
        self._reo_persist = 0
        self._dsack_round = first_seq  # the window grows at most once until snd_una passes this
        self._episode_end = first_seq  # losses below this belong to the current loss episode
        self._rtx_log: deque[int] = deque(maxlen=_RTX_LOG)

    def on_sent(self, seq: int, retransmit: bool) -> None:
        if retransmit:
            self._rtx_log.append(seq)
            self._order.pop(seq, None)
        self._order[seq] = None

    def on_forget(self, seq: int) -> None:
        if self._order:
            self._order.pop(seq, None)

    def on_delivered(self, seq: int, rec: Sent, now_ns: int, min_rtt: int | None) -> None:
        """Remember ``seq`` if it is the newest send known delivered. An ACK sooner than the
        minimum RTT after a resend belongs to the original transmission (RFC 8985 step 2),
        so it says nothing about the resend's time."""
        order = self._order
        if seq in order:  # a test and a deletion: compiled, ``pop`` is a call by name
            del order[seq]
        t = rec.sent_ns
        if rec.retransmitted:
            if min_rtt is not None and now_ns - t < min_rtt:
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

    def window_ns(self, min_rtt: int | None, rto_ns: int) -> int:
        base = min_rtt if min_rtt is not None else self.base_rtt_ns
        wnd = max(int(base * self.reorder_window_rtt * self._reo_mult), self._reo_floor)
        return min(wnd, rto_ns // 2)

    def after_ack(self, now_ns: int, sent: dict[int, Sent], min_rtt: int | None, rto_ns: int,
                  snd_una: int, snd_max: int) -> list[int]:
        return self._detect(now_ns, sent, min_rtt, rto_ns, snd_una, snd_max)

    def on_timer(self, now_ns: int, sent: dict[int, Sent], min_rtt: int | None, rto_ns: int,
                 snd_una: int, snd_max: int) -> list[int]:
        return self._detect(now_ns, sent, min_rtt, rto_ns, snd_una, snd_max)

    def _detect(self, now_ns: int, sent: dict[int, Sent], min_rtt: int | None, rto_ns: int,
                snd_una: int, snd_max: int) -> list[int]:
        """Every packet sent before the newest delivered one that is overdue by more than
        the reorder window is lost; the timer is armed for the first that is not yet.
        Packets are kept in send order, so the scan stops at the first undecided one."""
        self.deadline = None
        order = self._order
        lost: list[int] = []
        if self._rack_seq < 0 or not order:
            return lost
        limit_t, limit_s = self._rack_sent, self._rack_seq
        wait = self._rack_rtt + self.window_ns(min_rtt, rto_ns)
        while order:
            s = next(iter(order))
            t = sent[s].sent_ns
            if t > limit_t or (t == limit_t and s >= limit_s):
                break  # not sent before the newest delivered packet: no evidence yet
            if t + wait > now_ns:
                self.deadline = t + wait
                break
            del order[s]
            lost.append(s)
        if lost and snd_una >= self._episode_end:  # a new loss episode begins
            self._episode_end = snd_max
            if self._reo_persist:
                self._reo_persist -= 1
                if not self._reo_persist:
                    self._reo_mult = 1
                    self._reo_floor = self._late_max = 0
        return lost

    def on_duplicate_report(self, seq: int, snd_una: int, snd_max: int) -> bool:
        """If we resent ``seq``, the resend was spurious: the reorder window was too small
        for this path's reordering. Widen it by one step (at most once per round trip,
        RFC 8985 section 6.2 step 4) and at once to 9/8 of the longest lateness measured
        (packets acknowledged behind later-sent ones, originals acknowledged after being
        resent), so one episode of needless resends is enough to learn the path's
        reordering; keep it for the next 16 loss episodes."""
        if seq not in self._rtx_log:
            return False  # a duplicate the wire made, not one of our resends
        self._rtx_log.remove(seq)
        if snd_una >= self._dsack_round:
            self._dsack_round = snd_max
            self._reo_mult += 1
        self._reo_floor = max(self._reo_floor, self._late_max + self._late_max // 8)
        self._reo_persist = _REO_PERSIST
        return True

    def clear(self) -> None:
        self._order.clear()
        self.deadline = None


def detector_for(config: QpConfig, counters) -> NakOnly:
    """The loss detector a queue pair's settings ask for."""
    if config.reliability is not Reliability.SELECTIVE_REPEAT:
        return NakOnly()
    if config.loss_detection is LossDetection.RACK:
        return Rack(config.reorder_window_rtt, config.base_rtt_ns, config.initial_psn, counters)
    return DuplicateThreshold(config.sack_reorder_threshold, config.initial_psn)
