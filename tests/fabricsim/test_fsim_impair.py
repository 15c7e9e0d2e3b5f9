"""P4Fabric.impair: one direction of one cable loses frames, the rest of the fabric does not;
bad requests are refused with what was wrong, changing nothing."""

from __future__ import annotations

import pytest

from fabricsim.fabric import P4Fabric
from topo.builder import leaf_spine


def _frames_through(fab: P4Fabric, name: str, n: int) -> int:
    link = fab.links[name]
    got: list[bytes] = []
    link.deliver = got.append
    for _ in range(n):
        link.transmit(b"\x00" * 100)
    fab.sim.run()
    return len(got)


def test_only_the_named_direction_loses_frames() -> None:
    fab = P4Fabric(leaf_spine(1, 2, 1), seed=3)
    fab.impair("leaf1", "spine1", loss=0.5)
    up = next(n for n in fab.links if n.startswith("leaf1:") and n.endswith("->spine1"))
    down = next(n for n in fab.links if n.startswith("spine1:") and n.endswith("->leaf1"))
    delivered = _frames_through(fab, up, 400)
    assert 100 < delivered < 300 and fab.links[up].counters.lost == 400 - delivered
    assert _frames_through(fab, down, 400) == 400 and fab.links[down].counters.lost == 0
    assert fab.links[up].config.rate_bps == fab.links[down].config.rate_bps  # rate and delay kept


def test_bad_requests_are_refused_and_change_nothing() -> None:
    fab = P4Fabric(leaf_spine(1, 2, 1))
    with pytest.raises(ValueError, match="no link from 'leaf1' to 'leaf2'"):
        fab.impair("leaf1", "leaf2", loss=0.1)
    with pytest.raises(ValueError, match="unknown impairment"):
        fab.impair("leaf1", "spine1", rate_bps=1e9)
    with pytest.raises(ValueError, match="loss probability"):
        fab.impair("leaf1", "spine1", loss=1.5)
    assert all(lk.config.loss == 0 for lk in fab.links.values())
