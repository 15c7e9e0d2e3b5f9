"""Pinned routes (what a drill installs on purpose): a host's /32 forced onto one uplink beats
the leaf's group by longest prefix, a pin replaces the computed route of the same prefix, and
a spine pinned back towards the sender makes the routing loop the deadlock scenario needs."""

from __future__ import annotations

import ipaddress

from controller.routing import routes
from topo.builder import leaf_spine


def _by_prefix(topo, switch, pins=None):
    return {str(r.prefix): r for r in routes(topo, switch, pins=pins)}


def test_a_pin_adds_or_replaces_one_route_and_nothing_else() -> None:
    t = leaf_spine(2, 2, 2)
    h = t.host("h2_2")
    plain = _by_prefix(t, "leaf1")
    pinned = _by_prefix(t, "leaf1", {ipaddress.ip_network(f"{h.ip}/32"): 3})
    r = pinned[f"{h.ip}/32"]
    assert [(nh.port, nh.peer) for nh in r.next_hops] == [(3, "spine1")] and not r.to_host
    assert {k: v for k, v in pinned.items() if k != f"{h.ip}/32"} == plain
    # a spine pinned back to the leaf the packet came from: a loop leaf1 <-> spine1
    loop = _by_prefix(t, "spine1", {ipaddress.ip_network(f"{h.ip}/32"): 1})[f"{h.ip}/32"]
    assert [nh.peer for nh in loop.next_hops] == ["leaf1"]
    # a leaf's own host re-pinned: the host route is replaced, not duplicated
    own = t.host("h1_1")
    routes_ = routes(t, "leaf1", pins={ipaddress.ip_network(f"{own.ip}/32"): 2})
    assert [[nh.port for nh in r.next_hops] for r in routes_ if str(r.prefix) == f"{own.ip}/32"] == [[2]]
