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

Defaults: T_low = 50 us, T_high = 500 us, beta = 0.8, delta = 10 Mb/s, HAI after 5 (paper);
alpha = 0.02 (the authors' published code); min_rtt should be the fabric's base RTT; the
rate floor is 1 Gb/s, the HPCC ns-3 simulator's MIN_RATE. Being rate-based without a
window, TIMELY sends a message shorter than its first feedback at line rate.

The paper's thresholds were set for 10 Gb/s links and under-use 100 Gb/s: measured in the
simulator (2 senders x 2 MiB incast into one 100 Gb/s port, base RTT 4.2 us, switch ECN
off; tests/fabricsim/test_fsim_missions.py), TIMELY keeps the mean queue at 27 KB against
1.14 MB without congestion control, but finishes in 5.94 ms instead of 0.38 ms (15.6x
slower, 5.6 Gb/s of goodput against 88 Gb/s). The first, line-rate RTT builds a queue
(1.25 MB peak) whose rising delay the gradient rule cuts hard (beta = 0.8); once the RTT
is back under T_low (50 us, i.e. 625 KB of queue at 100 Gb/s) the only increase is
delta = 10 Mb/s per 16 KB acknowledged, so both senders end at about 1.5 Gb/s. Use it as
a comparison baseline and tune ``t_low_ns``, ``t_high_ns``, ``delta_bps`` (and ``beta``)
for other regimes.
"""

from __future__ import annotations

from dataclasses import dataclass

from nicmodel.cc.base import AckInfo, NoOpEvents, clamp, ewma


@dataclass
class TimelyParams:
    """TIMELY knobs; times in ns, rates in bit/s, sizes in bytes."""

    t_low_ns: int = 50_000
    t_high_ns: int = 500_000
    min_rtt_ns: int = 8_000
    alpha: float = 0.02
    beta: float = 0.8
    delta_bps: float = 10e6
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


class Timely(NoOpEvents):
    """TIMELY sender state for one queue pair (rate-based). Delay is its only signal: it
    reacts to ACKs (RTT samples), not to ECN (CNPs) or timers."""

    name = "timely"
    window_bytes: float | None = None

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
