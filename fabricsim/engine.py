"""Discrete-event engine: a virtual clock in integer nanoseconds and a heap of events.

Everything in the simulated fabric (links, the switch model, the NIC drivers) schedules
callbacks here instead of sleeping, so a run is deterministic (ties broken by scheduling
order) and runs as fast as the CPU allows, whatever the simulated line rate.
"""

from __future__ import annotations

from collections.abc import Callable
from heapq import heappop, heappush
from typing import Any, Final

_NEVER: Final = 1 << 80  # later than any time a run is given (ns): "no until_ns" without a test per event
# An event's key is its time shifted left by this many bits, or-ed with its scheduling number:
# one int that sorts by time, then by scheduling order. A heap of ints compares with one
# integer comparison where (time, number, ...) tuples took a tuple comparison of several
# items (~300 instructions each, ~11 a pop at a few hundred pending events); times below
# 2**30 ns (1 s) keep the keys machine-sized.
_SEQ_BITS: Final = 32
_SEQ_LIMIT: Final = 1 << _SEQ_BITS


class Simulator:
    """The virtual clock and event queue shared by every simulated component."""

    def __init__(self) -> None:
        self.now = 0
        self.events_run = 0
        self._keys: list[int] = []  # a heap of event keys (see _SEQ_BITS)
        self._events: dict[int, tuple[Callable[..., Any], tuple[Any, ...]]] = {}  # key -> (callback, args)
        self._seq = 0

    def clock(self) -> int:
        """Current fabric time in ns (the clock callable handed to components)."""
        return self.now

    def at(self, when_ns: int, callback: Callable[..., Any], *args: Any) -> None:
        """Run ``callback(*args)`` at absolute time ``when_ns`` (never in the past)."""
        when_ns = int(when_ns)
        if when_ns < self.now:
            when_ns = self.now
        seq = self._seq
        if seq == _SEQ_LIMIT:
            seq = self._renumber()
        self._seq = seq + 1
        key = (when_ns << _SEQ_BITS) | seq
        self._events[key] = (callback, args)
        heappush(self._keys, key)

    def _renumber(self) -> int:
        """Number the pending events 0, 1, ... again in their order (every 2**32 events
        scheduled); returns the next free number."""
        keys = sorted(self._keys)
        events = self._events
        pending = [events.pop(key) for key in keys]
        self._keys[:] = [((key >> _SEQ_BITS) << _SEQ_BITS) | seq for seq, key in enumerate(keys)]  # sorted: a heap
        events.update(zip(self._keys, pending))
        return len(keys)

    def after(self, delay_ns: int, callback: Callable[..., Any], *args: Any) -> None:
        self.at(self.now + int(delay_ns), callback, *args)

    def pending(self) -> int:
        return len(self._keys)

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
        keys, events = self._keys, self._events
        horizon = _NEVER if until_ns is None else until_ns
        checked = stop is not None or max_events is not None  # per event, only when asked for
        while keys:
            key = keys[0]
            when = key >> _SEQ_BITS
            if when > horizon:
                self.now = horizon  # until_ns here (horizon is its int-typed alias)
                break
            heappop(keys)
            callback, args = events.pop(key)
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
