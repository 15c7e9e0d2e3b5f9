"""The reference fabric: N hosts (each a sans-IO ``Nic``) on the fast reference switch model
(reference_switch.py, not the P4 program), and a one-call way to run a workload on it and
collect its statistics. Experiments on the fabric program use fabricsim.fabric.

Host i (0-based) has MAC 02:00:00:00:01:<i+1> and IP 10.0.0.<i+1>. Two topologies:

* ``star``: every host on switch 1, host i on port i+1. Two senders into one receiver
  share the receiver's downlink: that egress queue is the bottleneck.
* ``dumbbell``: the first ceil(N/2) hosts on switch 1, the others on switch 2 (host ports
  numbered from 1 on each), the switches joined on port ``CORE_PORT`` by ``core_link``
  (default: the host link). Traffic between the halves crosses two switches (two INT
  hops) and shares the core link.

Every host link has the same ``LinkConfig`` unless ``host_links`` overrides one (both
directions of that host's cable). Port statistics are keyed ``s<switch>.port<n>``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from typing import Any

from fabricsim.engine import Simulator
from fabricsim.host import SimHost
from fabricsim.link import Link, LinkConfig
from fabricsim.reference_switch import Switch, SwitchConfig
from nicmodel.nic import Nic
from nicmodel.settings import NicSettings
from nicmodel.stats import RunStats
from nicmodel.workloads import Endpoint, Peer, WorkloadSpec, nic_counters


@dataclass
class FabricConfig:
    """The simulated fabric: ``hosts`` NICs on one switch (``star``) or split over two
    switches joined by ``core_link`` (``dumbbell``, a shared bottleneck); ``host_links``
    overrides the link of single hosts (a slow receiver, a lossy uplink)."""

    hosts: int = 2
    line_rate_bps: float = 100e9
    link: LinkConfig = field(default_factory=LinkConfig)
    host_links: dict[int, LinkConfig] = field(default_factory=dict)
    switch: SwitchConfig = field(default_factory=SwitchConfig)
    topology: str = "star"
    core_link: LinkConfig | None = None
    seed: int = 1
    nic_options: dict[str, Any] = field(default_factory=dict)  # extra Nic() keyword arguments


TOPOLOGIES = ("star", "dumbbell")
CORE_PORT = 100


class SimFabric:
    """Hosts, links and the switch, wired and ready; ``run`` executes one workload."""

    def __init__(self, config: FabricConfig | None = None) -> None:
        self.config = cfg = config or FabricConfig()
        if cfg.hosts < 2:
            raise ValueError("a fabric needs at least 2 hosts")
        if cfg.topology not in TOPOLOGIES:
            raise ValueError(f"unknown topology {cfg.topology!r}; choose one of {TOPOLOGIES}")
        self.sim = Simulator()
        n_sw = 1 if cfg.topology == "star" else 2
        self.switches = [Switch(self.sim, replace(cfg.switch, switch_id=k + 1), seed=cfg.seed + k)
                         for k in range(n_sw)]
        self.switch = self.switches[0]
        rng = random.Random(cfg.seed)
        self.hosts: list[SimHost] = []
        self.peers: list[Peer] = []
        first_half = (cfg.hosts + 1) // 2
        placement: list[tuple[str, Switch, int]] = []  # host IP, its switch, its port
        for i in range(cfg.hosts):
            mac = f"02:00:00:00:01:{i + 1:02x}"
            ip = f"10.0.0.{i + 1}"
            nic = Nic(mac, ip, cfg.line_rate_bps, **cfg.nic_options)
            host = SimHost(self.sim, nic, f"h{i + 1}")
            sw_index = 0 if n_sw == 1 or i < first_half else 1
            sw, port = self.switches[sw_index], (i + 1 if sw_index == 0 else i + 1 - first_half)
            link_cfg = replace(cfg.host_links.get(i, cfg.link))
            up = Link(self.sim, link_cfg, sw.receiver(port), random.Random(rng.random()), f"h{i + 1}->s{sw_index + 1}")
            down = Link(self.sim, replace(link_cfg), host.receive, random.Random(rng.random()),
                        f"s{sw_index + 1}->h{i + 1}")
            host.attach(up)
            sw.add_port(port, down)
            placement.append((ip, sw, port))
            self.hosts.append(host)
            self.peers.append(Peer(i, ip, mac))
        if n_sw == 2:
            core = cfg.core_link or cfg.link
            a, b = self.switches
            a.add_port(CORE_PORT, Link(self.sim, replace(core), b.receiver(CORE_PORT), random.Random(rng.random()), "s1->s2"))
            b.add_port(CORE_PORT, Link(self.sim, replace(core), a.receiver(CORE_PORT), random.Random(rng.random()), "s2->s1"))
        for ip, home, port in placement:  # local hosts on their port, the rest via the core
            for sw in self.switches:
                sw.add_route(ip, port if sw is home else CORE_PORT)

    def base_rtt_ns(self, mtu: int = 1024) -> int:
        """Unloaded RTT of one MTU packet and its ACK over the longest host-to-host path:
        per link both ways, the propagation delay plus the serialization of data and ACK
        (the 200 bytes beyond the MTU: the data packet's headers and ICRC, an ACK with a
        short INT echo, and the wire overhead of both, rounded up)."""
        cfg = self.config
        links = [cfg.link, cfg.link] + ([cfg.core_link or cfg.link] if len(self.switches) > 1 else [])
        return int(sum(2 * link.delay_ns + (mtu + 200) * 8e9 / link.rate_bps for link in links))

    def run(self, spec: dict[str, Any], settings: NicSettings | None = None,
            until_ns: int | None = None, max_events: int | None = None) -> RunStats:
        """Run workload ``spec`` (a WorkloadSpec dict without peers/rank: those come from
        the fabric) on every host until all endpoints are done (or ``until_ns``)."""
        settings = settings or NicSettings(base_rtt_ns=self.base_rtt_ns())
        stats = RunStats(self.config.line_rate_bps, settings.base_rtt_ns, settings.mtu)
        peers = [{"rank": p.rank, "ip": p.ip, "mac": p.mac} for p in self.peers]
        endpoints = []
        start = self.sim.now
        for host, peer in zip(self.hosts, self.peers):
            ws = WorkloadSpec.from_dict({**spec, "peers": peers, "rank": peer.rank})
            host.endpoint = Endpoint(host.nic, ws, settings, stats, host=host.name)
            endpoints.append(host.endpoint)
        done: set[str] = set()
        for host in self.hosts:
            host.on_done = lambda h: done.add(h.name)
            host.endpoint.start(self.sim.now)  # type: ignore[union-attr]
            host.service()
        # a host reports done from its service(); confirm on all endpoints before stopping
        self.sim.run(until_ns=until_ns, max_events=max_events,
                     stop=lambda: len(done) == len(endpoints) and all(e.done for e in endpoints))
        now = self.sim.now
        stats.elapsed_ns = now - start
        for host in self.hosts:
            stats.nic_counters[host.name] = nic_counters(host.nic, now)
        stats.fabric = {
            "switch_ports": {f"s{k + 1}.port{p}": sw.port_stats(p)
                             for k, sw in enumerate(self.switches) for p in sorted(sw.ports)},
            "switch_drops": sum(sw.total_drops() for sw in self.switches),
            "events": self.sim.events_run,
        }
        self.endpoints = endpoints
        return stats
