"""What the controller computes for fabric.p4 from the default topology (against the real
P4Info of p4src/fabric.p4): routes, groups, classes, ECN/PFC thresholds in packets, INT roles."""

from __future__ import annotations

import pytest

from controller.fabric_rules import TargetUnits, build_intents, bytes_to_pkts, describe_index, lossless_queue_depth
from controller.pipeline import Pipeline, compile_fabric
from controller.profiles import PROFILES, settings_for
from controller.settings import INT_SINK_MODES, SettingsError
from nicmodel.int_md import decode_time_scale
from p4rt.entries import ActionCall, GroupRef
from p4rt.p4info import P4InfoIndex
from topo.builder import leaf_spine


@pytest.fixture
def p4(fabric_pipeline):
    return P4InfoIndex(fabric_pipeline.p4info)


def _table(intent, p4, short):
    full = p4.resolve("tables", short)
    return [e for (t, e) in intent.entries.values() if t == full]


def _name(action) -> str:
    return action.name.rsplit(".", 1)[-1]


def test_every_switch_gets_the_whole_contract(p4):
    topo = leaf_spine()
    intents = build_intents(topo, settings_for("baseline"), p4)
    assert set(intents) == set(topo.switch_names())
    leaf, spine = intents["leaf1"], intents["spine1"]
    routes = {(e.match[next(iter(e.match))].value, e.match[next(iter(e.match))].prefix_len): e.action
              for e in _table(leaf, p4, "routing_v4")}
    assert _name(routes[(0x0A010102, 32)]) == "route_to_port" and routes[(0x0A010102, 32)].params == {"port": 1}
    assert _name(routes[(0x0A010202, 32)]) == "route_to_port" and routes[(0x0A010202, 32)].params == {"port": 2}
    assert _name(routes[(0x0A020000, 16)]) == "set_nh_group"
    assert [e.action for e in _table(leaf, p4, "ecmp")] == [GroupRef(1)]
    assert list(leaf.groups.values()) == [((3, 1), (4, 1))]  # both spine uplinks
    members = _table(leaf, p4, "lb_group")[0].action.params
    assert (members["count"], members["port0"], members["port1"], members["port2"]) == (2, 3, 4, 0)
    assert len(_table(spine, p4, "routing_v4")) == 2 and not spine.groups
    assert len(_table(leaf, p4, "next_hop_mac")) == 4 and len(_table(spine, p4, "next_hop_mac")) == 2
    # PFC clone session per port, INT report session to the CPU port
    assert set(leaf.clone_sessions) == {1, 257, 258, 259, 260}
    assert leaf.clone_sessions[1].replicas[0].port == 255
    # INT: source (watch list) and sinks only on leaves, transit on every port
    assert len(_table(leaf, p4, "int_watchlist")) == 1 and not _table(spine, p4, "int_watchlist")
    assert {_name(e.action) for e in _table(leaf, p4, "int_sink")} == {"int_sink_report"}
    assert len(_table(leaf, p4, "int_sink")) == 2 and not _table(spine, p4, "int_sink")
    assert {e.action.params["switch_id_value"] for e in _table(spine, p4, "int_transit_port")} == {101}



def test_each_int_sink_mode_installs_its_sink_action(p4):
    """report: strip + report; echo: forward INT to the NIC (HPCC); echo+report: both."""
    topo = leaf_spine()
    actions = {"report": "int_sink_report", "echo": "int_sink_to_host", "echo+report": "int_sink_to_host_and_report"}
    assert set(actions) == set(INT_SINK_MODES)
    for mode, action in actions.items():
        leaf = build_intents(topo, settings_for("baseline", {"int": {"sink_mode": mode}}), p4)["leaf1"]
        assert {_name(e.action) for e in _table(leaf, p4, "int_sink")} == {action}, mode
        assert leaf.clone_sessions[1].replicas[0].port == topo.switch("leaf1").cpu_port  # the collector
    with pytest.raises(SettingsError, match="int.sink_mode"):
        settings_for("baseline", {"int": {"sink_mode": "mirror"}})

