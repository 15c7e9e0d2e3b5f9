"""The I/O loop of the switch process: packet-socket ports in, device, ports out.

One thread waits on every port socket and on a wake-up pipe (poked when another thread, such
as the P4Runtime server, gives the device work: a packet-out or a rate change), hands each
port's frames to :meth:`Device.receive_frames` a read at a time and calls :meth:`Device.poll`
to run departures (whose frames leave a port in one call per poll), sleeping exactly until
the next fabric-time event converted to wall time by the clock. How late it gets to each
event once due is the device's scheduling lag (``switch_stats`` shows it).
"""

from __future__ import annotations

import os
import select
import sys
import threading
from collections.abc import Mapping
from typing import Protocol

from p4switch.switch.device import Device

RX_BATCH = 64  # frames read from one port before the queues are served again
MAX_SLEEP_S = 0.2  # bound on a sleep, so a stop request is seen promptly
# How long another thread of the switch process (P4Runtime, Thrift) may keep the GIL once the
# loop wants it back: CPython's default, 5 ms, is 5 ms of forwarding stalled and of
# scheduling lag each time a control-plane request runs, and the request itself waits as long
# again after each of its yields to forwarding. With 1 ms, `python -m bench p4runtime`'s full
# read while forwarding: worst gap 1.4-4.2 ms instead of 5.2-10.5, the Read 0.7 s instead of 2.5.
GIL_SWITCH_INTERVAL_S = 0.001


def share_the_gil_promptly() -> None:
    """Set the process's GIL switch interval to ``GIL_SWITCH_INTERVAL_S`` (the switch process
    calls it at start; so does the benchmark that measures the stall, to measure the same)."""
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)


class FramePort(Protocol):
    """What the loop reads from (a :class:`netbase.packet_socket.PacketSocketPort`)."""

    def fileno(self) -> int: ...
    def recv_frames(self, limit: int) -> list[bytes]: ...


class SwitchLoop:
    def __init__(self, device: Device, ports: Mapping[int, FramePort]) -> None:
        self.device = device
        self.ports = ports
        self.stop_event = threading.Event()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        device.notify = self.wake

    def wake(self) -> None:
        try:
            os.write(self._wake_w, b"!")
        except BlockingIOError:  # the pipe is already full of wake-ups
            pass

    def stop(self) -> None:
        self.stop_event.set()
        self.wake()

    def run(self) -> None:
        device, clock = self.device, self.device.clock
        # epoll itself, not the selectors module: a wake-up with frames costs 3,300 instructions
        # instead of 8,000, which counts when the switch wakes for every frame or two
        sel = select.epoll()
        sel.register(self._wake_r, select.EPOLLIN)
        by_fd: dict[int, tuple[int, FramePort]] = {}
        for num, p in self.ports.items():
            fd = p.fileno()
            sel.register(fd, select.EPOLLIN)
            by_fd[fd] = (num, p)
        wake_fd = self._wake_r
        due: int | None = None  # the fabric time of the event the loop last slept for
        try:
            while not self.stop_event.is_set():
                if due is not None and (now := clock.now_ns()) >= due:
                    device.sched_lag.record(due, now)
                    due = None
                nxt = device.poll()
                if nxt is not None:
                    due = nxt
                if nxt is None:
                    timeout = MAX_SLEEP_S
                else:
                    # never negative: epoll would take that as "block until something arrives"
                    timeout = max(0.0, min(MAX_SLEEP_S, clock.wall_seconds(nxt - clock.now_ns())))
                for fd, _ in sel.poll(timeout):
                    if fd == wake_fd:
                        try:
                            while os.read(wake_fd, 4096):
                                pass
                        except BlockingIOError:
                            pass
                        continue
                    num, port = by_fd[fd]
                    frames = port.recv_frames(RX_BATCH)
                    if frames:
                        device.receive_frames(num, frames)
        finally:
            sel.close()
            os.close(self._wake_r)
            os.close(self._wake_w)
            device.notify = None
