"""The I/O loop of the switch process: raw-socket ports in, device, ports out.

One thread waits on every port socket and on a wake-up pipe (poked when another thread, such
as the P4Runtime server, gives the device work: a packet-out or a rate change), hands frames to
:meth:`Device.receive` and calls :meth:`Device.poll` to run departures, sleeping exactly until
the next fabric-time event converted to wall time by the clock.
"""

from __future__ import annotations

import os
import selectors
import threading

from p4switch.switch.device import Device
from p4switch.switch.ports import RawPort

RX_BATCH = 64  # frames read from one port before the queues are served again
MAX_SLEEP_S = 0.2  # bound on a sleep, so a stop request is seen promptly


class SwitchLoop:
    def __init__(self, device: Device, ports: list[RawPort]) -> None:
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
        sel = selectors.DefaultSelector()
        sel.register(self._wake_r, selectors.EVENT_READ, None)
        for p in self.ports:
            sel.register(p, selectors.EVENT_READ, p)
        try:
            while not self.stop_event.is_set():
                nxt = device.poll()
                if nxt is None:
                    timeout = MAX_SLEEP_S
                else:
                    timeout = min(MAX_SLEEP_S, clock.wall_seconds(nxt - clock.now_ns()))
                for key, _ in sel.select(timeout):
                    port = key.data
                    if port is None:
                        try:
                            while os.read(self._wake_r, 4096):
                                pass
                        except BlockingIOError:
                            pass
                        continue
                    for _ in range(RX_BATCH):
                        frame = port.recv()
                        if frame is None:
                            break
                        device.receive(port.port, frame)
        finally:
            sel.close()
            os.close(self._wake_r)
            os.close(self._wake_w)
            device.notify = None
