"""The hand decoder of table-entry updates reads exactly what protobuf reads, or declines
(protobuf then parses the update); the hand encoders write what protobuf parses back."""

import grpc
import pytest
from p4.v1 import p4runtime_pb2

from p4rt import codec as X
from p4rt import wire
from p4rt.errors import P4RuntimeError
from p4rt.schema import Schema
from p4switch.p4info import ids
from p4switch.p4info.build import build_p4info

TE = p4runtime_pb2.TableEntry


@pytest.fixture
def schema(model):
    return Schema.build(build_p4info(model))


def _acl(**fields) -> TE:
    e = TE(table_id=ids.hashed_id(ids.TABLE, "MyIngress.acl"), priority=fields.pop("priority", 10))
    m = e.match.add(field_id=1)
    m.ternary.value, m.ternary.mask = b"\x0a\x00\x00\x00", b"\xff\x00\x00\x00"
    r = e.match.add(field_id=2)
    r.range.low, r.range.high = b"\x00\x10", b"\x00\x20"
    e.match.add(field_id=3).optional.value = b"\x07"
    e.action.action.action_id = ids.hashed_id(ids.ACTION, "MyIngress.set_port")
    e.action.action.params.add(param_id=1, value=b"\x01\x00")
    for k, v in fields.items():
        setattr(e, k, v)
    return e


def _fwd(plen=24, value=b"\x0a\x00\x01\x00") -> TE:
    e = TE(table_id=ids.hashed_id(ids.TABLE, "MyIngress.fwd"))
    m = e.match.add(field_id=1)
    m.lpm.value, m.lpm.prefix_len = value, plen
    e.match.add(field_id=7).exact.value = b"\x01"
    e.action.action.action_id = ids.hashed_id(ids.ACTION, "MyIngress.rewrite")
    e.action.action.params.add(param_id=5, value=bytes(6))
    e.action.action.params.add(param_id=2, value=b"\x02")
    return e


def _ecmp(**action) -> TE:
    e = TE(table_id=ids.hashed_id(ids.TABLE, "MyIngress.ecmp"))
    e.match.add(field_id=1).exact.value = b"\x03"
    for k, v in action.items():
        setattr(e.action, k, v)
    return e


def _outcome(schema, msg, need_action=True):
    try:
        ts = schema.table(msg.table_id)
        return X.entry_from_proto(schema, ts, msg, need_action=need_action)
    except P4RuntimeError as e:
        return (e.code, str(e))


CASES = {
    "ternary, range, optional": _acl(),
    "metadata": _acl(metadata=b"cookie"),
    "negative priority": _acl(priority=-5),
    "no priority": _acl(priority=0),
    "lpm and exact": _fwd(),
    "lpm bits past the prefix": _fwd(value=b"\x0a\x00\x01\x01"),
    "lpm prefix 0": _fwd(plen=0),
    "lpm prefix too long": _fwd(plen=33),
    "member": _ecmp(action_profile_member_id=7),
    "group": _ecmp(action_profile_group_id=0xFFFFFFFF),
    "no action": _ecmp(),
    "unknown table": TE(table_id=5),
    "idle timeout": _fwd(),
}
CASES["idle timeout"].idle_timeout_ns = 10**12
CASES["negative idle timeout"] = _fwd()
CASES["negative idle timeout"].idle_timeout_ns = -1
CASES["wide param"] = _fwd()
CASES["wide param"].action.action.params[1].value = b"\x02\x00\x00"
CASES["param twice"] = _fwd()
CASES["param twice"].action.action.params.add(param_id=2, value=b"\x01")
CASES["field twice"] = _fwd()
CASES["field twice"].match.add(field_id=7).exact.value = b"\x01"


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("update_type", [p4runtime_pb2.Update.INSERT, p4runtime_pb2.Update.DELETE])
def test_decoder_reads_what_protobuf_reads(schema, case, update_type):
    update = p4runtime_pb2.Update(type=update_type, entity=p4runtime_pb2.Entity(table_entry=CASES[case]))
    view = wire.decode_table_update(update.SerializeToString())
    assert view is not None and view.type == update_type
    need_action = update_type != p4runtime_pb2.Update.DELETE
    assert _outcome(schema, view.entity.table_entry, need_action) == _outcome(schema, CASES[case], need_action)
    assert view.entity.table_entry.HasField("action") == CASES[case].HasField("action")


