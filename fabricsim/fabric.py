"""A topology file brought up in virtual time: P4 switches, simulated hosts, links.

``P4Fabric(topo)`` builds, from the same ``topo.spec.Topology`` the Mininet launcher takes,
one ``SwitchNode`` per switch (the p4switch device, no program yet), one ``SimHost`` with a
``nicmodel.Nic`` per host behind the management API's interface (``nics``), and two
``Link``s per cable at its rate and delay. The controller then configures it exactly as a
live fabric, through ``connection`` (same arguments as its ``SwitchConnection``), and runs
workloads through ``nics``; ``run`` advances virtual time until a condition holds.

Differences from the live fabric, all in its favour: both directions of every cable have
the topology's delay (live, the switch models its egress delay only), nothing is dilated,
and the scheduling is deterministic (same inputs, same events in the same order).
"""

from __future__ import annotations

import functools
import gc
import random
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from fabricsim.background import BackgroundFlow, BackgroundSink
from fabricsim.engine import Simulator
from fabricsim.host import SimHost
from fabricsim.link import Link, LinkConfig
from fabricsim.nic_service import SimNicService
from fabricsim.p4rt_conn import InProcessConnection
from fabricsim.switch_node import QUEUE_BYTES_REGISTER, TIMESTAMP_UNIT_NS, SwitchNode
from nicmodel.nic import Nic
from nicmodel.verbs import parse_mac
from p4switch.exec.native import CHOICES as CHOICES  # re-exported for the controller's --backend
from p4switch.exec.native import use_backend as use_backend
from p4switch.switch.device import check_device_config
from topo.spec import Topology

_check_lock = threading.Lock()


@functools.lru_cache(maxsize=4)
def _checked_once(device_config: bytes) -> Any:
    return check_device_config(device_config)


def _checked_config(device_config: bytes) -> Any:
    """Check a program's source once for all switches that load it (the checked program is
    read-only; each switch still builds its own executable tables from it). The controller
    pushes pipelines from several threads: the first checks, the others wait for it."""
    with _check_lock:
        return _checked_once(device_config)


def _freeze_setup() -> bool:
    """Keep the objects that exist when a run starts (programs, tables, topology, the
    controller's state: most of the process) out of the cyclic collector's scans until it
    ends: its full collections walked all of them, ~6 % of the k=4 fat tree's run (1 ms of
    arrivals: 0.95 -> 0.45 s in collections). Only when nobody else froze objects, which
    the end of the run would thaw; False then."""
    if gc.get_freeze_count():
        return False
    gc.freeze()
    return True


