"""Validation and conversion of table entries between P4Runtime and the executor's values."""

import grpc
import pytest
from p4.v1 import p4runtime_pb2

from p4rt import codec as X
from p4rt import entries as E
from p4rt.errors import P4RuntimeError
from p4rt.schema import Schema
from p4switch.p4info import ids
from p4switch.p4info.build import build_p4info

INVALID = grpc.StatusCode.INVALID_ARGUMENT


@pytest.fixture
def schema(model):
    return Schema.build(build_p4info(model))


def _table(schema, name):
    return schema.table(ids.hashed_id(ids.TABLE, name))


def _fwd_entry(value=b"\x0a\x00\x01\x00", plen=24, port=b"\x01"):
    msg = p4runtime_pb2.TableEntry(table_id=ids.hashed_id(ids.TABLE, "MyIngress.fwd"))
    m = msg.match.add(field_id=1)
    m.lpm.value, m.lpm.prefix_len = value, plen
    msg.match.add(field_id=7).exact.value = port
    a = msg.action.action
    a.action_id = ids.hashed_id(ids.ACTION, "MyIngress.rewrite")
    a.params.add(param_id=5, value=bytes.fromhex("000000000001"))
    a.params.add(param_id=2, value=b"\x02")
    return msg


def test_lpm_exact_entry_round_trip(schema):
    ts = _table(schema, "MyIngress.fwd")
    msg = _fwd_entry()
    entry = X.entry_from_proto(schema, ts, msg, need_action=True)
    assert entry.match == {"hdr.ipv4.dstAddr": E.Lpm(0x0A000100, 24), "meta.port": E.Exact(1)}
    assert entry.action == E.ActionCall("MyIngress.rewrite", {"mac": 1, "port": 2})
    back = p4runtime_pb2.TableEntry.FromString(X.entry_bytes(schema, ts, entry))
    # canonical byte strings in answers
    assert back.match[0].lpm.value == b"\x0a\x00\x01\x00" and back.match[1].exact.value == b"\x01"
    assert back.action.action.params[0].value == b"\x01"


@pytest.mark.parametrize("mutate, message", [
    (lambda m: setattr(m.match[0].lpm, "value", b"\x0a\x00\x01\x01"), "past the /24 prefix"),
    (lambda m: setattr(m.match[0].lpm, "prefix_len", 0), "prefix length 0"),
    (lambda m: m.match.pop(), "exact match field meta.port is missing"),
    (lambda m: m.match.add(field_id=9).exact.SetInParent(), "unknown match field id 9"),
    (lambda m: setattr(m, "priority", 3), "priority must be 0"),
    (lambda m: m.action.action.params.pop(), "missing parameter"),
    (lambda m: setattr(m.action.action, "action_id", ids.hashed_id(ids.ACTION, "NoAction")), "not one of the table's actions"),
    (lambda m: setattr(m.action.action, "action_id", ids.hashed_id(ids.ACTION, "MyIngress.set_port"))
     or m.action.action.ClearField("params") or m.action.action.params.add(param_id=1, value=b"\x01"), None),
])
def test_malformed_entries_are_invalid_argument(schema, mutate, message):
    ts = _table(schema, "MyIngress.fwd")
    msg = _fwd_entry()
    mutate(msg)
    if message is None:  # a @tableonly action is fine in an entry
        assert X.entry_from_proto(schema, ts, msg, need_action=True).action.name == "MyIngress.set_port"
        with pytest.raises(P4RuntimeError, match="@tableonly"):
            X.table_action_from_proto(schema, ts, msg.action, default=True)
        return
    with pytest.raises(P4RuntimeError, match=message) as info:
        X.entry_from_proto(schema, ts, msg, need_action=True)
    assert info.value.code == INVALID


