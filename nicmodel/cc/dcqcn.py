"""DCQCN reaction point (the sender side of DCQCN).

Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015. The
notification point (receiver, in the transport core) turns CE marks into CNPs; this class
is what the sender does with them:

* On a CNP: target rate Rt = Rc, current rate Rc = Rc * (1 - alpha/2),
  alpha = (1 - g) * alpha + g, and both increase counters restart.
* Every ``alpha_period_ns`` (K = 55 us) without a CNP: alpha = (1 - g) * alpha. The
  decay is applied lazily (whole periods elapsed since the last CNP), which gives the same
  values as a periodic timer without waking an idle queue pair every 55 us.
* Rate increase events come from a timer (T = 55 us) and a byte counter (every B bytes sent).
  Each event bumps its counter; with ``i`` timer and ``j`` byte-counter events since the
  last cut:
    - fast recovery while max(i, j) <= F (F = 5):  Rc = (Rt + Rc) / 2
    - hyper increase when min(i, j) > F:            Rt += R_HAI; Rc = (Rt + Rc) / 2
    - additive increase otherwise:                  Rt += R_AI;  Rc = (Rt + Rc) / 2
  Both rates stay within [Rmin, Rmax] (Rmax = line rate). Before the first CNP, and once
  the rate is back at line rate, no increase timer runs (nothing to recover).

Defaults follow one source, the DCQCN paper (Zhu et al., SIGCOMM 2015): g = 1/256,
K = T = 55 us, F = 5, R_AI = 40 Mb/s, byte counter B = 10 MB (the paper lets the timer
drive recovery). The paper gives no R_HAI or R_min: R_HAI = 10 x R_AI (400 Mb/s), the
ratio of QCN (IEEE 802.1Qau) whose reaction point DCQCN keeps, and R_min = 5 Gb/s, the
deployment table's "5-10 % of line rate" at the 100 Gb/s these defaults are set for.
``TABLE_PARAMS`` holds the deployment table's NIC values (byte counter 150 KB, T 55 us,
F 5, R_AI 40 Mb/s, R_min 5 % of line rate) for the ``dcqcn-table`` fabric profile, whose
switch side is Kmin 100 KB, Kmax 200 KB, Pmax 0.5. Every source is listed in
nicmodel/README.md, "Parameters and their sources".
"""

from __future__ import annotations

from dataclasses import dataclass

from mypy_extensions import mypyc_attr

from nicmodel.cc.base import CongestionControl, ewma


@dataclass
class DcqcnParams:
    """All DCQCN knobs; rates in bit/s, times in ns, sizes in bytes."""

    g: float = 1 / 256
    alpha_init: float = 1.0
    alpha_period_ns: int = 55_000
    timer_ns: int = 55_000
    byte_counter: int = 10 * 1024 * 1024
    fast_recovery_stages: int = 5
    rate_ai_bps: float = 40e6
    rate_hai_bps: float = 400e6
    min_rate_bps: float = 5e9

    def validate(self, line_rate_bps: float) -> None:
        if not 0 < self.g <= 1:
            raise ValueError(f"dcqcn g must be in (0, 1], got {self.g}")
        if not 0 <= self.alpha_init <= 1:
            raise ValueError(f"dcqcn alpha_init must be in [0, 1], got {self.alpha_init}")
        for name in ("alpha_period_ns", "timer_ns", "byte_counter"):
            if getattr(self, name) <= 0:
                raise ValueError(f"dcqcn {name} must be positive")
        if self.fast_recovery_stages < 0:
            raise ValueError("dcqcn fast_recovery_stages must be >= 0")
        if not 0 < self.min_rate_bps <= line_rate_bps:
            raise ValueError("dcqcn min_rate_bps must be in (0, line rate]")


# The deployment table's NIC-side values (overrides of the paper's defaults above).
TABLE_PARAMS: dict[str, float] = {"byte_counter": 150 * 1024, "timer_ns": 55_000,
                                  "fast_recovery_stages": 5, "rate_ai_bps": 40e6,
                                  "min_rate_bps": 5e9}


