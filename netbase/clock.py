"""Fabric time: the one clock abstraction of the testbed (DESIGN.md, "Time").

Every component (switch traffic manager, PFC timers, link model, NIC transport and its live
driver) reads integer nanoseconds of *fabric time* from a clock object it is given, never
from ``time`` directly. Live mode uses :class:`DilatedClock`, which runs the fabric
``dilation`` (D, ``--time-dilation``) times slower than the wall: fabric ns = wall ns
elapsed / D, so a Python switch or NIC can stand in for a 100 Gb/s fabric while timestamps,
timers and rates still read at fabric scale. Tests use :class:`ManualClock`, which only moves
when told to, so queue and timer behaviour is deterministic.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from mypy_extensions import mypyc_attr


# A base class, not a protocol: compiled (``netbase.hotpath``), a call through a protocol is a
# Python method call (~400 instructions; the switch reads the clock twice a packet), through a
# native class a C call. Clocks of other modules and tests subclass it.
@mypyc_attr(allow_interpreted_subclasses=True)
class Clock:
    """What a component needs from time: the fabric now, and how long a fabric interval
    lasts on the wall (a driver sleeps in wall time until its next fabric timer)."""

    def now_ns(self) -> int:
        """Fabric time in nanoseconds since the clock started."""
        raise NotImplementedError

    def wall_seconds(self, fabric_ns: int) -> float:
        """How many wall-clock seconds a fabric duration takes (for sleeping until a timer)."""
        raise NotImplementedError


class DilatedClock(Clock):
    """Monotonic wall clock slowed down by the time-dilation factor."""

    def __init__(self, dilation: float = 1.0, source: Callable[[], int] = time.monotonic_ns) -> None:
        if dilation <= 0:
            raise ValueError(f"time dilation must be positive, got {dilation}")
        self.dilation = float(dilation)
        self._source = source
        self._start = source()

    def now_ns(self) -> int:
        return int((self._source() - self._start) / self.dilation)

    def wall_seconds(self, fabric_ns: int) -> float:
        return max(0, fabric_ns) * self.dilation / 1e9


class ManualClock(Clock):
    """A clock that only moves through :meth:`advance` / :meth:`set` (tests, virtual time)."""

    def __init__(self, start_ns: int = 0) -> None:
        self._now = start_ns

    def now_ns(self) -> int:
        return self._now

    def advance(self, ns: int) -> int:
        if ns < 0:
            raise ValueError("time cannot go backwards")
        self._now += ns
        return self._now

    def set(self, ns: int) -> None:
        if ns < self._now:
            raise ValueError("time cannot go backwards")
        self._now = ns

    def wall_seconds(self, fabric_ns: int) -> float:
        return 0.0