def test_decoder_declines_what_it_does_not_handle():
    with_counter = _fwd()
    with_counter.counter_data.packet_count = 3
    one_shot = _ecmp()
    one_shot.action.action_profile_action_set.action_profile_actions.add(weight=1).action.action_id = 1
    other_match = _fwd()
    other_match.match[1].other.type_url = "x"
    for entity in (p4runtime_pb2.Entity(table_entry=with_counter), p4runtime_pb2.Entity(table_entry=one_shot),
                   p4runtime_pb2.Entity(table_entry=other_match),
                   p4runtime_pb2.Entity(counter_entry=p4runtime_pb2.CounterEntry(counter_id=1))):
        data = p4runtime_pb2.Update(type=p4runtime_pb2.Update.MODIFY, entity=entity).SerializeToString()
        assert wire.decode_table_update(data) is None
    good = p4runtime_pb2.Update(type=1, entity=p4runtime_pb2.Entity(table_entry=_fwd())).SerializeToString()
    for cut in (1, 5, len(good) - 1):
        assert wire.decode_table_update(good[:cut]) is None  # protobuf then says what is wrong


def test_out_of_range_integers_read_as_protobuf_reads_them():
    """int32 fields sent as 64-bit varints (a client bug) are cut to 32 bits by protobuf."""
    entry = _acl(priority=0).SerializeToString() + wire.varint_field(4, 7 + 2**32)  # priority
    data = wire.varint_field(1, 1) + wire.bytes_field(2, wire.bytes_field(2, entry))  # Update{INSERT, Entity{table_entry}}
    parsed = p4runtime_pb2.Update.FromString(data)
    assert parsed.entity.table_entry.priority == 7
    assert wire.decode_table_update(data).entity.table_entry.priority == 7


def test_split_write_request_keeps_the_header():
    req = p4runtime_pb2.WriteRequest(device_id=3, role="", atomicity=p4runtime_pb2.WriteRequest.CONTINUE_ON_ERROR)
    req.election_id.high, req.election_id.low = 1, 2
    for plen in (8, 16):
        req.updates.add(type=1).entity.table_entry.CopyFrom(_fwd(plen=plen, value=b"\x0a\x00\x00\x00"))
    header, updates = wire.split_write_request(req.SerializeToString())
    assert (header.device_id, header.election_id.high, header.election_id.low) == (3, 1, 2)
    assert [p4runtime_pb2.Update.FromString(u) for u in updates] == list(req.updates)


def test_encoders_match_protobuf(schema):
    ts = schema.table(ids.hashed_id(ids.TABLE, "MyIngress.acl"))
    entry = X.entry_from_proto(schema, ts, _acl(metadata=b"m"), need_action=True)
    back = TE.FromString(X.entry_bytes(schema, ts, entry, is_const=True, elapsed_ns=5))
    expected = _acl(metadata=b"m", is_const=True)
    expected.match[1].range.low, expected.match[1].range.high = b"\x10", b"\x20"  # answers are canonical
    expected.time_since_last_hit.elapsed_ns = 5
    assert back == expected
    cells = [(0, 0, 0), (1, 2, 300), (2**40, 1, 2**63 - 1)]
    for data, (index, packets, nbytes) in zip(wire.counter_entities(9, cells), cells):
        c = p4runtime_pb2.Entity.FromString(data).counter_entry
        assert (c.counter_id, c.index.index, c.data.packet_count, c.data.byte_count) == (9, index, packets, nbytes)
        assert c.HasField("index") and c.HasField("data")
    reg = p4runtime_pb2.Entity.FromString(wire.register_entities(4, [(0, b"\x00")])[0]).register_entry
    assert (reg.register_id, reg.index.index, reg.data.bitstring) == (4, 0, b"\x00") and reg.HasField("index")
    response = p4runtime_pb2.ReadResponse.FromString(wire.read_response(wire.register_entities(4, [(1, b"\x01")] * 3)))
    assert len(response.entities) == 3


def test_malformed_write_request_is_invalid_argument(controller):
    write = controller.channel.unary_unary("/p4.v1.P4Runtime/Write", request_serializer=None,
                                           response_deserializer=None)
    with pytest.raises(grpc.RpcError) as info:
        write(b"\x22\x05\x08", timeout=10)  # an update field cut short
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
