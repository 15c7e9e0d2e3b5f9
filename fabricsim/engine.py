"""Discrete-event engine: a virtual clock in integer nanoseconds and a heap of events.

Everything in the simulated fabric (links, the switch model, the NIC drivers) schedules
callbacks here instead of sleeping, so a run is deterministic (ties broken by scheduling
order) and runs as fast as the CPU allows, whatever the simulated line rate.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from librt.vecs import append, pop, vec
from mypy_extensions import i64

# An event's key is its time shifted left by this many bits, or-ed with its scheduling number:
# one machine integer that sorts by time, then by scheduling order. The keys are a binary heap
# in a native array of 64-bit ints (librt's ``vec``), sifted by compiled code with machine
# comparisons: heapq's sift over a list of Python ints compared them through the generic rich
# comparison (~100 instructions each, ~15 a pop at a few hundred pending events). The numbers
# run out every 2**22 events (the pending ones are numbered again, in order); times must stay
# below 2**41 ns (36 minutes of fabric time) for a key to fit.
_SEQ_BITS: Final = 22
_SEQ_LIMIT: Final = 1 << _SEQ_BITS
MAX_TIME_NS: Final = (1 << (63 - _SEQ_BITS)) - 1
_NEVER: Final = MAX_TIME_NS  # "no until_ns" without a test per event


class Simulator:
    """The virtual clock and event queue shared by every simulated component."""

    def __init__(self) -> None:
        self.now = 0
        self.events_run = 0
        # a heap of event keys (see _SEQ_BITS) and, moved with each key, the slot of its event:
        # the callbacks and arguments are kept in lists at that slot (a slot is reused once its
        # event ran), which cost less than a dict from key to event (an insert and a pop, ~400
        # instructions an event)
        self._keys: vec[i64] = vec[i64]()
        self._slots: vec[i64] = vec[i64]()
        self._callbacks: list[Callable[..., Any] | None] = []
        self._args: list[tuple[Any, ...]] = []
        self._free: vec[i64] = vec[i64]()  # slots of events that ran
        self._seq = 0

    def clock(self) -> int:
        """Current fabric time in ns (the clock callable handed to components)."""
        return self.now

    def at(self, when_ns: int, callback: Callable[..., Any], *args: Any) -> None:
        """Run ``callback(*args)`` at absolute time ``when_ns`` (never in the past)."""
        when_ns = int(when_ns)
        if when_ns < self.now:
            when_ns = self.now
        elif when_ns > MAX_TIME_NS:
            raise ValueError(f"an event at {when_ns} ns is beyond the simulator's {MAX_TIME_NS} ns")
        seq = self._seq
        if seq == _SEQ_LIMIT:
            seq = self._renumber()
        self._seq = seq + 1
        slot: i64
        if len(self._free):
            self._free, slot = pop(self._free)
            self._callbacks[slot] = callback
            self._args[slot] = args
        else:
            slot = len(self._callbacks)
            self._callbacks.append(callback)
            self._args.append(args)
        self._push((when_ns << _SEQ_BITS) | seq, slot)

    def _push(self, key: i64, slot: i64) -> None:
        keys = append(self._keys, key)
        slots = append(self._slots, slot)
        i: i64 = len(keys) - 1
        while i > 0:  # up from the new leaf while the parent is later
            parent = (i - 1) >> 1
            above = keys[parent]
            if above <= key:
                break
            keys[i] = above
            slots[i] = slots[parent]
            i = parent
        keys[i] = key
        slots[i] = slot
        self._keys = keys
        self._slots = slots

    def _pop(self) -> i64:
        """Remove the earliest key (the heap is not empty) and return its event's slot."""
        first = self._slots[0]
        keys, last = pop(self._keys)
        slots, last_slot = pop(self._slots)
        n: i64 = len(keys)
        if n:
            i: i64 = 0
            while True:  # down from the root, moving the earlier child up, until ``last`` fits
                child = 2 * i + 1
                if child >= n:
                    break
                below = keys[child]
                if child + 1 < n:
                    right = keys[child + 1]
                    if right < below:
                        child += 1
                        below = right
                if last <= below:
                    break
                keys[i] = below
                slots[i] = slots[child]
                i = child
            keys[i] = last
            slots[i] = last_slot
        self._keys = keys
        self._slots = slots
        return first

    def _renumber(self) -> int:
        """Number the pending events 0, 1, ... again in their order (every 2**22 events
        scheduled); returns the next free number."""
        pending = sorted(zip(self._keys, self._slots))
        # sorted: a heap
        self._keys = vec[i64]([((key >> _SEQ_BITS) << _SEQ_BITS) | seq for seq, (key, _) in enumerate(pending)])
        self._slots = vec[i64]([slot for _, slot in pending])
        return len(pending)

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
        horizon: i64 = _NEVER if until_ns is None else min(until_ns, _NEVER)
        checked = stop is not None or max_events is not None  # per event, only when asked for
        while len(self._keys):
            when: i64 = self._keys[0] >> _SEQ_BITS
            if when > horizon:
                self.now = horizon  # until_ns here (horizon is its typed alias)
                break
            slot = self._pop()
            callback = self._callbacks[slot]
            args = self._args[slot]
            self._callbacks[slot] = None  # the event's objects go now, not when its slot is reused
            self._args[slot] = ()
            self._free = append(self._free, slot)
            self.now = when
            assert callback is not None
            callback(*args)
            ran += 1
            if checked and ((stop is not None and stop()) or (max_events is not None and ran >= max_events)):
                break
        else:
            if until_ns is not None and self.now < until_ns:
                self.now = horizon  # until_ns here (horizon is its typed alias)
        self.events_run += ran
        return ran
