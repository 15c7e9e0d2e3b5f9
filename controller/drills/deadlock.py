"""The PFC deadlock drill: a routing loop installed on purpose, the cyclic buffer dependency
it builds, and the PFC watchdog breaking it.

``fabricctl drill pfc-deadlock LEAF:PORT`` pins one host's /32 (the last host of another leaf)
on LEAF to that uplink and on the spine at its other end back down to LEAF, and another host
of LEAF sends a burst of lossless frames to it (as a traffic generator does): they circle
over the one cable. Both lossless queues of the cable (LEAF:PORT towards the spine, the
spine's port towards LEAF) fill with them, each switch pauses the other on the
lossless priority, and neither queue can drain: a deadlock, which stops everything else that
shares those queues too. The switches' PFC refresh timer (controller/pfc_refresh.py) keeps the
pauses up while nothing arrives; the watchdog (armed on every switch, 200 ms detection by
default, action drop or forward) finds both queues stuck, the monitor reports it to the
controller, and the loop's queues move again. At the fault's end the drill removes the pins;
the watchdog restores the queues once no pause has come for the restoration time.

The drill samples both loop queues (``queue_stats``, ``pfc_stats`` of the two ends) and
prints them per stage: before the loop, deadlocked (loop until the watchdog acted), watchdog
acting (the loop is removed meanwhile), restored (neither queue in a storm any more).
"""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from controller.drills import live
from controller.drills.congestion import background_frame
from controller.drills.timeline import Timeline
from controller.oper_status import Event
from controller.pfc_refresh import PfcRefresh
from controller.telemetry import Telemetry
from controller.textfmt import shown_path, table
from netbase.ethernet import wire_time_ns
from p4rt.runtime_cli import CliClient

STAGES = ("before", "deadlocked", "watchdog acting", "restored")


@dataclass(frozen=True)
class Loop:
    """The cable the loop runs over (LEAF:PORT <-> SPINE:PORT), the host it is for, the host
    of LEAF whose lossless burst to it fills the loop, and the hosts of the workload (the
    others), whose flows over the cable the deadlock stops."""

    leaf: str
    leaf_port: int
    spine: str
    spine_port: int
    dst: str
    sender: str
    hosts: tuple[str, ...]

    def ends(self) -> list[tuple[str, int]]:
        return [(self.leaf, self.leaf_port), (self.spine, self.spine_port)]

    def describe(self) -> str:
        return (f"routing loop for {self.dst} over {self.leaf}:{self.leaf_port} <-> "
                f"{self.spine}:{self.spine_port}")


def plan(topo, target: str) -> Loop:
    """The loop over leaf uplink ``target`` (LEAF:PORT); ValueError if it cannot be one."""
    leaf, _, p = target.partition(":")
    leaves = {s.name for s in topo.leaves()}
    if leaf not in leaves or not p.isdigit() or int(p) not in topo.ports_of(leaf):
        raise ValueError(f"pfc-deadlock: {target!r} is not a LEAF:PORT of {topo.name}")
    spine, spine_port, _ = topo.ports_of(leaf)[int(p)]
    if spine not in {s.name for s in topo.spines()}:
        raise ValueError(f"pfc-deadlock: {target} goes to {spine}, not to a spine")
    local = [h.name for h in topo.hosts_of(leaf)]
    others = [h.name for h in topo.hosts if h.leaf != leaf]
    if len(local) < 2 or len(others) < 2:
        raise ValueError(f"pfc-deadlock over {target} needs two hosts on {leaf} and two elsewhere")
    dst, sender = others[-1], local[-1]
    return Loop(leaf, int(p), spine, spine_port, dst, sender,
                tuple(h.name for h in topo.hosts if h.name not in (dst, sender)))


