"""Test ports shared by the switch, fabric and socket tests: an in-memory switch port, and
receiving from a real packet socket with a deadline."""

from __future__ import annotations

import select
import time
from collections.abc import Callable

from netbase.packet_socket import PacketSocketPort


class MemoryPort:
    """A port that keeps every frame the switch sends on it, but the frames ``refuse`` picks
    (its send returns False for those, as a kernel that refuses a frame)."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []
        self.refuse: Callable[[bytes], bool] = lambda frame: False

    def send(self, frame: bytes) -> bool:
        if self.refuse(frame):
            return False
        self.sent.append(frame)
        return True


class BatchMemoryPort(MemoryPort):
    """A MemoryPort that also takes many frames per call, as the packet-socket port does
    (``send_frames``); keeps each call's frames."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[bytes]] = []

    def send_frames(self, frames: list[bytes]) -> int:
        self.batches.append(list(frames))
        taken = [f for f in frames if not self.refuse(f)]
        self.sent += taken
        return len(taken)


def receive(port: PacketSocketPort, count: int, timeout: float = 10.0) -> list[bytes]:
    """Up to ``count`` frames from ``port``, waiting at most ``timeout`` seconds."""
    got: list[bytes] = []
    deadline = time.monotonic() + timeout
    while len(got) < count and (left := deadline - time.monotonic()) > 0:
        if select.select([port], [], [], left)[0]:
            got += port.recv_frames(count - len(got))
    return got
