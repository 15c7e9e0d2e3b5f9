"""HPCC: window and rate from in-band telemetry (INT) echoed in ACKs.

Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019, Algorithm 1:

    MeasureInflight(ack):  for each hop j, from the previous and the new INT record of it
        txRate_j = (txBytes' - txBytes) / (ts' - ts)
        u_j = min(qlen', qlen) / (B_j * T) + txRate_j / B_j
      u = max_j u_j; U = (1 - tau/T) * U + tau/T * u, tau = time since the previous sample
      (capped at T): an EWMA over one base RTT of per-ACK samples.
    ComputeWind(U, updateWc):
      if U >= eta or incStage >= maxStage:  W = Wc / (U / eta) + W_AI  (multiplicative)
          if updateWc: incStage = 0; Wc = W
      else:                                 W = Wc + W_AI              (additive)
          if updateWc: incStage += 1; Wc = W
    NewAck(ack): updateWc only when the ACK's sequence passed lastUpdateSeq (then
      lastUpdateSeq = snd_nxt): the reference window Wc moves once per RTT, W on every ACK.
      Pacing rate R = W / T.

Units and INT mapping (p4src/include/INT_LAYOUT.md): the INT-MD header's ds_flags and time
scale give the units of the hop records (``HopInt.ts_unit_ns``, ``HopInt.qdepth_in_bytes``),
so that every term is in fabric time: rates and the base RTT T are the fabric's, whatever
clock the switches stamp with (BMv2's wall clock runs D times faster than a dilated fabric).
* qlen: bytes when the switches report bytes (the virtual-time fabric); in packets (BMv2
  ``deq_qdepth``) it is converted as ``qdepth_pkts * mtu_bytes`` (an upper bound: packets in
  the queue are at most one MTU).
* txBytes/ts: ``egress_tx_bytes`` (wraps at 2^32) and ``egress_timestamp`` (wraps at 2^32).
  The paper measures between consecutive records of a hop. Both counters are quantised,
  so txRate is measured against an older record of the hop, kept until a newer one is far
  enough apart for at most 25 % quantisation error, and held between such measurements;
  the queue term uses the previous record as the paper does. Time: in microseconds
  consecutive ACKs often carry the same timestamp and a 1 us delta can be anything from
  just above 0 to 2 us, so records must be ``min_ts_delta_us`` (4 us) apart. Bytes: the
  counter steps by whole frames, and egress timestamps of one port can be closer than a
  frame's wire time (a pipeline stamps before the serializer; our traffic manager lets a
  port that idled for less than a frame's wire time catch up, p4switch/switch/tm.py): one
  frame in 7 ns reads as 1.4 Tb/s, u = 14 on a 100 Gb/s link. So records must also span
  ``min_rate_frames`` (4) MTU frames at the hop's link rate.
* Several paths (per-packet spraying, flowlet switching): the state is per link, keyed by
  (switch, egress port), not by the hop's position on the path, so each record is compared
  with this flow's previous record of the same link, however many ACKs of other paths came
  between: the bytes the link sent in that interval over its length is the link's rate, as
  on one path. (Per position, as the paper's single path and the HPCC ns-3 model keep it,
  a sprayed flow's hops change on most ACKs and every change restarted the measurement:
  only the shared last hop was ever measured.) A record older than the link's previous one
  (its ACK overtook by another path) is old news and skipped.
* tau: the EWMA weight comes from the sender's own clock (ACK arrival spacing, ns) rather
  than from the microsecond INT timestamps, so that every ACK contributes its share and U
  really averages over a base RTT. (Weighting whole-microsecond gaps instead lets each
  flow's U follow the queue's sub-RTT noise, and two flows' windows random-walk apart.)
* B_j: ``egress_link_rate`` in Mb/s of fabric time.

Defaults: eta = 0.95, maxStage = 5 (paper); W_AI = R_AI * T with R_AI = 40 Mb/s, the HPCC
ns-3 set-up's 10 Mb/s per 25 Gb/s of line rate at 100 Gb/s; W_init = line rate * T (one BDP,
the paper's starting window); T (base RTT) must match the fabric and is settable. W_AI is
what pulls competing flows to a fair share (multiplicative steps keep their ratio): the
small default converges over thousands of RTTs; a larger ``rate_ai_bps`` converges faster
at the cost of a slightly fuller queue.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from mypy_extensions import mypyc_attr

from nicmodel.cc.base import AckInfo, CongestionControl, HopInt, clamp, ewma

_WRAP32: Final = 1 << 32


@dataclass
class HpccParams:
    """HPCC knobs; base RTT in ns, rates in bit/s, sizes in bytes."""

    base_rtt_ns: int = 8_000
    eta: float = 0.95
    max_stage: int = 5
    rate_ai_bps: float = 40e6
    min_rate_bps: float = 100e6
    mtu_bytes: int = 1024
    min_ts_delta_us: int = 4
    min_rate_frames: int = 4

    def validate(self, line_rate_bps: float) -> None:
        if self.base_rtt_ns <= 0:
            raise ValueError("hpcc base_rtt_ns must be positive")
        if not 0 < self.eta <= 1:
            raise ValueError(f"hpcc eta must be in (0, 1], got {self.eta}")
        if self.max_stage < 0:
            raise ValueError("hpcc max_stage must be >= 0")
        if self.mtu_bytes <= 0 or self.min_ts_delta_us <= 0 or self.min_rate_frames <= 0:
            raise ValueError("hpcc mtu_bytes, min_ts_delta_us and min_rate_frames must be positive")
        if not 0 < self.min_rate_bps <= line_rate_bps:
            raise ValueError("hpcc min_rate_bps must be in (0, line rate]")


@mypyc_attr(allow_interpreted_subclasses=True)  # as CongestionControl
class Hpcc(CongestionControl):
    """HPCC sender state for one queue pair (window plus pacing rate W / T). It reacts to
    ACKs only: no ECN (CNPs), no timers."""

    name = "hpcc"

    def __init__(self, line_rate_bps: float, params: HpccParams | None = None) -> None:
        self.params = params or HpccParams()
        self.params.validate(line_rate_bps)
        self.line_rate_bps = line_rate_bps
        t_s = self.params.base_rtt_ns / 1e9
        self.w_init = line_rate_bps * t_s / 8
        self.w_ai = self.params.rate_ai_bps * t_s / 8
        self.w_min = self.params.min_rate_bps * t_s / 8
        self.window_bytes = self.w_init
        self.reference_window = self.w_init  # Wc
        self.rate_bps = line_rate_bps
        self.utilization = 0.0  # U (EWMA)
        self.inc_stage = 0
        self.last_update_seq: int | None = None  # None: the first ACK updates Wc
        self.reference_updates = 0
        self._links: dict[tuple[int, int], _HopState] = {}  # by (switch id, egress port)
        self._path: tuple[HopInt, ...] = ()  # the newest ACK's records
        self._last_sample_ns: int | None = None

    @property
    def hops_seen(self) -> int:
        """How many switch hops the echoed INT of this flow's path carries."""
        return len(self._path)

    @property
    def last_int(self) -> tuple[HopInt, ...]:
        """The newest ACK's INT records, source side first."""
        return self._path

    def on_ack(self, ack: AckInfo) -> None:
        if not ack.hops:
            return  # no telemetry on this path: nothing to react to
        self._path = ack.hops
        if not self._measure_inflight(ack.hops, ack.now_ns):
            return  # no hop gave a sample yet; the RTT boundary waits for one that does
        # The packet sent when Wc last moved (PSN = recorded snd_nxt) is now acknowledged:
        # one RTT has passed, so this ACK also moves the reference window.
        # (PSNs given to congestion control are absolute, so plain >= holds across the wrap.)
        update_wc = self.last_update_seq is None or ack.acked_psn >= self.last_update_seq
        self._compute_window(update_wc)
        if update_wc:
            self.last_update_seq = ack.next_psn
            self.reference_updates += 1

    # -- Algorithm 1 --------------------------------------------------------------------
    def _measure_inflight(self, hops: tuple[HopInt, ...], now_ns: int) -> bool:
        """Update U from one ACK's INT; False when no hop gave a usable sample yet."""
        p = self.params
        best_u: float | None = None
        for hop in hops:
            st = self._links.get((hop.switch_id, hop.egress_port))
            if st is None:
                self._links[(hop.switch_id, hop.egress_port)] = _HopState(hop)  # first record: a reference
                continue
            if (hop.egress_ts_us - st.last.egress_ts_us) % _WRAP32 >= _WRAP32 // 2:
                continue  # older than the link's previous record: its ACK came by a faster path
            rate_bps = hop.link_rate_mbps * 1e6
            dt_ns = ((hop.egress_ts_us - st.rate_ref.egress_ts_us) % _WRAP32) * hop.ts_unit_ns
            min_dt_ns = float(p.min_ts_delta_us * 1000) if hop.ts_unit_ns > 1 else 1.0
            if rate_bps > 0:
                min_dt_ns = max(min_dt_ns, p.min_rate_frames * p.mtu_bytes * 8e9 / rate_bps)
            if dt_ns >= min_dt_ns:
                st.tx_bps = ((hop.tx_bytes - st.rate_ref.tx_bytes) % _WRAP32) * 8 / (dt_ns * 1e-9)
                st.rate_ref = hop
            prev_qdepth = st.last.qdepth_pkts
            st.last = hop
            if st.tx_bps is None or rate_bps <= 0:
                continue  # no rate measured over a long enough interval yet
            qlen = min(hop.qdepth_pkts, prev_qdepth)
            qlen_bytes = qlen if hop.qdepth_in_bytes else qlen * p.mtu_bytes
            u = qlen_bytes * 8 / (rate_bps * p.base_rtt_ns * 1e-9) + st.tx_bps / rate_bps
            if best_u is None or u > best_u:
                best_u = u
        if best_u is None:
            return False
        t = p.base_rtt_ns
        tau = t if self._last_sample_ns is None else min(now_ns - self._last_sample_ns, t)
        self._last_sample_ns = now_ns
        self.utilization = ewma(self.utilization, best_u, tau / t)
        return True

    def _compute_window(self, update_wc: bool) -> None:
        p = self.params
        u = self.utilization
        if u >= p.eta or self.inc_stage >= p.max_stage:
            window = self.reference_window / (max(u, 1e-9) / p.eta) + self.w_ai
            if update_wc:
                self.inc_stage = 0
        else:
            window = self.reference_window + self.w_ai
            if update_wc:
                self.inc_stage += 1
        window = clamp(window, self.w_min, self.w_init)
        if update_wc:
            self.reference_window = window
        self.window_bytes = window
        self.rate_bps = window * 8 / (p.base_rtt_ns / 1e9)


class _HopState:
    """What the sender remembers of one link: its previous record (for the queue term,
    min(qlen', qlen)) and the older record the transmit rate is measured from."""

    __slots__ = ("last", "rate_ref", "tx_bps")

    def __init__(self, hop: HopInt) -> None:
        self.last = hop
        self.rate_ref = hop
        self.tx_bps: float | None = None