def burst(topo, loop: Loop, dscp: int) -> tuple[bytes, int, float]:
    """The frame that fills the loop (UDP to the looped host, DSCP ``dscp``: the lossless
    class), how many the sender sends (the capacity of both loop queues and as
    many again) and the time between them at its link's rate (ns)."""
    frame = background_frame(topo, loop.sender, loop.dst, 0, dscp=dscp)
    rate_bps = topo.ports_of(loop.leaf)[topo.host_port(loop.sender)[1]][2].rate_gbps * 1e9
    return frame, 4 * topo.queue_depth_pkts, wire_time_ns(len(frame), rate_bps)


def pin(ctl, loop: Loop, on: bool, monitor) -> None:
    """Install the loop (both pins) or remove it, recorded with the monitor's events."""
    prefix = f"{ctl.topo.host(loop.dst).ip}/32"
    for switch, port in loop.ends():
        ctl.pin_route(switch, prefix, port if on else None)
        monitor.record(Event(monitor.fabric_us(), "pin" if on else "unpin", switch, port,
                             detail=f"{loop.dst}/32 {'pinned to' if on else 'back from'} this port (routing loop)"))


def _row(text: str, port: int, prio: int, width: int) -> list[str]:
    """The fields of (port, prio)'s line of a ``queue_stats`` / ``pfc_stats`` answer."""
    key = [str(port), str(prio)]
    for line in text.splitlines()[1:]:
        f = line.split()
        if len(f) == width and f[:2] == key:
            return f
    raise ValueError(f"no line for port {port} priority {prio} in {text!r}")


def watchdog_command(prio: int, action: str, detect_ms: float) -> str:
    """The runtime CLI command that arms a switch's watchdog on ``prio`` on every port."""
    return f"pfc_watchdog all {prio} detect={detect_ms:g} restore={detect_ms:g} action={action}"


