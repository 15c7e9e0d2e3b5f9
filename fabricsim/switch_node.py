"""A P4 switch in the virtual-time fabric: the live switch's ``Device``, driven by the engine.

The device is the one the ``p4switch`` process runs (executor, traffic manager with 8 priority
queues per port, port serializers, PFC reception and watchdog, replication), with the engine's
clock instead of a dilated wall clock and the fabric's links instead of raw sockets. Where the
process's I/O loop waits on sockets and sleeps until ``Device.poll`` says, this node is woken
by the engine: after every frame that arrives, every wake-up of the device (packet-outs from
the controller) and at the time ``poll`` returns. Its P4Runtime service is the server's,
called in process (p4rt_conn.py).

Two target options differ from the live switch's defaults, because HPCC needs them at 100 Gb/s
(p4src/README.md, "Target options"): the v1model timestamps count nanoseconds, and the device
keeps each port's queued bytes in the program's ``port_queue_bytes`` register.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fabricsim.engine import Simulator
from fabricsim.link import Link
from netbase.clock import Clock
from p4switch.p4runtime.service import P4RuntimeService
from p4switch.switch.commands import Commands
from p4switch.switch.device import Device, check_device_config
from p4switch.switch.tm import MAX_PRIORITY_QUEUES

TIMESTAMP_UNIT_NS = 1  # v1model timestamps in nanoseconds
QUEUE_BYTES_REGISTER = "port_queue_bytes"  # fabric.p4's; a program without it is unaffected


def _no_other_thread() -> None:
    """The service's pause between chunks of a Write or Read: nothing forwards meanwhile in
    virtual time, so there is no thread to give the device lock to (a sleep(0) per chunk cost
    up to a fifth of a loaded machine's wall time in telemetry reads)."""


class EngineClock(Clock):
    """The netbase Clock on the engine's virtual time."""

    def __init__(self, sim: Simulator) -> None:
        self.sim = sim

    def now_ns(self) -> int:
        return self.sim.now

    def wall_seconds(self, fabric_ns: int) -> float:
        return 0.0  # nothing sleeps in virtual time


class LinkPort:
    """A device port whose frames go onto a simulated link (the device's PortIO)."""

    __slots__ = ("link",)

    def __init__(self, link: Link) -> None:
        self.link = link

    def send(self, frame: bytes) -> bool:
        self.link.transmit(frame)
        return True

    @property
    def oper_up(self) -> bool:
        """The PHY's state (``show_ports``): the link a cable event took down is down."""
        return self.link.up


class SwitchNode:
    """One switch: its device, its P4Runtime service, and its wake-ups on the engine."""

    def __init__(self, sim: Simulator, name: str, device_id: int, cpu_port: int, queue_depth_pkts: int,
                 check_config: Callable[[bytes], Any] = check_device_config) -> None:
        self.sim = sim
        self.name = name
        self._device_args = (device_id, cpu_port, queue_depth_pkts, check_config)
        self.ports: dict[int, Link] = {}
        self.restarts = 0
        self._wake_at: int | None = None
        # bound once: compiled, ``self._wakeup`` as a value is a look-up by name and a new
        # bound method each time the node schedules its wake-up
        self._wakeup_event: Callable[[int], None] = self._wakeup
        self._boot()

    def _boot(self) -> None:
        """A fresh device, as a started process has: no program, no entries, empty queues."""
        device_id, cpu_port, queue_depth_pkts, check_config = self._device_args
        self.device = Device(device_id, cpu_port, priority_queues=MAX_PRIORITY_QUEUES, clock=EngineClock(self.sim),
                             queue_capacity=queue_depth_pkts, check_config=check_config,
                             timestamp_unit_ns=TIMESTAMP_UNIT_NS, queue_bytes_register=QUEUE_BYTES_REGISTER,
                             one_thread=True)  # the engine's thread drives it and serves its P4Runtime
        self.device.notify = self.wake  # packet-outs and link changes from the control plane
        self.service = P4RuntimeService(self.device, pause=_no_other_thread)
        self.cli = Commands(self.device)  # the runtime CLI's words, in process

    def restart(self) -> None:
        """The switch process died and started again: everything it held is gone, its ports
        come back on the same links (the controller's sessions must reconnect)."""
        names = dict(self.device.port_names)
        self._boot()
        for port, link in list(self.ports.items()):
            self.add_port(port, link, names[port])
        self.restarts += 1

    def add_port(self, port: int, link: Link, name: str) -> None:
        """Port ``port`` transmits on ``link`` at its rate (the traffic manager's serializer)."""
        self.device.add_port(port, LinkPort(link), name)
        self.device.tm.set_port_rate(port, link.config.rate_bps)
        self.ports[port] = link

    def receiver(self, port: int) -> Callable[[bytes], None]:
        """What a link delivers to for frames arriving on ``port``."""

        def receive(frame: bytes) -> None:
            self.device.receive(port, frame)  # looked up per frame: a restart replaces the device
            self.wake()

        return receive

    def wake(self) -> None:
        """Run what is due now and sleep until the device's next event."""
        nxt = self.device.poll()
        if nxt is None:
            return
        now = self.sim.now
        if nxt < now:
            nxt = now
        wake_at = self._wake_at
        if wake_at is None or wake_at <= now or nxt < wake_at:
            self._wake_at = nxt
            self.sim.at(nxt, self._wakeup_event, nxt)

    def _wakeup(self, when: int) -> None:
        if when != self._wake_at:
            return  # superseded by an earlier wake-up
        self._wake_at = None
        self.wake()
