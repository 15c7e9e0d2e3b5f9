"""Discrete-event engine: a virtual clock in integer nanoseconds and a heap of events.

Everything in the simulated fabric (links, the switch model, the NIC drivers) schedules
callbacks here instead of sleeping, so a run is deterministic (ties broken by scheduling
order) and runs as fast as the CPU allows, whatever the simulated line rate.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from heapq import heappop, heappush
from typing import Any, Final

_NEVER: Final = 1 << 80  # later than any time a run is given (ns): "no until_ns" without a test per event


class Simulator:
    """The virtual clock and event queue shared by every simulated component."""

    def __init__(self) -> None:
        self.now = 0
        self.events_run = 0
        self._heap: list[tuple[int, int, Callable[..., Any], tuple[Any, ...]]] = []
        self._seq = itertools.count()

    def clock(self) -> int:
        """Current fabric time in ns (the clock callable handed to components)."""
        return self.now

    def at(self, when_ns: int, callback: Callable[..., Any], *args: Any) -> None:
        """Run ``callback(*args)`` at absolute time ``when_ns`` (never in the past)."""
        when_ns = int(when_ns)
        if when_ns < self.now:
            when_ns = self.now
        heappush(self._heap, (when_ns, next(self._seq), callback, args))

    def after(self, delay_ns: int, callback: Callable[..., Any], *args: Any) -> None:
        self.at(self.now + int(delay_ns), callback, *args)

    def pending(self) -> int:
        return len(self._heap)

    def run(
        self,
        until_ns: int | None = None,
        stop: Callable[[], bool] | None = None,
        max_events: int | None = None,
    ) -> int:
        """Run events in time order until the queue is empty, ``until_ns`` is reached,
        ``stop()`` turns true (checked after each event) or ``max_events`` ran.
        Returns the number of events run by this call."""
        ran = 0
        heap = self._heap
        pop = heappop
        horizon = _NEVER if until_ns is None else until_ns
        checked = stop is not None or max_events is not None  # per event, only when asked for
        while heap:
            when = heap[0][0]
            if when > horizon:
                self.now = horizon  # until_ns here (horizon is its int-typed alias)
                break
            _, _, callback, args = pop(heap)
            self.now = when
            callback(*args)
            ran += 1
            if checked and ((stop is not None and stop()) or (max_events is not None and ran >= max_events)):
                break
        else:
            if until_ns is not None and self.now < until_ns:
                self.now = horizon  # until_ns here (horizon is its int-typed alias)
        self.events_run += ran
        return ran
