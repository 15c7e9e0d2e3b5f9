"""TIMELY: rate control from the RTT gradient.

Mittal et al., "TIMELY: RTT-based Congestion Control for the Datacenter", SIGCOMM 2015,
Algorithm 1. Once per completion event (``segment_bytes`` acknowledged; the paper updates
per 16-64 KB segment) with the newest RTT sample:

    new_rtt_diff = new_rtt - prev_rtt;  prev_rtt = new_rtt
    rtt_diff = (1 - alpha) * rtt_diff + alpha * new_rtt_diff
    gradient = rtt_diff / min_rtt
    if new_rtt < T_low:   rate += delta                               (additive)
    elif new_rtt > T_high: rate *= 1 - beta * (1 - T_high / new_rtt)  (multiplicative)
    elif gradient <= 0:   rate += N * delta, N = 5 after 5 consecutive non-positive
                          gradients (hyperactive increase, HAI), else 1
    else:                 rate *= 1 - beta * gradient

Defaults: one source, the TIMELY paper's parameter set (beta = 0.8, delta = 10 Mb/s,
T_low = 50 us, T_high = 500 us, HAI after N = 5 non-positive gradients, 16-64 KB
segments) as the HPCC authors' ns-3 model encodes it (which also gives alpha = 0.875 and
the 1 Gb/s rate floor), scaled from the paper's 10 Gb/s links to 100 Gb/s: the two
thresholds divided by 10 (T_low = 5 us, T_high = 50 us: the same queue in bytes, 62.5 KB
and 625 KB) and delta multiplied by 10 (100 Mb/s: the same step relative to the line
rate, per update). ``min_rtt_ns`` should be the fabric's base RTT. Being rate-based
without a window, TIMELY sends a message shorter than its first feedback at line rate.

Measured (tests/fabricsim/test_fsim_missions.py, 2 senders x 8 MiB into one 100 Gb/s
port, switch ECN off): the paper's unscaled 10 Gb/s values end at 2.8 Gb/s per flow (the
first, line-rate RTT builds a queue the gradient rule cuts hard, then delta = 10 Mb/s per
16 KB acknowledged barely climbs); the scaled defaults bring both flows back to about
48 Gb/s each (fair share 50) with a mean queue of about 2 KB. Additive increase still
makes the climb after the start-up cut take about a millisecond, so short transfers see
lower utilisation than long ones.
"""

from __future__ import annotations

from dataclasses import dataclass

from mypy_extensions import mypyc_attr

from nicmodel.cc.base import AckInfo, CongestionControl, clamp, ewma


@dataclass
class TimelyParams:
    """TIMELY knobs; times in ns, rates in bit/s, sizes in bytes."""

    t_low_ns: int = 5_000
    t_high_ns: int = 50_000
    min_rtt_ns: int = 8_000
    alpha: float = 0.875
    beta: float = 0.8
    delta_bps: float = 100e6
    hai_threshold: int = 5
    hai_multiplier: int = 5
    segment_bytes: int = 16 * 1024
    min_rate_bps: float = 1e9

    def validate(self, line_rate_bps: float) -> None:
        if not 0 < self.t_low_ns < self.t_high_ns:
            raise ValueError("timely needs 0 < t_low_ns < t_high_ns")
        if self.min_rtt_ns <= 0 or self.segment_bytes <= 0:
            raise ValueError("timely min_rtt_ns and segment_bytes must be positive")
        if not 0 < self.alpha <= 1 or not 0 < self.beta <= 1:
            raise ValueError("timely alpha and beta must be in (0, 1]")
        if not 0 < self.min_rate_bps <= line_rate_bps:
            raise ValueError("timely min_rate_bps must be in (0, line rate]")


@mypyc_attr(allow_interpreted_subclasses=True)  # as CongestionControl
class Timely(CongestionControl):
    """TIMELY sender state for one queue pair (rate-based). Delay is its only signal: it
    reacts to ACKs (RTT samples), not to ECN (CNPs) or timers."""

    name = "timely"

    def __init__(self, line_rate_bps: float, params: TimelyParams | None = None) -> None:
        self.params = params or TimelyParams()
        self.params.validate(line_rate_bps)
        self.line_rate_bps = line_rate_bps
        self.rate_bps = line_rate_bps
        self.prev_rtt_ns: int | None = None
        self.rtt_diff_ns = 0.0
        self.negative_gradients = 0
        self.updates = 0
        self._acked_since_update = 0
        self._last_rtt_ns: int | None = None

    def on_ack(self, ack: AckInfo) -> None:
        if ack.rtt_ns is not None:
            self._last_rtt_ns = ack.rtt_ns
        self._acked_since_update += ack.acked_bytes
        if self._last_rtt_ns is None or self._acked_since_update < self.params.segment_bytes:
            return
        self._acked_since_update = 0
        self.update(self._last_rtt_ns)

    def update(self, new_rtt_ns: int) -> None:
        """One completion event with RTT sample ``new_rtt_ns`` (Algorithm 1)."""
        p = self.params
        self.updates += 1
        if self.prev_rtt_ns is None:
            self.prev_rtt_ns = new_rtt_ns
            return  # the first sample only sets the reference for the gradient
        new_diff = new_rtt_ns - self.prev_rtt_ns
        self.prev_rtt_ns = new_rtt_ns
        self.rtt_diff_ns = ewma(self.rtt_diff_ns, new_diff, p.alpha)
        gradient = self.rtt_diff_ns / p.min_rtt_ns
        rate = self.rate_bps
        if new_rtt_ns < p.t_low_ns:
            rate += p.delta_bps
        elif new_rtt_ns > p.t_high_ns:
            rate *= 1 - p.beta * (1 - p.t_high_ns / new_rtt_ns)
        elif gradient <= 0:
            self.negative_gradients += 1
            n = p.hai_multiplier if self.negative_gradients >= p.hai_threshold else 1
            rate += n * p.delta_bps
        else:
            self.negative_gradients = 0
            rate *= 1 - p.beta * gradient
        self.rate_bps = clamp(rate, p.min_rate_bps, self.line_rate_bps)
