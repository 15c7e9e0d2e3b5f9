"""A WriteRequest cut into its updates keeps its header and every update's bytes; a malformed
update fails alone; the hand encoders write what protobuf parses back."""

import grpc
import pytest
from p4.v1 import p4runtime_pb2

from p4rt import codec as X
from p4rt import wire
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

