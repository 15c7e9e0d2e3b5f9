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



def _cell_entity(kind: str, obj_id: int, index: int | None = None, **fields) -> p4runtime_pb2.Entity:
    entry = getattr(p4runtime_pb2, "CounterEntry" if kind == "counter_entry" else "RegisterEntry")(**fields)
    setattr(entry, "counter_id" if kind == "counter_entry" else "register_id", obj_id)
    if index is not None:
        entry.index.index = index
    return p4runtime_pb2.Entity(**{kind: entry})


def test_read_request_names_the_cells_a_poller_reads_and_leaves_the_rest_to_protobuf():
    cells = [_cell_entity("counter_entry", 9, 5), _cell_entity("register_entry", 4, 0),
             _cell_entity("counter_entry", 9, -1)]
    others = [_cell_entity("counter_entry", 9),  # every cell
              _cell_entity("counter_entry", 0, 3),  # every counter's cell 3
              _cell_entity("counter_entry", 9, 2, data=p4runtime_pb2.CounterData(packet_count=1)),
              p4runtime_pb2.Entity(table_entry=_fwd())]
    request = p4runtime_pb2.ReadRequest(device_id=3, role="sdn", entities=cells[:2] + others + cells[2:])
    device_id, role, entities = wire.read_request(request.SerializeToString())
    assert (device_id, role) == (3, "sdn")
    assert entities[:2] == [("counter_entry", 9, 5), ("register_entry", 4, 0)]
    assert entities[-1] == ("counter_entry", 9, -1)  # the switch says a negative index is invalid
    assert [p4runtime_pb2.Entity.FromString(e) for e in entities[2:-1]] == others
    # what the connections send is what protobuf would
    encoded = wire.read_request_bytes(3, wire.read_entities(cells))
    assert p4runtime_pb2.ReadRequest.FromString(encoded) == p4runtime_pb2.ReadRequest(device_id=3, entities=cells)


@pytest.mark.parametrize("data", [b"\x12\x05\x0a\x03", b"\x08", b"\x30\x01", b"\x1a\x01\xff"],
                         ids=["entity cut short", "device id cut short", "unknown field", "role not UTF-8"])
def test_read_request_leaves_what_it_does_not_read_to_protobuf(data):
    with pytest.raises(wire.Undecodable):
        wire.read_request(data)


def test_counter_and_register_cells_decode_what_a_switch_answers():
    counters = [(0, 0, 0), (7, 2, 300), (2**40, 1, 2**63 - 1)]
    chunks = [wire.read_response(wire.counter_entities(9, counters[:2])),
              wire.read_response(wire.counter_entities(9, counters[2:]) + wire.counter_entities(11, [(7, 5, 6)]))]
    # the cells of several counters in one answer (a poller's Read), each counter's apart
    assert wire.counter_cells(chunks) == {9: {i: (p, b) for i, p, b in counters}, 11: {7: (5, 6)}}
    registers = wire.read_response(wire.register_entities(4, [(0, b"\x00"), (3, b"\x01\x02")]))
    assert wire.register_cells([registers]) == {4: {0: 0, 3: 0x0102}}
    # protobuf's own encoding, with fields the decoders pass over (a struct register, an unknown field)
    response = p4runtime_pb2.ReadResponse(entities=[_cell_entity("register_entry", 4, 6),
                                                    _cell_entity("counter_entry", 9, 1)])
    response.entities[0].register_entry.data.struct.members.add(bitstring=b"\x05")
    unknown = b"\xf8\x01\x07"  # field 31, a varint
    assert wire.register_cells([response.SerializeToString() + unknown]) == {4: {6: 0}}
    assert wire.counter_cells([response.SerializeToString()]) == {9: {1: (0, 0)}}
    with pytest.raises(wire.Undecodable):
        wire.counter_cells([chunks[0][:-1]])


def test_malformed_read_request_is_invalid_argument(controller):
    read = controller.channel.unary_stream("/p4.v1.P4Runtime/Read", request_serializer=None,
                                           response_deserializer=None)
    # device 1, then: entities cut short; an entity whose field is cut short
    for data in (b"\x08\x01\x12\x05\x08", b"\x08\x01\x12\x02\x0a\x05"):
        with pytest.raises(grpc.RpcError) as info:
            list(read(data, timeout=10))
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT, data
