"""MAC-level PFC reception (IEEE 802.1Qbb) and the PFC watchdog.

Real switch MACs act on priority flow control below the P4 pipeline: a PFC frame received on
a port pauses that port's *egress* queues of the enabled classes, and the frame itself is
consumed by the MAC, never seen by the P4 program. This module is that MAC logic for our
target. The reference BMv2 ``simple_switch`` has no PFC at all (it forwards 0x8808 frames to
the pipeline like any other frame); this is an extension of our target, documented as such.

Wire format (802.3 Annex 31B / 802.1Qbb): dst 01-80-C2-00-00-01, EtherType 0x8808, opcode
0x0101, a 16-bit class-enable vector (bit c = class c), then eight 16-bit pause times in quanta
of 512 bit times at the port's speed. A time of 0 resumes the class at once. The older 802.3x
PAUSE (opcode 0x0001, one time) pauses every class. Any other MAC-control opcode is consumed
and counted, as a MAC does.

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

import struct
from dataclasses import dataclass, field

MAC_CONTROL_ETHERTYPE = 0x8808
PFC_DST_MAC = bytes.fromhex("0180c2000001")
OPCODE_PAUSE = 0x0001
OPCODE_PFC = 0x0101
QUANTUM_BITS = 512
NUM_CLASSES = 8
WATCHDOG_DEFAULT_NS = 200_000_000
WATCHDOG_ACTIONS = ("drop", "forward")


@dataclass(frozen=True)
class MacControlFrame:
    """A received MAC-control frame. ``times[c]`` is the pause time of class c in quanta, or
    None when the frame does not address that class. ``times`` is empty for other opcodes."""

    opcode: int
    times: tuple[int | None, ...] = ()


def parse_mac_control(frame: bytes) -> MacControlFrame | None:
    """None if ``frame`` is not a MAC-control frame; otherwise what it says. A truncated PAUSE
    or PFC frame is reported with no times (consumed, counted as malformed by the caller)."""
    if len(frame) < 16 or frame[12] != 0x88 or frame[13] != 0x08:
        return None
    opcode = struct.unpack_from("!H", frame, 14)[0]
    if opcode == OPCODE_PFC and len(frame) >= 34:
        vector = struct.unpack_from("!H", frame, 16)[0]
        quanta = struct.unpack_from("!8H", frame, 18)
        return MacControlFrame(opcode, tuple(q if vector >> c & 1 else None for c, q in enumerate(quanta)))
    if opcode == OPCODE_PAUSE and len(frame) >= 18:
        quanta = struct.unpack_from("!H", frame, 16)[0]
        return MacControlFrame(opcode, (quanta,) * NUM_CLASSES)
    return MacControlFrame(opcode)


def quanta_to_ns(quanta: int, speed_bps: float) -> int:
    """Pause duration of ``quanta`` x 512 bit times at ``speed_bps`` (fabric ns, rounded up)."""
    return -(-quanta * QUANTUM_BITS * 1_000_000_000 // int(speed_bps))


@dataclass
class WatchdogConfig:
    detection_ns: int = WATCHDOG_DEFAULT_NS
    restoration_ns: int = WATCHDOG_DEFAULT_NS
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

    def receive(self, frame: MacControlFrame, now: int, speed_bps: float) -> None:
        if frame.opcode not in (OPCODE_PFC, OPCODE_PAUSE):
            self.other_rx += 1
            return
        if not frame.times:
            self.malformed_rx += 1
            return
        self.frames_rx += 1
        for c, quanta in enumerate(frame.times):
            if quanta is not None:
                self.classes[c].pause(now, quanta_to_ns(quanta, speed_bps))