def test_thresholds_convert_bytes_to_packets(p4):
    topo = leaf_spine()
    st = settings_for("baseline", {"ecn": {"kmin_bytes": 2200, "kmax_bytes": 11000, "pmax": 0.5},
                                   "pfc": {"xoff_bytes": 33000, "xon_bytes": 11000, "stale_us": 300_000}})
    it = build_intents(topo, st, p4)["spine2"]
    ecn = {e.action.params["kmin_pkts"] for e in _table(it, p4, "ecn_thresholds")}
    assert ecn == {bytes_to_pkts(2200, topo)} == {3}  # 1098-byte frames (1024 MTU + RoCE headers)
    assert {e.action.params["kmax_pkts"] for e in _table(it, p4, "ecn_thresholds")} == {11}
    assert {e.action.params["pmax_scaled"] for e in _table(it, p4, "ecn_thresholds")} == {32768}
    pfc = [e.action.params for e in _table(it, p4, "pfc_port")]
    assert [(p["xoff_pkts"], p["xon_pkts"], p["enable_mask_value"]) for p in pfc] == [(31, 11, 0b1000)] * 2
    assert {p["stale_us"] for p in pfc} == {300_000}  # pfc.stale_us, as set
    off = build_intents(topo, settings_for("baseline", {"pfc": {"enabled": False}, "ecn": {"enabled": False}}), p4)
    assert not _table(off["spine2"], p4, "pfc_port") and not _table(off["spine2"], p4, "ecn_thresholds")


def test_pfc_xoff_plus_headroom_beyond_a_queue_is_refused_naming_the_port(p4):
    """XOFF must leave room in the queue for what still arrives after the pause is decided:
    ai-fabric's 80 KB XOFF is 73 frames of 1098 bytes, and a 100 Gb/s port on a 1 us cable
    takes 25 more (25 KB on the cable's round trip, a frame at each end, the PFC frame)."""
    topo = leaf_spine()
    for name in PROFILES:  # every profile fits the default 128-packet queues
        build_intents(topo, settings_for(name), p4)
    topo.queue_depth_pkts = 97
    with pytest.raises(SettingsError) as err:
        build_intents(topo, settings_for("ai-fabric"), p4)
    msg = str(err.value)
    assert "pfc.xoff_bytes (80000 = 73 packets) plus the PFC headroom of spine1 port 1 (100 Gb/s, 1 us cable)" in msg
    assert "(25 packets) exceeds the queue depth (97 packets)" in msg and "at least 98" in msg
    topo.queue_depth_pkts = 98
    build_intents(topo, settings_for("ai-fabric"), p4)
    topo.queue_depth_pkts = 1  # no PFC, nothing to protect
    build_intents(topo, settings_for("ai-fabric", {"pfc": {"enabled": False}}), p4)


def test_lossless_queue_depth_holds_every_other_ports_xoff_and_headroom():
    """A leaf of the default fabric has 4 ports: one egress queue may receive XOFF (37 frames
    with baseline's 40 KB) plus 25 frames of headroom from each of the other 3 before all are paused."""
    assert lossless_queue_depth(leaf_spine(), settings_for("baseline")) == 3 * (37 + 25)
    assert lossless_queue_depth(leaf_spine(1, 1, 7), settings_for("baseline")) == 7 * (37 + 25)


def test_profiles_differ_where_they_should(p4):
    topo = leaf_spine()
    base = build_intents(topo, settings_for("baseline"), p4)["leaf2"]
    ai = build_intents(topo, settings_for("ai-fabric"), p4)["leaf2"]
    mode = {n: _table(i, p4, "lb_mode")[0].action.params["mode"] for n, i in (("base", base), ("ai", ai))}
    assert mode == {"base": 0, "ai": 4}
    assert {_name(e.action) for e in _table(ai, p4, "int_sink")} == {"int_sink_to_host_and_report"}
    assert _table(base, p4, "routing_v4") == _table(ai, p4, "routing_v4")
    dlb = build_intents(topo, settings_for("baseline", {"lb": {"data_mode": "dlb", "flowlet_timeout_us": 300}}), p4)
    params = _table(dlb["leaf1"], p4, "lb_mode")[0].action.params
    assert (params["mode"], params["flowlet_timeout_us"]) == (1, 300)
    classes = {(e.priority, e.action.params["priority"]) for e in _table(base, p4, "classify")}
    assert classes == {(30, 6), (20, 6), (10, 3)}
    assert base.defaults[p4.resolve("tables", "classify")] == ActionCall(p4.resolve("actions", "set_priority"),
                                                                          {"priority": 0})


def test_cell_indices_read_as_ports_priorities_and_reasons():
    """`fabricctl counters/registers` label each cell the way p4src/README.md defines its index."""
    topo = leaf_spine()
    assert describe_index(topo, "leaf1", "FabricEgress.ecn.ecn_marks", 3 * 8 + 3) == "port 3 (spine1) prio 3"
    assert describe_index(topo, "leaf1", "FabricEgress.counters.tx_queue", 255 * 8 + 6) == "port 255 (cpu) prio 6"
    assert describe_index(topo, "leaf2", "FabricIngress.counters.lb_choices", 4 * 8 + 2) == "port 4 (spine2) round_robin"
    assert describe_index(topo, "spine1", "port_tx_bytes", 2) == "port 2 (leaf2)"
    assert describe_index(topo, "leaf1", "FabricIngress.counters.drop_reasons", 6) == "no route"
    assert describe_index(topo, "leaf1", "FabricIngress.spray.spray_rr_next", 1) == ""


