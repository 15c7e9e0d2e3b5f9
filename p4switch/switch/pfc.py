"""MAC-level PFC reception (IEEE 802.1Qbb) and the PFC watchdog.

Real switch MACs act on priority flow control below the P4 pipeline: a PFC frame received on
a port pauses that port's *egress* queues of the enabled classes, and the frame itself is
consumed by the MAC, never seen by the P4 program. This module is that MAC logic for our
target. The reference BMv2 ``simple_switch`` has no PFC at all (it forwards 0x8808 frames to
the pipeline like any other frame); this is an extension of our target, documented as such.

The wire format (802.1Qbb PFC, 802.3 Annex 31B PAUSE) is parsed by netbase/pfc.py, the one
place that defines it for the NIC model, the simulated switch and this MAC; here is only
what a switch MAC does with a parsed frame. A PFC frame pauses each enabled class for its
time in quanta of 512 bit times at the port's speed (0 resumes at once); a PAUSE pauses every
class. Any other MAC-control opcode is consumed and counted, as a MAC does.

Class to queue mapping: class c pauses egress queue c (the queue that v1model ``priority`` c
selects with ``--priority-queues``); classes beyond the number of queues have no queue to pause
and are only counted.

Watchdog (as in SONiC's PFC watchdog): a queue that holds packets and stays paused for the
detection time is declared in a PFC storm; the action then either drops its packets and new
arrivals (``drop``) or ignores the pause (``forward``) until no pause frame has been received
on that class for the restoration time. Defaults are SONiC's: 200 ms and 200 ms, action drop,
in fabric time.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from netbase import pfc as wire

NUM_CLASSES = wire.PRIORITIES
WATCHDOG_ACTIONS = ("drop", "forward")


@dataclass
class WatchdogConfig:
    """Watchdog settings of one class on one port (fabric time); validated at construction so
    a bad CLI command changes nothing."""

    detection_ns: int = wire.WATCHDOG_DEFAULT_NS
    restoration_ns: int = wire.WATCHDOG_DEFAULT_NS
    action: str = "drop"

    def __post_init__(self) -> None:
        if self.action not in WATCHDOG_ACTIONS:
            raise ValueError(f"watchdog action must be one of {WATCHDOG_ACTIONS}, got {self.action!r}")
        if self.detection_ns <= 0 or self.restoration_ns <= 0:
            raise ValueError("watchdog detection and restoration times must be positive")


@dataclass
class ClassState:
    """Pause state and statistics of one class on one port."""

    paused_until: int = 0
    pause_start: int | None = None  # start of the current uninterrupted pause
    paused_acc_ns: int = 0  # closed pause intervals
    frames: int = 0  # pause frames addressing this class (resumes included)
    last_rx: int | None = None
    watchdog: WatchdogConfig | None = None
    storm: bool = False
    storm_since: int = 0
    restored_at: int = 0  # a new storm is counted from here, not from an older pause start
    storms_detected: int = 0
    storms_restored: int = 0

    def _close(self, now: int) -> None:
        if self.pause_start is not None and self.paused_until <= now:
            self.paused_acc_ns += self.paused_until - self.pause_start
            self.pause_start = None

    def pause(self, now: int, duration_ns: int) -> None:
        self.frames += 1
        self.last_rx = now
        self._close(now)
        if duration_ns <= 0:  # time 0: resume
            if self.pause_start is not None:
                self.paused_until = now
                self._close(now)
            return
        if self.pause_start is None:
            self.pause_start = now
        self.paused_until = now + duration_ns

    def paused(self, now: int) -> bool:
        return self.paused_until > now

    def paused_ns(self, now: int) -> int:
        open_part = min(now, self.paused_until) - self.pause_start if self.pause_start is not None else 0
        return self.paused_acc_ns + open_part

    def watchdog_deadline(self, nonempty_since: int | None) -> int | None:
        """Fabric time at which the watchdog changes state if nothing else happens."""
        wd = self.watchdog
        if wd is None:
            return None
        if self.storm:  # restored once no pause frame came for the restoration time
            return max(self.last_rx or 0, self.storm_since) + wd.restoration_ns
        if self.pause_start is None or nonempty_since is None:
            return None
        return max(self.pause_start, nonempty_since, self.restored_at) + wd.detection_ns

    def watchdog_step(self, now: int, nonempty_since: int | None) -> str | None:
        """Advance the watchdog to ``now``; returns "storm" or "restored" on a transition."""
        self._close(now)
        if self.watchdog is None:
            return None
        if not self.storm:
            if not self.paused(now):
                return None
            deadline = self.watchdog_deadline(nonempty_since)
            if deadline is not None and now >= deadline:
                self.storm = True
                self.storm_since = now
                self.storms_detected += 1
                return "storm"
            return None
        deadline = self.watchdog_deadline(nonempty_since)
        if deadline is not None and now >= deadline:
            self.storm = False
            self.restored_at = now
            self.storms_restored += 1
            return "restored"
        return None

    def blocks(self, now: int) -> bool:
        """Whether the queue of this class may not transmit now (a storm overrides the pause)."""
        return self.paused(now) and not self.storm


@dataclass
class PfcPort:
    """PFC state of one port's receive side, acting on that port's egress queues."""

    classes: list[ClassState] = field(default_factory=lambda: [ClassState() for _ in range(NUM_CLASSES)])
    frames_rx: int = 0  # PFC/PAUSE frames received
    malformed_rx: int = 0  # truncated PAUSE/PFC frames
    other_rx: int = 0  # other MAC-control opcodes

    def receive(self, frame: bytes, now: int, speed_bps: float) -> None:
        """A MAC-control frame (EtherType 0x8808) arrived: act on it or count why not."""
        try:
            parsed = wire.parse(frame)
        except wire.UnsupportedOpcode:
            self.other_rx += 1
            return
        except ValueError:  # truncated PAUSE/PFC
            self.malformed_rx += 1
            return
        self.frames_rx += 1
        for c, quanta in enumerate(parsed.times()):
            if quanta is not None:
                self.classes[c].pause(now, wire.quanta_to_ns(quanta, speed_bps))
