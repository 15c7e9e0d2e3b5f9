"""Routes of a leaf/spine fabric or fat tree, computed from the topology alone (no P4 names here).

A leaf reaches its own hosts directly (a /32 per host, out of the host's port, rewriting the
destination MAC to the host's) and every other leaf's /16 through the group of all its
uplinks; a spine reaches each leaf's /16 out of the port facing that leaf, or (fat tree) the
aggregation switch of that leaf's pod; an aggregation switch reaches the leaves of its pod
directly and every other leaf through the group of its core uplinks. ``fabric_rules``
turns these next hops into table entries and selector groups of fabric.p4.
"""

from __future__ import annotations

import ipaddress
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


def routes(topo: Topology, switch: str) -> list[Route]:
    """Up-down routing of a two-tier leaf/spine or three-tier fat tree: down towards a leaf
    by the neighbours that reach it below this switch, otherwise up through every uplink."""
    sw = topo.switch(switch)
    ports = topo.ports_of(switch)
    hosts = {h.name for h in topo.hosts}
    out: list[Route] = []
    for port, (peer, _, _) in sorted(ports.items()):
        if peer in hosts:
            h = topo.host(peer)
            out.append(Route(ipaddress.ip_network(f"{h.ip}/32"), (NextHop(port, h.mac, sw.mac, peer),), True))
    tier = TIER[sw.role]
    neighbours = [(port, topo.switch(peer)) for port, (peer, _, _) in sorted(ports.items()) if peer not in hosts]
    uplinks = tuple(NextHop(port, nb.mac, sw.mac, nb.name) for port, nb in neighbours if TIER[nb.role] > tier)
    for leaf in topo.leaves():
        if leaf.name == switch:
            continue
        down = tuple(NextHop(port, nb.mac, sw.mac, nb.name) for port, nb in neighbours
                     if TIER[nb.role] < tier and _reaches(topo, nb.name, leaf.name))
        hops = down or uplinks
        if hops:
            out.append(Route(topo.leaf_subnet(leaf.name), hops, False))
    return out


def _reaches(topo: Topology, switch: str, leaf: str) -> bool:
    """Whether ``leaf`` is ``switch`` or below it (a leaf, or an aggregation switch linked to it)."""
    return switch == leaf or (topo.switch(switch).role == "agg" and leaf in
                              {peer for peer, _, _ in topo.ports_of(switch).values()})


def host_ports(topo: Topology, switch: str) -> list[int]:
    """Ports of a leaf that face hosts (INT source ingress / sink egress)."""
    hosts = {h.name for h in topo.hosts}
    return sorted(p for p, (peer, _, _) in topo.ports_of(switch).items() if peer in hosts)
