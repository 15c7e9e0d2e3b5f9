"""Per-port link model for experiments: propagation delay and random loss.

The kernel here has no netem, so what a real cable and a lossy optic do is modelled inside the
switch, after the egress queue (the link *rate* is the port serializer of the traffic manager,
tm.py). Off by default: no delay, no loss. Loss is drawn from a seeded generator so runs repeat.
Sans-IO: frames go in with :meth:`Link.submit` and come out of :meth:`Link.due` once their
fabric delivery time is reached.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass, field


@dataclass
class Link:
    delay_ns: int = 0
    loss: float = 0.0
    seed: int = 0
    sent: int = 0
    lost: int = 0
    _pending: deque = field(default_factory=deque)
    _rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self.configure(self.delay_ns, self.loss)
        self._rng = random.Random(self.seed)

    def configure(self, delay_ns: int | None = None, loss: float | None = None) -> None:
        if delay_ns is not None:
            if delay_ns < 0:
                raise ValueError("link delay must not be negative")
            self.delay_ns = int(delay_ns)
        if loss is not None:
            if not 0.0 <= loss <= 1.0:
                raise ValueError("link loss must be a probability in [0, 1]")
            self.loss = float(loss)

    def submit(self, frame: bytes, now: int) -> bool:
        """Put a frame on the link at ``now``; False if the link loses it."""
        if self.loss and self._rng.random() < self.loss:
            self.lost += 1
            return False
        self.sent += 1
        due = now + self.delay_ns
        if self._pending and self._pending[-1][0] > due:  # a shortened delay never reorders
            due = self._pending[-1][0]
        self._pending.append((due, frame))
        return True

    def due(self, now: int) -> list[bytes]:
        """Frames whose delivery time has come, in order."""
        out = []
        pending = self._pending
        while pending and pending[0][0] <= now:
            out.append(pending.popleft()[1])
        return out

    def next_due(self) -> int | None:
        return self._pending[0][0] if self._pending else None
