"""Test ports shared by the switch, fabric and socket tests: an in-memory switch port, and
receiving from a real packet socket with a deadline."""

from __future__ import annotations

import select
import time
from collections.abc import Callable

from netbase.packet_socket import PacketSocketPort


class MemoryPort:
    """A port that keeps every frame the switch sends on it."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []

    def send(self, frame: bytes) -> bool:
        self.sent.append(frame)
        return True


class BatchMemoryPort(MemoryPort):
    """A MemoryPort that also takes many frames per call, as the packet-socket port does
    (``send_frames``); keeps each call's frames, and refuses the frames ``refuse`` picks."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[bytes]] = []
        self.refuse: Callable[[bytes], bool] = lambda frame: False

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
