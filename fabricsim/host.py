"""A simulated host: drives one sans-IO ``Nic`` (and its workload endpoint) from the
virtual clock, exactly as the NIC's driver contract asks: after every received frame and
at every ``next_wakeup``, call ``poll_transmit`` until it returns nothing."""

from __future__ import annotations

from collections.abc import Callable

from fabricsim.background import BackgroundFlow, BackgroundSink, is_background
from fabricsim.engine import Simulator
from fabricsim.link import Link
from nicmodel.nic import Nic
from nicmodel.workloads import Endpoint


class SimHost:
    """One host on the simulated fabric: the NIC, its uplink and its workload endpoint,
    woken by the simulator only when the NIC or the link asks for it (no polling)."""

    def __init__(self, sim: Simulator, nic: Nic, name: str) -> None:
        self.sim = sim
        self.nic = nic
        self.name = name
        # its port into the fabric; a ``Link`` (typed: compiled, its calls are C calls, where a
        # protocol's were a look-up by name, ~1,800 instructions a frame sent)
        self.link: Link | None = None
        self.endpoint: Endpoint | None = None
        self.on_done: Callable[[SimHost], None] | None = None  # called while the workload is done
        # best-effort background (fabricsim/background.py): sent when the NIC leaves the uplink idle
        self.background: list[BackgroundFlow] = []
        self.sink: BackgroundSink | None = None
        self._wake_at: int | None = None
        self._wakeup_event: Callable[[int], None] = self._wakeup  # bound once (see SwitchNode)

    def attach(self, uplink: Link) -> None:
        """``uplink`` carries this host's frames into the fabric."""
        self.link = uplink

    def receive(self, frame: bytes) -> None:
        if self.sink is not None and is_background(frame):
            self.sink.receive(frame, self.sim.now)  # the host stack's, not the RoCE NIC's
            return
        self.nic.receive(frame, self.sim.now)
        self.service()

    def _background_frame(self, now: int) -> bytes | None:
        """A due segment of one of the background flows, taking turns."""
        for i, flow in enumerate(self.background):
            frame = flow.poll_transmit(now)
            if frame is not None:
                self.background.append(self.background.pop(i))  # the next turn starts after it
                return frame
        return None

    def service(self) -> None:
        """Let the NIC and the workload act at the current time, then sleep until needed."""
        now = self.sim.now
        nic, ep, link = self.nic, self.endpoint, self.link
        wake: int | None = None
        if link is not None:
            busy = link.busy_until
            if now >= busy:  # the uplink is idle
                frame = nic.poll_transmit(now)
                if frame is None and self.background:
                    frame = self._background_frame(now)
                if frame is not None:
                    wake = link.transmit(frame)  # the port is ours again then: look again
            else:
                wake = busy
        if ep is not None:
            # completions of received frames and of timers fired above; new posts are
            # picked up by next_wakeup below
            ep.poll(now)
            if self.on_done is not None and ep.done:
                self.on_done(self)
        if wake is None:
            t = nic.next_wakeup(now)
            if ep is not None:
                e = ep.next_wakeup()
                if e is not None and (t is None or e < t):
                    t = e
            for flow in self.background:
                e = flow.next_wakeup(now)
                if e is not None and (t is None or e < t):
                    t = e
            if t is not None:
                wake = max(t, now + 1)
        if wake is not None and (self._wake_at is None or self._wake_at <= now or wake < self._wake_at):
            self._wake_at = wake
            self.sim.at(wake, self._wakeup_event, wake)

    def _wakeup(self, when: int) -> None:
        if when != self._wake_at:
            return  # superseded by an earlier wake-up
        self._wake_at = None
        self.service()