@dataclass
class LoopWatch:
    """Samples of the loop's two queues: (t_us from the run's start, {(switch, port):
    (depth, dequeued so far, paused us so far, watchdog drops so far, in storm)})."""

    loop: Loop
    prio: int
    samples: list[tuple[float, dict[tuple[str, int], tuple[int, int, float, int, bool]]]] = field(default_factory=list)
    deadlock_us: float | None = None  # first sample that found both queues stuck ...
    stuck_since_us: float | None = None  # ... since the sample before it

    def sample(self, t_us: float, clis: Mapping[str, Callable[[str], str]], monitor=None) -> None:
        now: dict[tuple[str, int], tuple[int, int, float, int, bool]] = {}
        for switch, port in self.loop.ends():
            try:
                q = _row(clis[switch](f"queue_stats {port}"), port, self.prio, 10)
                p = _row(clis[switch](f"pfc_stats {port}"), port, self.prio, 9)
            except Exception:  # noqa: BLE001 - a switch restarting: this sample is missing
                return
            # queue_stats: depth, dequeued, drop_watchdog; pfc_stats: paused_us, storm
            now[(switch, port)] = (int(q[2]), int(q[6]), float(p[3]), int(q[8]), p[5] == "1")
        if self.samples and self.deadlock_us is None and self._stuck(self.samples[-1], (t_us, now)):
            self.deadlock_us, self.stuck_since_us = t_us, self.samples[-1][0]
            if monitor is not None:
                monitor.record(Event(monitor.fabric_us(), "deadlock", self.loop.leaf, self.loop.leaf_port, self.prio,
                                     f"both loop queues paused and full, nothing dequeued since {self.samples[-1][0]:.0f} us"))
        self.samples.append((t_us, now))

    @staticmethod
    def _stuck(a, b) -> bool:
        (ta, qa), (tb, qb) = a, b
        return tb > ta and all(qb[k][0] > 0 and qb[k][1] == qa[k][1] and qb[k][2] - qa[k][2] >= (tb - ta) * 0.99
                               for k in qb if k in qa) and qa.keys() == qb.keys()

    def storm_us(self, after_us: float = 0.0, storm: bool = True) -> float | None:
        """The first sample at or after ``after_us`` with a loop queue in a watchdog storm
        (``storm``) or with neither in one (not ``storm``)."""
        for t, q in self.samples:
            if t >= after_us and any(v[4] for v in q.values()) == storm:
                return t
        return None

    def _before(self, t_us: float) -> float:
        return max((t for t, _ in self.samples if t < t_us), default=t_us)

    def stage_bounds(self, tl: Timeline) -> dict[str, tuple[float, float]]:
        """Before the loop; deadlocked (from the first stuck interval, or the loop's start if
        none was seen) until the watchdog acted; the watchdog acting (the loop is removed
        meanwhile, at ``tl.end_us``); the queues restored, to the end."""
        last = self.samples[-1][0] if self.samples else tl.end_us
        acted = self.storm_us(tl.start_us)
        restored = self.storm_us(acted, storm=False) if acted is not None else None
        # each change happened in the sample interval before the sample that saw it
        acted = last if acted is None else self._before(acted)
        restored = last if restored is None else self._before(restored)
        stuck = tl.start_us if self.stuck_since_us is None else self.stuck_since_us
        return dict(zip(STAGES, ((0.0, tl.start_us), (stuck, acted), (acted, restored), (restored, last))))

    def rows(self, tl: Timeline) -> list[list[object]]:
        bounds = self.stage_bounds(tl)
        rows: list[list[object]] = [["span (us)", *(f"{lo:.0f}-{hi:.0f}" for lo, hi in bounds.values())]]
        for end in self.loop.ends():
            name = f"{end[0]}:{end[1]}"
            stats = [self._stage(end, *bounds[s]) for s in STAGES]
            rows.append([f"{name} queue depth (max)", *(s[0] for s in stats)])
            rows.append([f"{name} paused (% of time)", *(s[1] for s in stats)])
            rows.append([f"{name} dequeued (pkt/ms)", *(s[2] for s in stats)])
            rows.append([f"{name} watchdog drops", *(s[3] for s in stats)])
        rows.append(["workload messages done", *(sum(1 for m in tl.messages if m["end_us"] is not None
                                                     and lo <= m["end_us"] < hi) for lo, hi in bounds.values())])
        return rows

    def _stage(self, end: tuple[str, int], lo: float, hi: float) -> tuple[object, object, object, object]:
        inside = [(t, q[end]) for t, q in self.samples if lo <= t <= hi and end in q]
        if len(inside) < 2:
            return "-", "-", "-", "-"
        (t0, a), (t1, b) = inside[0], inside[-1]
        span = t1 - t0
        return (max(q[0] for _, q in inside), f"{100 * (b[2] - a[2]) / span:.0f}",
                f"{(b[1] - a[1]) / (span / 1e3):.1f}", b[3] - a[3])

    def format(self, tl: Timeline) -> str:
        return (f"loop queues (priority {self.prio}; deadlock seen at "
                f"{'-' if self.deadlock_us is None else f'{self.deadlock_us:.0f} us'}):\n"
                + table(["", *STAGES], self.rows(tl)))


class SimFault:
    """The deadlock in the virtual-time fabric (a drill fault, ``sim.run``): watchdogs armed,
    the PFC refresh timer ticking in virtual time, the loop from ``at_ns`` for ``for_ns`` and
    the sender's burst into it (put on its link as a traffic generator does), the loop queues
    sampled into ``watch`` every ``sample_ns``."""

    def __init__(self, loop: Loop, prio: int, at_ns: int, for_ns: int, action: str, detect_ms: float,
                 sample_ns: int, refresh: bool = True) -> None:
        self.loop, self.prio, self.at_ns, self.for_ns = loop, prio, at_ns, for_ns
        self.action, self.detect_ms, self.sample_ns = action, detect_ms, sample_ns
        self.refresh = refresh  # False: pauses only on arrivals, as switches without the timer
        self.watch = LoopWatch(loop, prio)

    def __call__(self, fab, ctl, t0: int, monitor) -> None:
        clis = {name: node.cli.run for name, node in fab.switches.items()}
        for run in clis.values():
            run(watchdog_command(self.prio, self.action, self.detect_ms))
        refresh = PfcRefresh(ctl)
        interval_ns = int(refresh.interval_us * 1000)

        def tick() -> None:
            refresh.tick()
            fab.sim.after(interval_ns, tick)

        def sample() -> None:
            self.watch.sample((fab.now_ns() - t0) / 1e3, clis, monitor)
            fab.sim.after(self.sample_ns, sample)

        if self.refresh:
            fab.sim.at(t0, tick)
        fab.sim.at(t0, sample)
        fab.sim.at(t0 + self.at_ns, pin, ctl, self.loop, True, monitor)
        frame, count, gap = burst(ctl.topo, self.loop, ctl.settings.classes.data_dscp)
        link = fab.hosts[self.loop.sender].link
        for k in range(count):
            fab.sim.at(t0 + self.at_ns + round((k + 1) * gap), link.transmit, frame)
        fab.sim.at(t0 + self.at_ns + self.for_ns, pin, ctl, self.loop, False, monitor)


