"""Drills in the virtual-time fabric: the workload, the fault at its time, the controller's
reactions, the before / during / after record.

The fabric is configured by the controller exactly as for ``fabricctl sim run``
(``sim_cmd.simulate``); the drill adds its fault through the fabric (a cable event, pause
frames from a host's port) and a ``FabricMonitor`` that reads every switch's runtime CLI
(``show_ports``, ``pfc_stats``) after each telemetry sample, in process, as it would read a
live switch's over TCP.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from controller.drills import congestion
from controller.drills.congestion import Congestion
from controller.drills.timeline import Timeline
from controller.oper_status import Event, FabricMonitor
from controller.profiles import settings_for
from controller.sim_cmd import simulate
from controller.workloads import workload_specs
from netbase import pfc


@dataclass
class DrillRun:
    """A finished drill: its record, the fabric's telemetry (for the heat map) and the
    workload's errors (lost or corrupted data would be here)."""

    timeline: Timeline
    telemetry: Any
    errors: list[str]
    done: bool


def _specs(topo, workload: str, hosts: list[str], size: int, load: float, duration_ns: int,
           seed: int, cdf: str) -> dict[str, dict[str, Any]]:
    specs = workload_specs(topo, workload, hosts, size=size, load=load, seed=seed, cdf=cdf, qp_per_flow=True,
                           duration_ns=duration_ns)  # poisson arrivals for the drill's length
    for spec in specs.values():
        spec["seed"] = seed
    return specs


def run(topo, pipe, profile: str, tl: Timeline, fault, *, workload: str = "poisson", size: int = 256 * 1024,
        load: float = 0.3, cdf: str = "websearch", seed: int = 1, sample_us: float = 10.0, hold_ns: int = 0,
        until_ns: int | None = None, hosts: list[str] | None = None,
        overrides: dict[str, dict[str, Any]] | None = None, queues: str | None = None) -> DrillRun:
    """Run ``workload`` (on ``hosts``, default all) under ``profile`` with ``overrides``, with
    ``fault(fabric, controller, t0_ns, monitor)`` scheduled before it starts (times in ``tl``
    are from the workload's start); the monitor polls after every sample, and the queues of
    switch ``queues`` are sampled with it."""
    specs = _specs(topo, workload, hosts or [h.name for h in topo.hosts], size, load, tl.arrivals_ns(hold_ns), seed, cdf)
    state: dict[str, Any] = {}

    def prepare(fab, ctl, tel):
        t0 = fab.now_ns()
        tl.t0_us = tel.alerts.t0_us = t0 / 1e3
        state.update(fab=fab, ctl=ctl, tel=tel)
        clis = {name: (lambda line, node=node: node.cli.run(line)) for name, node in fab.switches.items()}
        monitor = FabricMonitor(ctl, clis,
                                fabric_us=lambda: fab.now_ns() / 1e3 - tl.t0_us)
        monitor.events = tl.events
        monitor.drops = tl.queue_drops
        fault(fab, ctl, t0, monitor)
        monitor.poll()  # the state before the fault
        if queues is not None:
            tl.sample_queues(t0 / 1e3, monitor.queue_stats.get(queues))

        def after_sample(now: int) -> None:
            monitor.poll()
            if queues is not None:
                tl.sample_queues(now / 1e3, monitor.queue_stats.get(queues))
            tl.sample_nics(now / 1e3, fab.nics)
            tel.alerts.feed_nics(now / 1e3, tl.nic_samples[-1][1])

        return after_sample

    res = simulate(topo, pipe, settings_for(profile, overrides), profile, specs, seed=seed, sample_us=sample_us,
                   prepare=prepare, hold_ns=hold_ns, until_ns=until_ns)
    res.controller.close()
    fab, tel = state["fab"], state["tel"]
    for nic in fab.nics.values():
        for m in nic.run_stats.messages:
            tl.messages.append({"size": m.size, "start_us": m.start_ns / 1e3 - tl.t0_us, "ideal_us": m.ideal_ns / 1e3,
                                "end_us": None if m.end_ns is None else m.end_ns / 1e3 - tl.t0_us})
    tl.take_port_deltas(tel)
    tel.alerts.close_all(fab.now_ns() / 1e3)
    tl.alerts = [a.to_dict() for a in tel.alerts.all()]
    tl.errors = list(res.errors)
    return DrillRun(tl, tel, res.errors, res.done)


def cable_fault(switch: str, port: int, at_ns: int, for_ns: int):
    """The cable on ``switch:port`` goes down at ``at_ns`` and up ``for_ns`` later."""

    def fault(fab, ctl, t0: int, monitor) -> None:
        peer = ctl.topo.ports_of(switch)[port][0]
        fab.cable_down(switch, peer, t0 + at_ns, t0 + at_ns + for_ns)

    return fault


STORM_INTERVAL_NS = 100_000  # a stuck NIC re-sends its XOFF well within the 0xFFFF quanta it pauses for


def storm_fault(host: str, prio: int, at_ns: int, for_ns: int, action: str = "drop",
                detect_ms: float = 200.0, restore_ms: float = 200.0):
    """Every switch's PFC watchdog armed on ``prio`` (SONiC's detection and restoration
    times); ``host`` sends PFC XOFF for ``prio`` (maximum quanta) every STORM_INTERVAL_NS from
    ``at_ns`` for ``for_ns``, as a NIC stuck in a pause storm does."""

    def fault(fab, ctl, t0: int, monitor) -> None:
        for node in fab.switches.values():
            node.cli.run(f"pfc_watchdog all {prio} detect={detect_ms:g} restore={restore_ms:g} action={action}")
        h = ctl.topo.host(host)
        frame = pfc.build(bytes.fromhex(h.mac.replace(":", "")), {prio: 0xFFFF})
        link = fab.hosts[host].link
        t = t0 + at_ns
        while t < t0 + at_ns + for_ns:
            fab.sim.at(t, link.transmit, frame)
            t += STORM_INTERVAL_NS

    return fault


def congestion_fault(cong: Congestion, at_ns: int, for_ns: int):
    """``cong``'s senders offer their background from ``at_ns`` for ``for_ns``, paced at the
    load (frames put on their links as a traffic generator does, not through their NICs);
    the destination's route is pinned to the congested port meanwhile."""

    def fault(fab, ctl, t0: int, monitor) -> None:
        gap = congestion.interval_ns(ctl.topo, cong)

        fab.sim.at(t0 + at_ns, congestion.pin, ctl, cong, True, monitor)
        for i, host in enumerate(cong.senders):
            frame = congestion.background_frame(ctl.topo, host, cong.dst, i)
            link = fab.hosts[host].link
            for k in range(int(for_ns // gap)):
                fab.sim.at(t0 + at_ns + round(k * gap), link.transmit, frame)
        fab.sim.at(t0 + at_ns + for_ns, congestion.pin, ctl, cong, False, monitor)

    return fault


def restart_fault(switch: str, at_ns: int, boot_ns: int):
    """Switch ``switch`` restarts at ``at_ns`` (program and state lost) and takes sessions
    again ``boot_ns`` later; the controller's session reconnects and restores it."""

    def fault(fab, ctl, t0: int, monitor) -> None:
        def died() -> None:
            monitor.record(Event(monitor.fabric_us(), "switch-restart", switch,
                                detail="process killed: program, entries and queues lost"))

        fab.restart_switch(switch, t0 + at_ns, boot_ns)
        fab.sim.at(t0 + at_ns, died)

    return fault
