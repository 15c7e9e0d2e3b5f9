"""Port operational state and PFC watchdog events as the switches report them, and the
controller's reaction to them.

P4Runtime carries no port status. Stratum serves gNMI's
``/interfaces/interface/state/oper-status`` subscription beside P4Runtime for that; a gNMI
server is a second protocol stack for one leaf of its tree, so our switch reports through the
management interface it already has, the runtime CLI (BMv2's ``simple_switch_CLI`` words):
``show_ports`` gives each port's PHY state in its status column (live: the interface's
operstate, which a veth set down or a cut cable turns DOWN; in virtual time: the simulated
link's state) and ``pfc_stats`` the PFC watchdog's storms detected and restored per port and
class. ``FabricMonitor.poll`` reads both from every switch (the caller decides how often: the
drills poll every telemetry sample, a live fabric a few times a second), turns changes into
``Event``s with the fabric time they were seen, and hands port changes to
``FabricController.port_status``, which takes the cable out of (or back into) every route,
ECMP group and DLB/spraying member list on both of its ends.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass

log = logging.getLogger(__name__)


@dataclass
class Event:
    """Something the fabric reported or the controller did, at fabric time ``t_us``."""

    t_us: float
    kind: str  # port-down, port-up, watchdog-storm, watchdog-restored, reroute, restore, switch-restart
    switch: str
    port: int | None = None
    prio: int | None = None
    detail: str = ""

    def where(self) -> str:
        out = self.switch if self.port is None else f"{self.switch}:{self.port}"
        return out if self.prio is None else f"{out} prio {self.prio}"

    def to_dict(self) -> dict:
        return {"t_us": round(self.t_us, 3), "kind": self.kind, "switch": self.switch, "port": self.port,
                "prio": self.prio, "detail": self.detail}


def parse_show_ports(text: str) -> dict[int, bool]:
    """port -> operationally up, from ``show_ports`` (the CPU port left out)."""
    out: dict[int, bool] = {}
    for line in text.splitlines()[1:]:
        cols = [c.strip() for c in line.split("|")]
        if len(cols) < 3 or not cols[0].isdigit() or cols[1].startswith("(cpu"):
            continue
        out[int(cols[0])] = cols[2] in ("UP", "UNKNOW")  # operstate, cut to 6 letters
    return out


def parse_pfc_stats(text: str) -> dict[tuple[int, int], tuple[int, int, bool]]:
    """(port, class) -> (storms detected, storms restored, in storm now), from ``pfc_stats``."""
    out: dict[tuple[int, int], tuple[int, int, bool]] = {}
    for line in text.splitlines()[1:]:
        f = line.split()
        if len(f) == 9 and f[0].isdigit() and f[1].isdigit():
            out[(int(f[0]), int(f[1]))] = (int(f[6]), int(f[7]), f[5] == "1")
    return out


def _queue_rows(text: str) -> list[list[str]]:
    """The per-queue rows of ``queue_stats`` (port queue depth capacity rate_pps enqueued
    dequeued drop_full drop_watchdog max_depth), without its per-port summary lines."""
    rows = [line.split() for line in text.splitlines()[1:]]
    return [f for f in rows if len(f) == 10 and f[0].isdigit() and f[1].isdigit()]


def parse_queue_stats(text: str) -> dict[tuple[int, int], tuple[int, int]]:
    """(port, queue) -> (depth now, packets dequeued so far), from ``queue_stats``."""
    return {(int(f[0]), int(f[1])): (int(f[2]), int(f[6])) for f in _queue_rows(text)}


def parse_queue_drops(text: str) -> tuple[int, int]:
    """(packets dropped at full queues, packets the PFC watchdog dropped) so far, summed over a
    switch's queues, from ``queue_stats`` (drops the program makes are its own counters')."""
    rows = _queue_rows(text)
    return sum(int(f[7]) for f in rows), sum(int(f[8]) for f in rows)


class FabricMonitor:
    """Polls every switch's port state and watchdog through ``cli[switch](line) -> text`` and
    makes the controller react; ``events`` keeps everything seen, in order."""

    def __init__(self, ctl, cli: Mapping[str, Callable[[str], str]], fabric_us: Callable[[], float],
                 on_event: Callable[[Event], None] | None = None) -> None:
        self.ctl = ctl
        self.cli = dict(cli)
        self.fabric_us = fabric_us
        self.on_event = on_event
        self.events: list[Event] = []
        self._up: dict[tuple[str, int], bool] = {}
        self._storms: dict[tuple[str, int, int], tuple[int, int]] = {}
        # (fabric us, queue-full drops, watchdog drops) of all switches since the poll before;
        # a target without ``queue_stats`` (BMv2) adds nothing
        self.drops: list[tuple[float, int, int]] = []
        self._drops: dict[str, tuple[int, int]] = {}
        # each switch's ``queue_stats`` of the last poll (absent: unreadable), for the drills'
        # queue samples, which would otherwise ask the switch again
        self.queue_stats: dict[str, str] = {}
        self._sessions = {name: conn.reconnects for name, conn in ctl.conns.items()}

    def record(self, ev: Event) -> None:
        """An event the caller saw (a drill's own fault), kept in order with the rest."""
        self._emit(ev)

    def _emit(self, ev: Event) -> None:
        self.events.append(ev)
        log.info("%.1f us %s %s %s", ev.t_us, ev.kind, ev.where(), ev.detail)
        if self.on_event is not None:
            self.on_event(ev)

    def poll(self) -> list[Event]:
        """Read every switch once; returns the new events (reactions included)."""
        first = len(self.events)
        for switch, conn in self.ctl.conns.items():  # a restarted switch: the session came back
            if conn.reconnects > self._sessions.get(switch, 0):
                self._sessions[switch] = conn.reconnects
                self._emit(Event(self.fabric_us(), "restore", switch,
                                 detail="session back; its primary controller resyncs pipeline and entries"))
        full = watchdog = 0
        self.queue_stats = {}
        for switch, run in self.cli.items():
            try:
                ports = parse_show_ports(run("show_ports"))
                storms = parse_pfc_stats(run("pfc_stats"))
            except Exception as e:  # noqa: BLE001 - a switch restarting: try again next poll
                log.info("monitor: %s unreadable: %s", switch, e)
                continue
            new = self._queue_drops(switch, run)
            full, watchdog = full + new[0], watchdog + new[1]
            known = set(self.ctl.topo.ports_of(switch))
            for port, up in sorted(ports.items()):
                if port not in known or self._up.get((switch, port), True) == up:
                    self._up[(switch, port)] = up
                    continue
                self._up[(switch, port)] = up
                now = self.fabric_us()
                self._emit(Event(now, "port-up" if up else "port-down", switch, port))
                written = self.ctl.port_status(switch, port, up)
                if written:
                    verb = "restored" if up else "removed"
                    self._emit(Event(self.fabric_us(), "reroute", switch, port,
                                     detail=f"cable {verb} in routes/ECMP/DLB/spray ({written} updates)"))
            for (port, cls), (detected, restored, _) in sorted(storms.items()):
                old = self._storms.get((switch, port, cls), (0, 0))
                self._storms[(switch, port, cls)] = (detected, restored)
                if detected > old[0]:
                    self._emit(Event(self.fabric_us(), "watchdog-storm", switch, port, cls,
                                     "PFC storm: queue ignores pauses / drops (watchdog)"))
                if restored > old[1]:
                    self._emit(Event(self.fabric_us(), "watchdog-restored", switch, port, cls,
                                     "queue honours PFC again"))
        self.drops.append((self.fabric_us(), full, watchdog))
        return self.events[first:]

    def _queue_drops(self, switch: str, run: Callable[[str], str]) -> tuple[int, int]:
        """The switch's queue drops since the poll before; none at the first poll (its counts
        from before are not this caller's), all it has counted after a restart."""
        try:
            text = run("queue_stats")
        except Exception:  # noqa: BLE001 - a target without queue_stats (BMv2)
            return 0, 0
        self.queue_stats[switch] = text
        now = parse_queue_drops(text)
        before = self._drops.get(switch, now)
        self._drops[switch] = now
        restarted = now[0] < before[0] or now[1] < before[1]
        return now if restarted else (now[0] - before[0], now[1] - before[1])