def report(watch: LoopWatch, tl: Timeline, out: Path) -> None:
    """Print the loop queues' table and write it with its samples to
    ``drill_pfc-deadlock_loop.json`` under ``out``."""
    print(watch.format(tl))
    path = out / f"drill_{tl.name}_loop.json"
    path.write_text(json.dumps({"loop": watch.loop.describe(), "prio": watch.prio, "deadlock_us": watch.deadlock_us,
                                "stages": watch.stage_bounds(tl), "table": watch.rows(tl),
                                "samples": [[t, {f"{s}:{p}": v for (s, p), v in q.items()}]
                                            for t, q in watch.samples]}, indent=1))
    print(f"wrote {shown_path(path)}")


LIVE_SAMPLE_S = 0.25  # wall seconds between samples of the loop queues, live
# live runs on this many detection (= restoration) times after the loop is gone: the last
# pauses of its draining, then the restoration time without any
RESTORE_HOLD = 3.0


def run_live(state, ctl, tl: Timeline, loop: Loop, prio: int, *, action: str, detect_ms: float,
             workload: str, size: int, nic_settings=None) -> tuple[Telemetry, LoopWatch]:
    """The drill against the running fabric: at ``tl.start_us`` every switch's watchdog is
    armed, the PFC refresh timer starts (fabric time through the dilation), the loop is
    pinned and the sender's burst goes into it from its namespace (frame_sender.py); at
    ``tl.end_us`` the loop is removed. The loop queues are sampled through their switches'
    runtime CLI until the run is over. ``nic_settings``: a pending canary's, per NIC."""
    dilation = float(ctl.topo.time_dilation)
    frame, count, gap_ns = burst(ctl.topo, loop, ctl.settings.classes.data_dscp)
    interval_s = gap_ns * 1e-9 * dilation
    refresh, watch, stop = PfcRefresh(ctl), LoopWatch(loop, prio), threading.Event()
    threads: list[threading.Thread] = []
    senders: list[subprocess.Popen] = []

    def sample_loop(monitor) -> None:
        clis = {s: CliClient(state.switches[s].thrift_port, timeout=5) for s, _ in loop.ends()}
        try:
            while not stop.is_set():
                watch.sample(monitor.fabric_us(), {s: c.run for s, c in clis.items()}, monitor)
                stop.wait(LIVE_SAMPLE_S)
        finally:
            for c in clis.values():
                c.close()

    def begin(clis, monitor) -> None:
        for c in clis.values():
            c.run(watchdog_command(prio, action, detect_ms))
        threads.append(refresh.run_live(stop))
        threads.append(threading.Thread(target=sample_loop, args=(monitor,), name="loop-watch", daemon=True))
        threads[-1].start()
        pin(ctl, loop, True, monitor)
        senders.append(live.start_sender(state, loop.sender, frame, interval_s, count * interval_s))

    def end(monitor) -> None:
        live.wait_senders(senders, interval_s + 5, tl)
        pin(ctl, loop, False, monitor)

    try:
        tel = live.run(state, ctl, tl, begin, end, workload=workload, size=size, hosts=list(loop.hosts),
                       hold_us=tl.end_us + detect_ms * 1e3 * RESTORE_HOLD, nic_settings=nic_settings)
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=30)
    return tel, watch