def test_pfc_sessions_carry_a_class_of_service_only_where_the_target_takes_one(p4):
    topo = leaf_spine()
    ours = build_intents(topo, settings_for("baseline"), p4)["leaf1"]
    bmv2 = build_intents(topo, settings_for("baseline"), p4, clone_cos=False)["leaf1"]
    pfc_ids = [sid for sid in ours.clone_sessions if sid >= 256]
    assert pfc_ids and {ours.clone_sessions[s].cos for s in pfc_ids} == {7}
    assert {bmv2.clone_sessions[s].cos for s in pfc_ids} == {0}  # PI: UNIMPLEMENTED otherwise


def test_the_pipeline_tells_whether_clone_sessions_take_a_class_of_service(tmp_path):
    ours = compile_fabric("ours", tmp_path)
    assert ours.clone_cos_supported
    bmv2_json = b'{"header_types": [], "pipelines": [], "__meta__": {"version": [2, 23]}}'
    bmv2 = Pipeline(ours.p4info, bmv2_json, ours.p4info_path, ours.config_path)
    assert not bmv2.clone_cos_supported


def test_time_constants_are_written_in_the_programs_microseconds(p4):
    """BMv2 stamps wall-clock microseconds: with the fabric D times slower, the flowlet gap and
    the PFC refresh and stale times are written D times larger, so that the program's arithmetic
    means fabric time (our target: unchanged). The INT link rate stays the fabric's, exact at any
    D, and the INT source tells the NICs D (the INT-MD time scale) to read the timestamps by."""
    topo = leaf_spine()
    st = settings_for("baseline", {"lb": {"data_mode": "dlb", "flowlet_timeout_us": 300}})
    ours = build_intents(topo, st, p4)["leaf1"]
    bmv2 = build_intents(topo, st, p4, clone_cos=False, units=TargetUnits(time_scale=1000))["leaf1"]

    def params(intent, table):
        return [e.action.params for e in _table(intent, p4, table)]

    assert params(bmv2, "lb_mode")[0]["flowlet_timeout_us"] == 1000 * params(ours, "lb_mode")[0]["flowlet_timeout_us"]
    for o, b in zip(params(ours, "pfc_port"), params(bmv2, "pfc_port")):
        assert (b["refresh_us"], b["stale_us"]) == (1000 * o["refresh_us"], 1000 * o["stale_us"])
        assert b["xoff_pkts"] == o["xoff_pkts"]  # sizes are not times: unchanged
    for o, b in zip(params(ours, "int_transit_port"), params(bmv2, "int_transit_port")):
        assert b["link_rate_mbps"] == o["link_rate_mbps"] == 100_000
    (ours_unit,) = [a.params for a in ours.defaults.values() if a.name.endswith("set_time_unit")] or [None]
    (bmv2_unit,) = [a.params for a in bmv2.defaults.values() if a.name.endswith("set_time_unit")]
    assert ours_unit is None  # the program's default: microseconds, packets, scale 1
    assert decode_time_scale(bmv2_unit["int_time_scale"]) == 1000
    # BMv2 at D = 36,000 (measured): the 200 ms stale time would not fit its bit<32>; capped, not refused
    slow = build_intents(topo, st, p4, clone_cos=False, units=TargetUnits(time_scale=36_000))["leaf1"]
    assert {p["stale_us"] for p in params(slow, "pfc_port")} == {(1 << 32) - 1}
    # the INT link rate is not rounded away however slow BMv2 runs (it once was: 100 Gb/s / 76,000
    # in Mb/s is 1), and the time scale keeps D to within 1/4096
    slower = build_intents(topo, st, p4, clone_cos=False, units=TargetUnits(time_scale=76_000))["leaf1"]
    assert {p["link_rate_mbps"] for p in params(slower, "int_transit_port")} == {100_000}
    (unit,) = [a.params for a in slower.defaults.values() if a.name.endswith("set_time_unit")]
    assert abs(decode_time_scale(unit["int_time_scale"]) / 76_000 - 1) <= 1 / 4096


def test_the_pipeline_says_how_its_timestamps_relate_to_fabric_time(tmp_path):
    ours = compile_fabric("ours", tmp_path)
    assert ours.time_scale(20000) == 1.0  # our switch's clock is dilated already
    assert Pipeline(ours.p4info, b"{}", ours.p4info_path, ours.config_path).time_scale(20000) == 20000.0