@mypyc_attr(allow_interpreted_subclasses=True)  # as CongestionControl
class Dcqcn(CongestionControl):
    """DCQCN reaction point for one queue pair (rate-based: ``window_bytes`` is None). It
    reacts to CNPs, bytes sent and its increase timer; ACKs and timeouts carry no signal."""

    name = "dcqcn"

    def __init__(self, line_rate_bps: float, params: DcqcnParams | None = None) -> None:
        self.params = params or DcqcnParams()
        self.params.validate(line_rate_bps)
        self.line_rate_bps = line_rate_bps
        self.rate_bps = line_rate_bps  # Rc: starts at line rate, as RoCE NICs do
        self.target_rate_bps = line_rate_bps  # Rt
        self.timer_events = 0  # i: increase-timer expiries since the last cut
        self.byte_events = 0  # j: byte-counter expiries since the last cut
        self.bytes_since_event = 0
        self.cnps = 0
        self.increases = {"fast": 0, "additive": 0, "hyper": 0}  # events per stage, ever
        self._increase_at: int | None = None
        self._alpha_ref_ns: int | None = None  # time of the last CNP (alpha period origin)
        self._alpha_ref = self.params.alpha_init  # alpha right after that CNP

    def alpha_at(self, now_ns: int) -> float:
        """alpha as of ``now_ns``: decayed once per full K period since the last CNP."""
        if self._alpha_ref_ns is None:
            return self._alpha_ref
        periods = max(0, now_ns - self._alpha_ref_ns) // self.params.alpha_period_ns
        return self._alpha_ref * (1 - self.params.g) ** periods

    # -- events from the transport ----------------------------------------------------
    def on_cnp(self, now_ns: int) -> None:
        p = self.params
        self.cnps += 1
        alpha = self.alpha_at(now_ns)
        self.target_rate_bps = self.rate_bps
        self.rate_bps = max(p.min_rate_bps, self.rate_bps * (1 - alpha / 2))
        self._alpha_ref, self._alpha_ref_ns = ewma(alpha, 1.0, p.g), now_ns
        self.timer_events = 0
        self.byte_events = 0
        self.bytes_since_event = 0
        self._increase_at = now_ns + p.timer_ns

    def on_packet_sent(self, now_ns: int, nbytes: int, psn: int) -> None:
        if self._increase_at is None:  # not recovering: the byte counter is idle too
            return
        self.bytes_since_event += nbytes
        while self.bytes_since_event >= self.params.byte_counter and self._recovering():
            self.bytes_since_event -= self.params.byte_counter
            self.byte_events += 1
            self._increase()

    def on_timer(self, now_ns: int) -> None:
        """Run every rate-increase timer expiry that is due."""
        p = self.params
        while (due := self._increase_at) is not None and due <= now_ns:
            self.timer_events += 1
            self._increase()
            if self._recovering():
                self._increase_at = due + p.timer_ns

    def _recovering(self) -> bool:
        """Whether a rate increase is still to come. A method, not ``self._increase_at is not
        None`` in the loops: ``_increase`` may end the recovery, but after one test of the
        attribute mypy takes its type as known across the call, and compiled code
        (``netbase.hotpath``) trusts that (a None read where an int is known raises TypeError)."""
        return self._increase_at is not None

    def next_timer(self) -> int | None:
        return self._increase_at

    # -- rate increase ----------------------------------------------------------------
    @property
    def stage(self) -> str:
        """The increase rule for the current counters (the one the latest event applied)."""
        f = self.params.fast_recovery_stages
        i, j = self.timer_events, self.byte_events
        if max(i, j) <= f:
            return "fast"
        if min(i, j) > f:
            return "hyper"
        return "additive"

    def _increase(self) -> None:
        p = self.params
        stage = self.stage
        self.increases[stage] += 1
        if stage == "hyper":
            self.target_rate_bps += p.rate_hai_bps
        elif stage == "additive":
            self.target_rate_bps += p.rate_ai_bps
        self.target_rate_bps = min(self.target_rate_bps, self.line_rate_bps)
        self.rate_bps = min(self.line_rate_bps, (self.target_rate_bps + self.rate_bps) / 2)
        if self.rate_bps >= self.line_rate_bps:
            # Fully recovered: stop the increase machinery until the next CNP.
            self.rate_bps = self.target_rate_bps = self.line_rate_bps
            self._increase_at = None
            self.bytes_since_event = 0
