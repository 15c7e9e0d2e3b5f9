"""IEEE 802.1Qbb priority flow control (PFC) pause frames: the one parser and builder.

A PFC frame is a MAC control frame: destination 01-80-C2-00-00-01, EtherType 0x8808,
opcode 0x0101, a 16-bit class-enable vector (bit i = priority i), then eight 16-bit pause
times, one per priority, in quanta of 512 bit times at the receiving port's speed. A time
of 0 for an enabled class means "resume now". The frame is padded to the 60-byte minimum.
Shared by the NIC (obeys pauses) and switch models (send them).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

PFC_DST_MAC = bytes.fromhex("0180c2000001")
ETH_P_MAC_CONTROL = 0x8808
PFC_OPCODE = 0x0101
PRIORITIES = 8
QUANTUM_BITS = 512
MIN_FRAME = 60
_BODY = struct.Struct("!HH8H")


@dataclass(frozen=True)
class PauseFrame:
    """A parsed PFC frame: which priorities it addresses and their pause times (quanta)."""

    src_mac: bytes
    class_enable: int
    quanta: tuple[int, ...]  # 8 entries, index = priority

    def enabled(self) -> list[int]:
        """Priorities whose pause time this frame sets."""
        return [p for p in range(PRIORITIES) if self.class_enable >> p & 1]


def is_pfc(frame: bytes) -> bool:
    """True for a MAC control frame addressed to the PFC multicast address."""
    return frame[:6] == PFC_DST_MAC and frame[12:14] == b"\x88\x08"


def parse(frame: bytes) -> PauseFrame:
    """Parse a PFC frame; raises ValueError for other MAC control opcodes or truncation."""
    if not is_pfc(frame):
        raise ValueError("not a MAC control frame to 01-80-C2-00-00-01")
    if len(frame) < 14 + _BODY.size:
        raise ValueError("truncated PFC frame")
    opcode, cev, *quanta = _BODY.unpack_from(frame, 14)
    if opcode != PFC_OPCODE:
        raise ValueError(f"MAC control opcode {opcode:#06x} is not PFC")
    return PauseFrame(frame[6:12], cev & 0xFF, tuple(quanta))


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
    frame = PFC_DST_MAC + src_mac + struct.pack("!H", ETH_P_MAC_CONTROL) + _BODY.pack(
        PFC_OPCODE, cev, *times)
    return frame + bytes(MIN_FRAME - len(frame))


def quanta_to_ns(quanta: int, line_rate_bps: float) -> int:
    """Pause duration of ``quanta`` at ``line_rate_bps`` (rounded up to whole ns)."""
    return -(-quanta * QUANTUM_BITS * 1_000_000_000 // int(line_rate_bps))
