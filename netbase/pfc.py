"""MAC control pause frames (IEEE 802.1Qbb PFC and 802.3 Annex 31B PAUSE): the one parser
and builder of this wire format, shared by the NIC model (obeys pauses), the simulated
switch (sends and obeys them) and the software switch's MAC (p4switch/switch/pfc.py).

A MAC control frame has EtherType 0x8808 and a 16-bit opcode; a MAC consumes every one
of them and never passes it up. PFC (opcode 0x0101, destination 01-80-C2-00-00-01): a
16-bit class-enable vector (bit i = priority i), then eight 16-bit pause times, one per
priority, in quanta of 512 bit times at the receiving port's speed; a time of 0 for an
enabled class means "resume now". PAUSE (opcode 0x0001): one pause time for the whole
link, i.e. for every priority. Frames are padded to the 60-byte minimum.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

PFC_DST_MAC = bytes.fromhex("0180c2000001")
ETH_P_MAC_CONTROL = 0x8808
PFC_OPCODE = 0x0101
PAUSE_OPCODE = 0x0001
PRIORITIES = 8
QUANTUM_BITS = 512
MIN_FRAME = 60
ALL_PRIORITIES = (1 << PRIORITIES) - 1
# PFC watchdog detection/restoration time by default (200 ms, the common switch default): the
# switch's watchdog uses it, and a controller keeps its stale-pause limits above it.
WATCHDOG_DEFAULT_NS = 200_000_000
_BODY = struct.Struct("!HH8H")
_PAUSE = struct.Struct("!HH")
_OPCODE = struct.Struct("!H")


@dataclass(frozen=True)
class PauseFrame:
    """A parsed pause frame: which priorities it addresses and their pause times (quanta).
    An 802.3x PAUSE addresses every priority with its one time."""

    src_mac: bytes
    class_enable: int
    quanta: tuple[int, ...]  # 8 entries, index = priority
    opcode: int = PFC_OPCODE

    def enabled(self) -> list[int]:
        """Priorities whose pause time this frame sets."""
        return [p for p in range(PRIORITIES) if self.class_enable >> p & 1]

    def times(self) -> tuple[int | None, ...]:
        """Per priority: the pause time in quanta, or None when the frame leaves it alone."""
        return tuple(q if self.class_enable >> p & 1 else None for p, q in enumerate(self.quanta))


class UnsupportedOpcode(ValueError):
    """A well-formed MAC control frame that is neither PFC nor PAUSE (a MAC consumes and
    counts it)."""

    def __init__(self, opcode: int) -> None:
        super().__init__(f"MAC control opcode {opcode:#06x} is neither PFC nor PAUSE")
        self.opcode = opcode


def is_mac_control(frame: bytes) -> bool:
    """True for any MAC control frame (EtherType 0x8808): the MAC's to consume. (Two byte
    reads, not a slice: every frame a switch or a NIC receives is asked.)"""
    return len(frame) >= 14 and frame[12] == 0x88 and frame[13] == 0x08


def parse(frame: bytes) -> PauseFrame:
    """Parse a PFC or PAUSE frame. Raises :class:`UnsupportedOpcode` for other MAC control
    opcodes and ValueError for anything else (not MAC control, truncated)."""
    if not is_mac_control(frame):
        raise ValueError("not a MAC control frame (EtherType 0x8808)")
    if len(frame) < 16:
        raise ValueError("truncated MAC control frame")
    opcode = _OPCODE.unpack_from(frame, 14)[0]
    if opcode == PFC_OPCODE:
        if len(frame) < 14 + _BODY.size:
            raise ValueError("truncated PFC frame")
        _, cev, *quanta = _BODY.unpack_from(frame, 14)
        return PauseFrame(frame[6:12], cev & ALL_PRIORITIES, tuple(quanta))
    if opcode == PAUSE_OPCODE:
        if len(frame) < 14 + _PAUSE.size:
            raise ValueError("truncated PAUSE frame")
        time = _PAUSE.unpack_from(frame, 14)[1]
        return PauseFrame(frame[6:12], ALL_PRIORITIES, (time,) * PRIORITIES, PAUSE_OPCODE)
    raise UnsupportedOpcode(opcode)


def build(src_mac: bytes, quanta: dict[int, int]) -> bytes:
    """A PFC frame pausing each priority in ``quanta`` for the given number of quanta
    (0 = resume); other priorities are not enabled."""
    cev = 0
    times = [0] * PRIORITIES
    for prio, q in quanta.items():
        if not 0 <= prio < PRIORITIES or not 0 <= q <= 0xFFFF:
            raise ValueError(f"bad PFC priority/quanta {prio}/{q}")
        cev |= 1 << prio
        times[prio] = q
    return _pad(PFC_DST_MAC + src_mac + struct.pack("!H", ETH_P_MAC_CONTROL)
                + _BODY.pack(PFC_OPCODE, cev, *times))


def build_pause(src_mac: bytes, quanta: int) -> bytes:
    """An 802.3x PAUSE frame: the whole link (every priority) for ``quanta`` (0 = resume)."""
    if not 0 <= quanta <= 0xFFFF:
        raise ValueError(f"bad PAUSE quanta {quanta}")
    return _pad(PFC_DST_MAC + src_mac + struct.pack("!H", ETH_P_MAC_CONTROL)
                + _PAUSE.pack(PAUSE_OPCODE, quanta))


def _pad(frame: bytes) -> bytes:
    return frame + bytes(MIN_FRAME - len(frame))


def quanta_to_ns(quanta: int, line_rate_bps: float) -> int:
    """Pause duration of ``quanta`` at ``line_rate_bps`` (rounded up to whole ns)."""
    return -(-quanta * QUANTUM_BITS * 1_000_000_000 // int(line_rate_bps))
