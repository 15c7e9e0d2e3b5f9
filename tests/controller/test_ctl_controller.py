"""The controller against real switch processes (our target, no ports): what it installs,
read back over P4Runtime; a profile switch; recovery after a switch restart."""

from __future__ import annotations

import time

import pytest

from controller.controller import FabricController
from controller.fabric_rules import UPLINK_GROUP
from controller.profiles import settings_for
from p4rt.entries import ActionCall, GroupRef
from p4rt.errors import P4RuntimeError
from p4rt.formatting import format_match
from topo.builder import leaf_spine

pytestmark = pytest.mark.net  # switch processes


def _entries(ctl: FabricController, switch: str, short: str) -> dict[str, object]:
    """match text -> action of every entry of a table, read from the switch."""
    out = {}
    for pb in ctl.read_table(switch, ctl.p4.resolve("tables", short)):
        _, entry, action = ctl.p4.table_entry_from_pb(pb)
        if entry is not None:
            out[" ".join(format_match(m) for _, m in sorted(entry.match.items()))] = action
    return out


def _short(action: ActionCall) -> tuple[str, dict[str, int]]:
    return action.name.rsplit(".", 1)[-1], action.params


@pytest.fixture(scope="module")
def controlled(fabric_pipeline, switches):
    """2 spines x 2 leaves x 1 host, baseline installed (one fabric per module)."""
    topo = leaf_spine(2, 2, 1)
    sw = switches(topo)
    ctl = FabricController(topo, fabric_pipeline, settings_for("baseline"), profile="baseline")
    ctl.start()
    yield topo, sw, ctl
    ctl.close()


@pytest.fixture
def fabric(controlled):
    """The module's fabric at baseline; put back to baseline after the test."""
    yield controlled
    controlled[2].apply(settings_for("baseline"), "baseline")


def test_routes_and_groups_installed(fabric):
    topo, _, ctl = fabric
    leaf = _entries(ctl, "leaf1", "routing_v4")
    assert {k: _short(v) for k, v in leaf.items()} == {
        "0xa010102/32": ("route_to_port", {"port": 1}), "0xa020000/16": ("set_nh_group", {"group_id": UPLINK_GROUP})}
    assert _entries(ctl, "leaf1", "ecmp") == {str(UPLINK_GROUP): GroupRef(UPLINK_GROUP)}
    spine = {k: _short(v) for k, v in _entries(ctl, "spine1", "routing_v4").items()}
    assert spine == {"0xa010000/16": ("route_to_port", {"port": 1}), "0xa020000/16": ("route_to_port", {"port": 2})}
    selector = ctl.p4.resolve("action_profiles", "ecmp_selector")
    assert ctl.read_groups("leaf1", selector) == {UPLINK_GROUP: [(2, 1), (3, 1)]}
    assert {mid: _short(a) for mid, a in ctl.read_members("leaf1", selector).items()} == {
        2: ("set_egress_port", {"port": 2}), 3: ("set_egress_port", {"port": 3})}
    macs = {k: _short(v)[1] for k, v in _entries(ctl, "leaf2", "next_hop_mac").items()}
    assert macs["1"]["dst_mac"] == int(topo.host("h2_1").mac.replace(":", ""), 16)
    assert macs["2"]["dst_mac"] == int(topo.switch("spine1").mac.replace(":", ""), 16)
    ecn = {k: _short(v)[1] for k, v in _entries(ctl, "spine1", "ecn_thresholds").items()}
    assert ecn == {"3 1": {"kmin_pkts": 5, "kmax_pkts": 19, "pmax_scaled": 13107},  # (prio, port)
                   "3 2": {"kmin_pkts": 5, "kmax_pkts": 19, "pmax_scaled": 13107}}
    sinks = {k: _short(v)[0] for k, v in _entries(ctl, "leaf1", "int_sink").items()}
    assert sinks == {"1": "int_sink_report"}
    assert _entries(ctl, "spine1", "int_sink") == {}


def test_switches_hold_exactly_what_the_controller_thinks(fabric):
    """Read everything back from every switch: it equals the controller's view, before and
    after a profile switch (so diffs are always computed against the truth)."""
    topo, _, ctl = fabric
    for name in topo.switch_names():
        assert ctl.read_intent(name) == ctl.installed[name], name
    ctl.apply(settings_for("ai-fabric"), "ai-fabric")
    for name in topo.switch_names():
        assert ctl.read_intent(name) == ctl.installed[name], name


def test_profile_switch_changes_only_what_differs(fabric):
    _, _, ctl = fabric
    before = _entries(ctl, "leaf1", "routing_v4")
    n = ctl.apply(settings_for("ai-fabric"), "ai-fabric")
    assert 0 < n < 40
    modes = {k: _short(v)[1]["mode"] for k, v in _entries(ctl, "leaf1", "lb_mode").items()}
    assert modes == {"0x3&&&0x7": 4}  # data class: spray, best of two
    pfc = {k: _short(v)[1]["xoff_pkts"] for k, v in _entries(ctl, "leaf1", "pfc_port").items()}
    assert set(pfc.values()) == {73}  # 80 kB in 1098-byte frames, rounded up
    assert {_short(v)[0] for v in _entries(ctl, "leaf1", "int_sink").values()} == {"int_sink_to_host_and_report"}
    assert _entries(ctl, "leaf1", "routing_v4") == before
    assert ctl.apply(settings_for("ai-fabric")) == 0  # already there: nothing written


def test_switch_restart_gets_pipeline_and_state_back(fabric):
    _, sw, ctl = fabric
    before = _entries(ctl, "spine1", "routing_v4")
    # the fabric's settings as the state file would say after a `fabricctl set ecn kmin_bytes=11000`
    ctl.settings_source = lambda: (settings_for("baseline", {"ecn": {"kmin_bytes": 11000}}), "baseline+set")
    old_pid = sw.procs["spine1"].proc.pid
    sw.stop("spine1")
    sw.start("spine1")
    assert sw.procs["spine1"].proc.pid != old_pid
    deadline = time.monotonic() + 60
    while ctl.restores < 1 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert ctl.restores == 1
    assert ctl.conns["spine1"].reconnects >= 1
    ctl.settings_source = None
    assert _entries(ctl, "spine1", "routing_v4") == before
    assert {_short(a)[1]["kmin_pkts"] for a in _entries(ctl, "spine1", "ecn_thresholds").values()} == {11}
    assert ctl.conns["leaf1"].reconnects == 0


def test_failed_write_relearns_the_switch(fabric):
    """A controller whose view is wrong (here: it forgot an entry the switch has) gets the
    switch's error, re-reads the switch, and the next apply converges."""
    _, _, ctl = fabric
    classify = ctl.p4.resolve("tables", "classify")
    forgotten = next(k for k, (t, _) in ctl.installed["leaf2"].entries.items() if t == classify)
    del ctl.installed["leaf2"].entries[forgotten]
    with pytest.raises(P4RuntimeError) as err:
        ctl.apply(settings_for("baseline", {"ecn": {"kmin_bytes": 9000}}))
    assert "ALREADY_EXISTS" in str(err.value)
    assert ctl.installed["leaf2"] == ctl.read_intent("leaf2")
    ctl.apply(settings_for("baseline", {"ecn": {"kmin_bytes": 9000}}))
    assert ctl.read_intent("leaf2") == ctl.installed["leaf2"]
    kmins = {_short(a)[1]["kmin_pkts"] for a in _entries(ctl, "leaf2", "ecn_thresholds").values()}
    assert kmins == {9}