def test_values_are_taken_at_any_length_and_refused_when_they_do_not_fit(schema):
    """P4Runtime 1.4.1 section 8.3: leading zero bytes are fine; a value too wide is OUT_OF_RANGE."""
    ts = _table(schema, "MyIngress.fwd")
    msg = _fwd_entry()
    msg.match[0].lpm.value = b"\x00\x0a\x00\x01\x00"  # 5 bytes for a 32-bit field
    msg.match[1].exact.value = b"\x00\x00\x01"  # 3 bytes for a 9-bit field
    msg.action.action.params[0].value = b"\x00\x00\x00\x00\x00\x00\x00\x01"
    entry = X.entry_from_proto(schema, ts, msg, need_action=True)
    assert entry.match == {"hdr.ipv4.dstAddr": E.Lpm(0x0A000100, 24), "meta.port": E.Exact(1)}
    assert entry.action.params["mac"] == 1
    msg.match[1].exact.value = b"\x00\x02\x00"
    with pytest.raises(P4RuntimeError, match="does not fit in 9 bits") as info:
        X.entry_from_proto(schema, ts, msg, need_action=True)
    assert info.value.code == grpc.StatusCode.OUT_OF_RANGE


def _acl_entry(priority=10):
    msg = p4runtime_pb2.TableEntry(table_id=ids.hashed_id(ids.TABLE, "MyIngress.acl"), priority=priority)
    t = msg.match.add(field_id=1).ternary
    t.value, t.mask = b"\x0a\x00\x00\x00", b"\xff\x00\x00\x00"
    r = msg.match.add(field_id=2).range
    r.low, r.high = b"\x00\x50", b"\x01\xbb"
    a = msg.action.action
    a.action_id = ids.hashed_id(ids.ACTION, "MyIngress.set_port")
    a.params.add(param_id=1, value=b"\x01\x00")  # padded form is accepted too
    return msg


def test_ternary_range_entry_with_wildcard_optional(schema):
    ts = _table(schema, "MyIngress.acl")
    entry = X.entry_from_proto(schema, ts, _acl_entry(), need_action=True)
    assert entry.match == {"hdr.ipv4.dstAddr": E.Ternary(0x0A000000, 0xFF000000), "hdr.tcp.dport": E.Range(80, 443)}
    assert entry.priority == 10 and entry.action.params == {"port": 256}


@pytest.mark.parametrize("mutate, message", [
    (lambda m: setattr(m, "priority", 0), "need a priority"),
    (lambda m: setattr(m.match[0].ternary, "value", b"\x0a\x00\x00\x01"), "outside the mask"),
    (lambda m: setattr(m.match[0].ternary, "mask", b"\x00"), "all-zero ternary mask"),
    (lambda m: setattr(m.match[1].range, "low", b"\x02\x00"), "low 0x200 > high"),
    (lambda m: m.match[1].exact.CopyFrom(p4runtime_pb2.FieldMatch.Exact(value=b"\x01")), "is range match, got exact"),
    (lambda m: setattr(m.action.action, "action_id", ids.hashed_id(ids.ACTION, "NoAction")), "@defaultonly"),
    (lambda m: m.counter_data.SetInParent() or m.meter_config.SetInParent(), "no direct meter"),
])
def test_malformed_priority_entries(schema, mutate, message):
    msg = _acl_entry()
    mutate(msg)
    with pytest.raises(P4RuntimeError, match=message) as info:
        X.entry_from_proto(schema, _table(schema, "MyIngress.acl"), msg, need_action=True)
    assert info.value.code == INVALID


def test_action_profile_tables_take_members_or_groups(schema):
    ts = _table(schema, "MyIngress.ecmp")
    ta = p4runtime_pb2.TableAction(action_profile_group_id=4)
    assert X.table_action_from_proto(schema, ts, ta, default=False) == E.GroupRef(4)
    ta = p4runtime_pb2.TableAction(action_profile_member_id=2)
    assert X.table_action_from_proto(schema, ts, ta, default=False) == E.MemberRef(2)
    with pytest.raises(P4RuntimeError, match="use a member or group id"):
        X.table_action_from_proto(schema, ts, _acl_entry().action, default=False)
    one_shot = p4runtime_pb2.TableAction()
    one_shot.action_profile_action_set.SetInParent()
    with pytest.raises(P4RuntimeError) as info:
        X.table_action_from_proto(schema, ts, one_shot, default=False)
    assert info.value.code == grpc.StatusCode.UNIMPLEMENTED


def test_meter_config_checks():
    assert X.meter_from_proto(p4runtime_pb2.MeterConfig(cir=10, cburst=5, pir=20, pburst=8)) == E.MeterConfig(10, 5, 20, 8)
    with pytest.raises(P4RuntimeError, match="exceeds pir"):
        X.meter_from_proto(p4runtime_pb2.MeterConfig(cir=30, pir=20))
