"""Routes of a leaf/spine fabric or fat tree, computed from the topology alone (no P4 names here).

A leaf reaches its own hosts directly (a /32 per host, out of the host's port, rewriting the
destination MAC to the host's) and every other leaf's /16 through the group of all its
uplinks; a spine reaches each leaf's /16 out of the port facing that leaf, or (fat tree) the
aggregation switch of that leaf's pod; an aggregation switch reaches the leaves of its pod
directly and every other leaf through the group of its core uplinks. ``fabric_rules``
turns these next hops into table entries and selector groups of fabric.p4.

A pinned route (``pins``: prefix -> port, what a drill installs on purpose: traffic forced
onto one cable, or a routing loop) replaces the computed route of that prefix, or adds a
longer one that wins the longest-prefix match.

A cable the switches report down (``down``: the (switch, port) ends reported down) carries no
route: a next hop is kept only if the leaf is still reachable through it up-down, so a failed
spine-leaf cable takes that spine out of every other leaf's group towards that leaf too.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Collection, Mapping
from dataclasses import dataclass

from topo.spec import TIER, Topology


@dataclass(frozen=True)
class NextHop:
    port: int
    dmac: str  # neighbour's MAC, written as the new destination
    smac: str  # this switch's MAC, written as the new source
    peer: str  # neighbour node name (for display)


@dataclass(frozen=True)
class Route:
    prefix: ipaddress.IPv4Network
    next_hops: tuple[NextHop, ...]  # one: direct; several: a load-balancing group
    to_host: bool  # the last hop (INT sink, host-facing egress)


def mac_to_int(mac: str) -> int:
    return int(mac.replace(":", ""), 16)


def routes(topo: Topology, switch: str, down: Collection[tuple[str, int]] = (),
           pins: Mapping[ipaddress.IPv4Network, int] | None = None) -> list[Route]:
    """Up-down routing of a two-tier leaf/spine or three-tier fat tree: down towards a leaf
    by the neighbours that reach it below this switch, otherwise up through every uplink that
    still reaches it; cables with an end in ``down`` are not used; ``pins`` override."""
    sw = topo.switch(switch)
    ports = topo.ports_of(switch)
    hosts = {h.name for h in topo.hosts}
    out: list[Route] = []
    for port, (peer, _, _) in sorted(ports.items()):
        if peer in hosts:
            h = topo.host(peer)
            out.append(Route(ipaddress.ip_network(f"{h.ip}/32"), (NextHop(port, h.mac, sw.mac, peer),), True))
    reach = _Reach(topo, down)
    tier = TIER[sw.role]
    neighbours = [(port, topo.switch(peer)) for port, peer in reach.neighbours(switch)]
    for leaf in topo.leaves():
        if leaf.name == switch:
            continue
        below = tuple(NextHop(port, nb.mac, sw.mac, nb.name) for port, nb in neighbours
                      if TIER[nb.role] < tier and reach.below(nb.name, leaf.name))
        hops = below or tuple(NextHop(port, nb.mac, sw.mac, nb.name) for port, nb in neighbours
                              if TIER[nb.role] > tier and reach.up_down(nb.name, leaf.name))
        if hops:
            out.append(Route(topo.leaf_subnet(leaf.name), hops, False))
    for prefix, port in sorted((pins or {}).items()):
        peer = ports[port][0]
        mac = topo.host(peer).mac if peer in hosts else topo.switch(peer).mac
        out = [r for r in out if r.prefix != prefix]
        out.append(Route(prefix, (NextHop(port, mac, sw.mac, peer),), peer in hosts))
    return out


class _Reach:
    """Which leaves a switch reaches over the cables that are up (memoised per routes call)."""

    def __init__(self, topo: Topology, down: Collection[tuple[str, int]]) -> None:
        self.topo = topo
        self.down = set(down)
        self.hosts = {h.name for h in topo.hosts}
        self._below: dict[tuple[str, str], bool] = {}
        self._up_down: dict[tuple[str, str], bool] = {}
        self._neighbours: dict[str, list[tuple[int, str]]] = {}

    def neighbours(self, switch: str) -> list[tuple[int, str]]:
        """(port, switch) over cables with neither end reported down."""
        out = self._neighbours.get(switch)
        if out is None:  # the walks below ask again for every leaf: a k=8 fat tree has 32
            out = self._neighbours[switch] = [
                (port, peer) for port, (peer, peer_port, _) in sorted(self.topo.ports_of(switch).items())
                if peer not in self.hosts and (switch, port) not in self.down and (peer, peer_port) not in self.down]
        return out

    def _tier_neighbours(self, switch: str, higher: bool) -> list[str]:
        tier = TIER[self.topo.switch(switch).role]
        return [p for _, p in self.neighbours(switch) if (TIER[self.topo.switch(p).role] > tier) == higher
                and TIER[self.topo.switch(p).role] != tier]

    def below(self, switch: str, leaf: str) -> bool:
        """Whether ``leaf`` is ``switch`` or reachable downwards from it."""
        key = (switch, leaf)
        if key not in self._below:
            self._below[key] = switch == leaf or any(self.below(n, leaf) for n in self._tier_neighbours(switch, False))
        return self._below[key]

    def up_down(self, switch: str, leaf: str) -> bool:
        """Whether ``leaf`` is reachable from ``switch`` going down, or up and then down."""
        key = (switch, leaf)
        if key not in self._up_down:
            self._up_down[key] = self.below(switch, leaf) or any(self.up_down(n, leaf)
                                                                 for n in self._tier_neighbours(switch, True))
        return self._up_down[key]


def host_ports(topo: Topology, switch: str) -> list[int]:
    """Ports of a leaf that face hosts (INT source ingress / sink egress)."""
    hosts = {h.name for h in topo.hosts}
    return sorted(p for p, (peer, _, _) in topo.ports_of(switch).items() if peer in hosts)
