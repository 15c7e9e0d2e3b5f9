"""Routes of a leaf/spine fabric, computed from the topology alone (no P4 names here).

A leaf reaches its own hosts directly (a /32 per host, out of the host's port, rewriting the
destination MAC to the host's) and every other leaf's /16 through the group of all its spine
uplinks; a spine reaches each leaf's /16 out of the port facing that leaf. ``fabric_rules``
turns these next hops into table entries and selector groups of fabric.p4.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from topo.spec import Topology


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
    sw = topo.switch(switch)
    ports = topo.ports_of(switch)
    out: list[Route] = []
    if sw.role == "leaf":
        for port, (peer, _, _) in sorted(ports.items()):
            if peer in {h.name for h in topo.hosts}:
                h = topo.host(peer)
                out.append(Route(ipaddress.ip_network(f"{h.ip}/32"), (NextHop(port, h.mac, sw.mac, peer),), True))
        uplinks = tuple(
            NextHop(port, topo.switch(peer).mac, sw.mac, peer)
            for port, (peer, _, _) in sorted(ports.items())
            if peer in topo.switch_names() and topo.switch(peer).role == "spine"
        )
        for other in topo.leaves():
            if other.name != switch and uplinks:
                out.append(Route(topo.leaf_subnet(other.name), uplinks, False))
    else:
        for port, (peer, _, _) in sorted(ports.items()):
            out.append(Route(topo.leaf_subnet(peer), (NextHop(port, topo.switch(peer).mac, sw.mac, peer),), False))
    return out


def host_ports(topo: Topology, switch: str) -> list[int]:
    """Ports of a leaf that face hosts (INT source ingress / sink egress)."""
    hosts = {h.name for h in topo.hosts}
    return sorted(p for p, (peer, _, _) in topo.ports_of(switch).items() if peer in hosts)
