"""A simulated point-to-point wire: serialization at a rate, propagation delay, and the
impairments experiments need (loss, reordering, duplication, corruption, the link going down
and up), all drawn from a seeded RNG so that every run sees the same frames hit.

One ``Link`` is one direction; a cable is two. The transmitter decides when a frame starts:
a NIC driver (``SimHost``) only once ``busy_until`` has passed, a P4 switch port when its traffic
manager's serializer lets the frame go (p4switch/switch/tm.py paces the port at the link
rate with the same wire time, ``netbase.ethernet.wire_time_ns``). The link adds the
serialization and propagation time and delivers the frame to the far end's
``deliver(frame)``: serialization is modelled once, by whichever side transmits, and the
link's own busy time only ever equals it.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from mypy_extensions import i64

from fabricsim.engine import Simulator
from netbase.ethernet import WIRE_OVERHEAD_BYTES


@dataclass
class LinkConfig:
    """Wire properties; rates in bit/s, times in ns, probabilities per frame."""

    rate_bps: float = 100e9
    delay_ns: int = 1_000
    loss: float = 0.0
    reorder: float = 0.0
    reorder_delay_ns: int = 5_000
    duplicate: float = 0.0
    corrupt: float = 0.0  # one byte of the frame flipped: the receiver's checksums catch it

    def validate(self) -> None:
        if self.rate_bps <= 0 or self.delay_ns < 0 or self.reorder_delay_ns < 0:
            raise ValueError("link rate must be positive and delays non-negative")
        for name in ("loss", "reorder", "duplicate", "corrupt"):
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
    corrupted: int = 0
    down_drops: int = 0  # frames sent while the link was down
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
        self.up = True
        self._busy_until = 0
        self._rate_bps: i64 = int(config.rate_bps)

    def serialization_ns(self, nbytes: i64) -> i64:
        """A frame's time on the wire in whole ns, rounded up as the switch's serializer
        rounds, never 0: two frames put on the wire at one instant must arrive in order. Worked
        out per frame in 64-bit machine integers: a cache of it per size was a dict look-up (a
        boxed key and a cache miss), and as ``int`` the product with 8e9 (over 31 bits) took
        mypyc's general multiplication, two boxed ints and a division of longs (~1 % of a run)."""
        return max(1, -(-(nbytes + WIRE_OVERHEAD_BYTES) * 8_000_000_000 // self._rate_bps))

    def idle_at(self, now_ns: int) -> bool:
        return now_ns >= self._busy_until

    @property
    def busy_until(self) -> int:
        return self._busy_until

    def schedule_down(self, at_ns: int, up_at_ns: int | None = None) -> None:
        """Take the link down at ``at_ns`` (frames sent meanwhile are lost, frames already
        on the wire still arrive) and, if given, bring it up again at ``up_at_ns``."""
        if up_at_ns is not None and up_at_ns <= at_ns:
            raise ValueError("a link must go down before it comes up again")
        self.sim.at(at_ns, self._set_up, False)
        if up_at_ns is not None:
            self.sim.at(up_at_ns, self._set_up, True)

    def _set_up(self, up: bool) -> None:
        self.up = up

    def transmit(self, frame: bytes) -> int:
        """Put ``frame`` on the wire now; returns when the transmitter is free again."""
        now = self.sim.now
        busy = self._busy_until
        start = now if now >= busy else busy
        ser = self.serialization_ns(len(frame))
        end = self._busy_until = start + ser
        c = self.counters
        c.frames += 1
        c.bytes += len(frame)
        c.busy_ns += ser
        if not self.up:
            c.down_drops += 1
            return end
        cfg = self.config
        arrival = end + cfg.delay_ns
        if cfg.loss or cfg.reorder or cfg.duplicate or cfg.corrupt:
            rng = self.rng
            if cfg.loss and rng.random() < cfg.loss:
                c.lost += 1
                return end
            if cfg.corrupt and rng.random() < cfg.corrupt:
                c.corrupted += 1
                buf = bytearray(frame)
                buf[rng.randrange(len(buf))] ^= 1 << rng.randrange(8)
                frame = bytes(buf)
            if cfg.reorder and rng.random() < cfg.reorder:
                c.reordered += 1
                arrival += cfg.reorder_delay_ns
            if cfg.duplicate and rng.random() < cfg.duplicate:
                c.duplicated += 1
                self.sim.at(arrival, self.deliver, frame)
                self.sim.at(arrival + ser, self.deliver, frame)
                return end
        self.sim.at(arrival, self.deliver, frame)
        return end
