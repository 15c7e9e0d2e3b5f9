"""Test ports shared by the switch, fabric and socket tests: an in-memory switch port, and
receiving from a real packet socket with a deadline."""

from __future__ import annotations

import select
import time

from netbase.packet_socket import PacketSocketPort


class MemoryPort:
    """A port that keeps every frame the switch sends on it."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []

    def send(self, frame: bytes) -> bool:
        self.sent.append(frame)
        return True


def receive(port: PacketSocketPort, count: int, timeout: float = 10.0) -> list[bytes]:
    """Up to ``count`` frames from ``port``, waiting at most ``timeout`` seconds."""
    got: list[bytes] = []
    deadline = time.monotonic() + timeout
    while len(got) < count and (left := deadline - time.monotonic()) > 0:
        if select.select([port], [], [], left)[0]:
            got += port.recv_frames(count - len(got))
    return got
