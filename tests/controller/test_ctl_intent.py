"""P4Info encoding and the intent diff: the exact P4Runtime updates the controller sends."""

from __future__ import annotations

import pytest
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from controller.intent import Intent, diff
from p4rt.entries import ActionCall, CloneSession, Exact, GroupRef, Lpm, Replica, TableEntry, Ternary
from p4rt.errors import P4InfoError
from p4rt.p4info import P4InfoIndex, encode

U = p4runtime_pb2.Update


def small_p4info() -> p4info_pb2.P4Info:
    """A routing table with a selector, a DSCP table with a default, a register: the shapes fabric.p4 uses."""
    info = p4info_pb2.P4Info()
    a = info.actions.add()
    a.preamble.id, a.preamble.name = 0x01000001, "Ing.set_nh"
    for i, (n, w) in enumerate((("port", 9), ("dmac", 48)), 1):
        p = a.params.add()
        p.id, p.name, p.bitwidth = i, n, w
    d = info.actions.add()
    d.preamble.id, d.preamble.name = 0x01000002, "Ing.drop"
    s = info.actions.add()
    s.preamble.id, s.preamble.name = 0x01000003, "Ing.set_prio"
    p = s.params.add()
    p.id, p.name, p.bitwidth = 1, "prio", 3
    t = info.tables.add()
    t.preamble.id, t.preamble.name = 0x02000001, "Ing.routes"
    m = t.match_fields.add()
    m.id, m.name, m.bitwidth, m.match_type = 1, "hdr.ipv4.dst", 32, p4info_pb2.MatchField.LPM
    t.action_refs.add(id=a.preamble.id)
    t.implementation_id = 0x11000001
    t2 = info.tables.add()
    t2.preamble.id, t2.preamble.name = 0x02000002, "Ing.dscp"
    m = t2.match_fields.add()
    m.id, m.name, m.bitwidth, m.match_type = 1, "hdr.ipv4.dscp", 6, p4info_pb2.MatchField.TERNARY
    prof = info.action_profiles.add()
    prof.preamble.id, prof.preamble.name = 0x11000001, "Ing.selector"
    prof.with_selector, prof.size, prof.max_group_size = True, 64, 8
    r = info.registers.add()
    r.preamble.id, r.preamble.name, r.size = 0x13000001, "Ing.kmin", 16
    r.type_spec.bitstring.bit.bitwidth = 24
    return info


@pytest.fixture
def p4():
    return P4InfoIndex(small_p4info())


def test_canonical_encoding():
    assert encode(0, 9) == b"\x00"
    assert encode(255, 9) == b"\xff"
    assert encode(256, 9) == b"\x01\x00"
    assert int.from_bytes(encode(0x0A010102, 32), "big") == 0x0A010102
    with pytest.raises(P4InfoError, match="does not fit in 9 bits"):
        encode(512, 9)


def test_entry_encoding_round_trip(p4):
    e = TableEntry({"hdr.ipv4.dst": Lpm(0x0A020000, 16)}, GroupRef(7))
    pb = p4.table_entry_pb("Ing.routes", e)
    assert pb.table_id == 0x02000001
    assert pb.match[0].lpm.value == b"\x0a\x02\x00\x00"
    assert int.from_bytes(pb.match[0].lpm.value, "big") == 0x0A020000 and pb.match[0].lpm.prefix_len == 16
    assert pb.action.action_profile_group_id == 7
    table, back, action = p4.table_entry_from_pb(pb)
    assert (table, back.match, action) == ("Ing.routes", e.match, GroupRef(7))
    t = TableEntry({"hdr.ipv4.dscp": Ternary(26, 0x3F)}, ActionCall("Ing.set_prio", {"prio": 3}), priority=10)
    pb = p4.table_entry_pb("Ing.dscp", t)
    assert pb.priority == 10 and pb.action.action.params[0].value == b"\x03"
    assert p4.table_entry_from_pb(pb)[1].match == t.match


def test_bad_names_and_params_are_clear(p4):
    with pytest.raises(P4InfoError, match="no table 'Ing.nope'.*Ing.dscp, Ing.routes"):
        p4.get("tables", "Ing.nope")
    with pytest.raises(P4InfoError, match="expected parameters"):
        p4.action_pb(ActionCall("Ing.set_nh", {"port": 1}))
    with pytest.raises(P4InfoError, match="no key field"):
        p4.table_entry_pb("Ing.dscp", TableEntry({"hdr.ipv4.dst": Exact(1)}, ActionCall("Ing.drop")))
    with pytest.raises(P4InfoError, match="index 16 outside 0..15"):
        p4.register_pb("Ing.kmin", 16)


def _intent(prio: int, members: list[int], with_dscp: bool) -> Intent:
    i = Intent()
    for mid in members:
        i.add_member("Ing.selector", mid, ActionCall("Ing.set_nh", {"port": mid, "dmac": 0x02AA00000065}))
    i.add_group("Ing.selector", 1, [(mid, 1) for mid in members])
    i.add_entry("Ing.routes", TableEntry({"hdr.ipv4.dst": Lpm(0x0A020000, 16)}, GroupRef(1)))
    if with_dscp:
        i.add_entry("Ing.dscp", TableEntry({"hdr.ipv4.dscp": Ternary(26, 0x3F)},
                                           ActionCall("Ing.set_prio", {"prio": 3}), priority=1))
    i.set_default("Ing.dscp", ActionCall("Ing.set_prio", {"prio": prio}))
    i.add_clone_session(CloneSession(1, [Replica(255, 0)]))
    return i


def _summary(updates: list[U]) -> list[tuple[str, str]]:
    return [(U.Type.Name(u.type), u.entity.WhichOneof("entity")) for u in updates]


def test_diff_from_empty_orders_by_reference(p4):
    ups = diff(p4, Intent(), _intent(5, [3, 4], True))
    assert _summary(ups) == [
        ("INSERT", "action_profile_member"), ("INSERT", "action_profile_member"),
        ("INSERT", "action_profile_group"), ("INSERT", "packet_replication_engine_entry"),
        ("INSERT", "table_entry"), ("INSERT", "table_entry"), ("MODIFY", "table_entry"),
    ]
    assert ups[-1].entity.table_entry.is_default_action and ups[-1].entity.table_entry.action.action.params[0].value == b"\x05"


def test_diff_between_settings_writes_only_changes(p4):
    old, new = _intent(5, [3, 4], True), _intent(6, [3], False)
    ups = diff(p4, old, new)
    assert _summary(ups) == [
        ("MODIFY", "action_profile_group"), ("MODIFY", "table_entry"),
        ("DELETE", "table_entry"), ("DELETE", "action_profile_member"),
    ]
    assert [m.member_id for m in ups[0].entity.action_profile_group.members] == [3]
    assert ups[3].entity.action_profile_member.member_id == 4
    assert diff(p4, new, new) == []


def test_duplicate_entry_rejected():
    i = Intent()
    e = TableEntry({"hdr.ipv4.dst": Lpm(0x0A020000, 16)}, GroupRef(1))
    i.add_entry("Ing.routes", e)
    with pytest.raises(ValueError, match="two entries with the same match"):
        i.add_entry("Ing.routes", TableEntry({"hdr.ipv4.dst": Lpm(0x0A020000, 16)}, GroupRef(2)))