class P4Fabric:
    # The switches' target options (switch_node.py): what the controller sets the program's
    # time constants and INT units for.
    timestamp_unit_ns = TIMESTAMP_UNIT_NS
    keeps_queue_bytes = QUEUE_BYTES_REGISTER is not None

    def __init__(self, topo: Topology, *, seed: int = 1, impairments: LinkConfig | None = None,
                 nic_options: dict[str, Any] | None = None) -> None:
        """``impairments``: loss, reordering, duplication and corruption applied to every link
        (rate and delay always come from the topology)."""
        self.topo = topo
        self.seed = seed
        self._sessions: dict[str, list[InProcessConnection]] = {}
        self.sim = Simulator()
        # wall and CPU time spent in run(): the simulator's own speed, for benchmarks only
        self.run_wall_s = 0.0
        self.run_cpu_s = 0.0
        self.switches: dict[str, SwitchNode] = {
            s.name: SwitchNode(self.sim, s.name, s.device_id, s.cpu_port, topo.queue_depth_pkts, _checked_config)
            for s in topo.switches}
        self.hosts: dict[str, SimHost] = {}
        self.nics: dict[str, SimNicService] = {}
        receivers: dict[str, Callable[[int], Callable[[bytes], None]]] = {
            name: node.receiver for name, node in self.switches.items()}
        for h in topo.hosts:
            leaf, port = topo.host_port(h.name)
            rate = topo.ports_of(leaf)[port][2].rate_gbps * 1e9
            host = SimHost(self.sim, Nic(h.mac, h.ip, rate, **(nic_options or {})), h.name)
            self.hosts[h.name] = host
            self.nics[h.name] = SimNicService(host, h.ip, h.mac, rate, parse_mac(topo.switch(h.leaf).mac),
                                              nic_options=nic_options)
            receivers[h.name] = lambda _port, host=host: host.receive
        self.links: dict[str, Link] = {}
        base = impairments or LinkConfig()
        for lk in topo.links:
            cfg = replace(base, rate_bps=lk.rate_gbps * 1e9, delay_ns=round(lk.delay_us * 1000))
            for (src, sport), (dst, dport) in (((lk.a, lk.a_port), (lk.b, lk.b_port)),
                                               ((lk.b, lk.b_port), (lk.a, lk.a_port))):
                name = f"{src}:{sport}->{dst}"
                link = Link(self.sim, replace(cfg), receivers[dst](dport), random.Random(f"{seed}/{name}"), name)
                self.links[name] = link
                if src in self.switches:
                    self.switches[src].add_port(sport, link, f"{src}-eth{sport}")
                else:
                    self.hosts[src].attach(link)

    def cable_down(self, a: str, b: str, at_ns: int, up_at_ns: int | None = None) -> None:
        """Both directions of the cable between nodes ``a`` and ``b`` go down at ``at_ns``
        (and up again at ``up_at_ns``): frames sent meanwhile are lost, as on a pulled fibre.
        Neither end is told; what notices is the traffic (timeouts, PFC, INT)."""
        names = [n for n, lk in self.links.items() if {n.split(":")[0], n.split("->")[1]} == {a, b}]
        if not names:
            raise ValueError(f"no link between {a!r} and {b!r}")
        for n in names:
            self.links[n].schedule_down(at_ns, up_at_ns)

    def impair(self, src: str, dst: str, **impairments: float) -> None:
        """Impair the direction of the cable from node ``src`` to node ``dst`` only (e.g.
        ``loss=0.01`` on one uplink, the way a dirty fibre loses frames one way): the other
        links keep the fabric-wide impairments. Fields are ``LinkConfig``'s loss, reorder,
        duplicate and corrupt; rate and delay stay the topology's."""
        names = [n for n in self.links if n.split(":")[0] == src and n.split("->")[1] == dst]
        if not names:
            raise ValueError(f"no link from {src!r} to {dst!r}")
        allowed = {"loss", "reorder", "reorder_delay_ns", "duplicate", "corrupt"}
        unknown = sorted(set(impairments) - allowed)
        if unknown:
            raise ValueError(f"unknown impairment(s) {unknown}; valid: {sorted(allowed)}")
        for n in names:
            cfg = replace(self.links[n].config, **impairments)
            cfg.validate()
            self.links[n].config = cfg

    def start_background(self, pairs: list[tuple[str, str]], start_ns: int, stop_ns: int,
                         load: float = 1.0) -> list[BackgroundFlow]:
        """Best-effort TCP-like flows (fabricsim/background.py), one per (src, dst) host pair,
        from ``start_ns`` to ``stop_ns``, each at most ``load`` of its host's line rate (1.0:
        it fills what the host's RoCE traffic leaves)."""
        if not 0 < load <= 1:
            raise ValueError(f"background load must be in (0, 1], got {load}")
        flows = []
        for src, dst in pairs:
            s, d = self.topo.host(src), self.topo.host(dst)
            host = self.hosts[src]
            flow = BackgroundFlow(src, dst, s.mac, self.topo.switch(s.leaf).mac, s.ip, d.ip,
                                  host.link.config.rate_bps * load, start_ns, stop_ns,
                                  sport=40000 + len(host.background))
            host.background.append(flow)
            if self.hosts[dst].sink is None:
                self.hosts[dst].sink = BackgroundSink()
            self.sim.at(start_ns, host.service)
            flows.append(flow)
        return flows

    # -- control plane ------------------------------------------------------------------
    def connection(self, name: str, address: str, device_id: int, election_id: int = 1,
                   on_packet_in: Callable[[Any], None] | None = None, on_digest: Callable[[Any], None] | None = None,
                   on_reconnect: Callable[[Any], None] | None = None) -> InProcessConnection:
        """A P4Runtime session with switch ``name`` (the controller's SwitchConnection arguments)."""
        node = self.switches[name]
        conn = InProcessConnection(node.service, name, address, device_id, election_id,
                                   on_packet_in=on_packet_in, on_digest=on_digest, on_reconnect=on_reconnect)
        self._sessions.setdefault(name, []).append(conn)
        return conn

    def restart_switch(self, name: str, at_ns: int, boot_ns: int = 0) -> None:
        """Switch ``name`` restarts at ``at_ns``: it loses its program and state at once and,
        ``boot_ns`` later, accepts sessions again; the controller's sessions then reconnect
        (and their ``on_reconnect`` runs, as after a live switch's restart)."""
        node = self.switches[name]

        def reconnect() -> None:
            for conn in self._sessions.get(name, []):
                if conn.wait_closed(0):
                    continue
                conn.service = node.service
                conn.is_primary.clear()
                conn.connect()
                conn.reconnects += 1
                if conn.on_reconnect is not None:
                    conn.on_reconnect(conn)

        self.sim.at(at_ns, node.restart)
        self.sim.at(at_ns + boot_ns, reconnect)

    # -- running ------------------------------------------------------------------------
    def now_ns(self) -> int:
        return self.sim.now

    def run(self, done: Callable[[], bool], until_ns: int | None = None, every_ns: int = 10_000,
            on_tick: Callable[[int], None] | None = None) -> bool:
        """Advance virtual time until ``done()`` (checked every ``every_ns`` of simulated
        time, after ``on_tick(now)``), ``until_ns`` or no event is left; True if done."""
        sim = self.sim
        started, cpu = time.perf_counter(), time.process_time()
        frozen = _freeze_setup()
        try:
            while True:
                if done():
                    return True
                if not sim.pending():
                    return done()
                step_end = sim.now + every_ns
                if until_ns is not None:
                    if sim.now >= until_ns:
                        return done()
                    step_end = min(step_end, until_ns)
                sim.run(until_ns=step_end)
                if on_tick is not None:
                    on_tick(sim.now)
        finally:
            if frozen:
                gc.unfreeze()
            self.run_wall_s += time.perf_counter() - started
            self.run_cpu_s += time.process_time() - cpu

    def packet_hops(self) -> int:
        """Frames the switches received so far (one per switch a packet crossed)."""
        return sum(node.device.stats["rx"] for node in self.switches.values())
