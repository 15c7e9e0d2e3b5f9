"""Routes around cables reported down: a leaf uplink leaves the leaf's groups, a spine-leaf
cable takes that spine out of every other leaf's group towards that leaf, and the fat tree
keeps its up-down paths."""

from __future__ import annotations

from controller.routing import routes
from topo.builder import fat_tree, leaf_spine


def _hops(topo, switch, down=()):
    return {str(r.prefix): sorted(nh.peer for nh in r.next_hops) for r in routes(topo, switch, down)}


def test_leaf_spine_routes_avoid_a_down_cable_from_both_sides() -> None:
    t = leaf_spine(2, 3, 1)
    up = _hops(t, "leaf2")
    assert set(map(tuple, up.values())) >= {("spine1", "spine2")}
    down = {("leaf1", 2)}  # leaf1's cable to spine1
    assert _hops(t, "leaf1", down)["10.2.0.0/16"] == ["spine2"]
    other = _hops(t, "leaf2", down)
    assert other["10.1.0.0/16"] == ["spine2"]  # spine1 no longer reaches leaf1
    assert other["10.3.0.0/16"] == ["spine1", "spine2"]  # the rest keeps both
    assert "10.1.0.0/16" not in _hops(t, "spine1", down)
    assert _hops(t, "leaf2", set()) == up  # back up: as before


def test_fat_tree_core_and_agg_routes_follow_reachability() -> None:
    t = fat_tree(4)
    edge = _hops(t, "edge1")
    far = [p for p, hops in edge.items() if len(hops) > 1]
    assert far  # other pods through both aggs
    agg1_ports = {peer: port for port, (peer, _, _) in t.ports_of("agg1").items()}
    core = next(p for p in agg1_ports if p.startswith("core"))
    down = {("agg1", agg1_ports[core])}
    assert _hops(t, "edge1", down) == edge  # agg1 still has another core uplink
    cut = {("agg1", port) for peer, port in agg1_ports.items() if peer.startswith("core")}
    pods = {str(t.leaf_subnet(leaf)) for leaf in ("edge3", "edge4", "edge5", "edge6", "edge7", "edge8")}
    after = _hops(t, "edge1", cut)
    assert all(after[p] == ["agg2"] for p in pods)  # agg1 reaches no other pod: through agg2 only
    assert after[str(t.leaf_subnet("edge2"))] == ["agg1", "agg2"]  # its own pod: both still

