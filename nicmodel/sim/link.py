"""A simulated point-to-point wire: serialization at a rate, propagation delay, and the
impairments transport tests need (loss, reordering, duplication), all drawn from a seeded
RNG so that every run of a test sees the same packets lost.

One ``Link`` is one direction. The transmitting side (a NIC driver or a switch port) calls
``transmit`` only when ``idle_at(now)``; the link then delivers the frame to the far end's
``receive(frame)`` after serialization plus propagation (plus the reordering delay when a
frame is chosen to be overtaken).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from netbase.ethernet import wire_time_ns
from nicmodel.sim.engine import Simulator


@dataclass
class LinkConfig:
    """Wire properties; rates in bit/s, times in ns, probabilities per frame."""

    rate_bps: float = 100e9
    delay_ns: int = 1_000
    loss: float = 0.0
    reorder: float = 0.0
    reorder_delay_ns: int = 5_000
    duplicate: float = 0.0

    def validate(self) -> None:
        if self.rate_bps <= 0 or self.delay_ns < 0 or self.reorder_delay_ns < 0:
            raise ValueError("link rate must be positive and delays non-negative")
        for name in ("loss", "reorder", "duplicate"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"link {name} probability must be in [0, 1]")


@dataclass
class LinkCounters:
    """What the wire carried and did to it; ``busy_ns`` over elapsed time is its utilisation."""

    frames: int = 0
    bytes: int = 0
    lost: int = 0
    reordered: int = 0
    duplicated: int = 0
    busy_ns: int = 0


class Link:
    """One direction of a wire from a transmitter to ``deliver`` (the far end's receive)."""

    def __init__(
        self,
        sim: Simulator,
        config: LinkConfig,
        deliver: Callable[[bytes], None],
        rng: random.Random | None = None,
        name: str = "",
    ) -> None:
        config.validate()
        self.sim = sim
        self.config = config
        self.deliver = deliver
        self.rng = rng or random.Random(0)
        self.name = name
        self.counters = LinkCounters()
        self._busy_until = 0

    def serialization_ns(self, nbytes: int) -> int:
        # Rounded, never 0: two frames put on the wire at one instant must arrive in order.
        return max(1, round(wire_time_ns(nbytes, self.config.rate_bps)))

    def idle_at(self, now_ns: int) -> bool:
        return now_ns >= self._busy_until

    @property
    def busy_until(self) -> int:
        return self._busy_until

    def transmit(self, frame: bytes) -> int:
        """Put ``frame`` on the wire now; returns when the transmitter is free again."""
        now = self.sim.now
        start = max(now, self._busy_until)
        ser = self.serialization_ns(len(frame))
        self._busy_until = start + ser
        c = self.counters
        c.frames += 1
        c.bytes += len(frame)
        c.busy_ns += ser
        cfg = self.config
        arrival = self._busy_until + cfg.delay_ns
        if cfg.loss and self.rng.random() < cfg.loss:
            c.lost += 1
            return self._busy_until
        if cfg.reorder and self.rng.random() < cfg.reorder:
            c.reordered += 1
            arrival += cfg.reorder_delay_ns
        self.sim.at(arrival, self.deliver, frame)
        if cfg.duplicate and self.rng.random() < cfg.duplicate:
            c.duplicated += 1
            self.sim.at(arrival + ser, self.deliver, frame)
        return self._busy_until
