"""Error statuses over raw gRPC, as the P4Runtime spec names them."""

import grpc
import pytest
from p4.v1 import p4runtime_pb2

from p4rt import wire
from p4rt.errors import MAX_DETAILS, batch_status, update_error
from p4switch.p4info import ids

INSERT, MODIFY, DELETE = p4runtime_pb2.Update.INSERT, p4runtime_pb2.Update.MODIFY, p4runtime_pb2.Update.DELETE
C = grpc.StatusCode


def l2_entry(mac: int, port: int = 1) -> p4runtime_pb2.TableEntry:
    e = p4runtime_pb2.TableEntry(table_id=ids.hashed_id(ids.TABLE, "MyIngress.l2"))
    e.match.add(field_id=1).exact.value = mac.to_bytes(6, "big")
    e.action.action.action_id = ids.hashed_id(ids.ACTION, "MyIngress.l2_forward")
    e.action.action.params.add(param_id=1, value=bytes([port]))
    return e


def test_write_before_pipeline_and_wrong_device(switch, switch_program, rt):
    c = rt.Client(switch.address, election_id=5)
    try:
        c.arbitrate()
        with pytest.raises(grpc.RpcError) as info:
            c.write(rt.update(INSERT, table_entry=l2_entry(1)))
        assert info.value.code() == C.FAILED_PRECONDITION
        with pytest.raises(grpc.RpcError) as info:
            c.stub.GetForwardingPipelineConfig(p4runtime_pb2.GetForwardingPipelineConfigRequest(device_id=1))
        assert info.value.code() == C.FAILED_PRECONDITION
        c.device_id = 9
        with pytest.raises(grpc.RpcError) as info:
            c.write(rt.update(INSERT, table_entry=l2_entry(1)))
        assert info.value.code() == C.NOT_FOUND
    finally:
        c.close()


def test_batch_reports_each_update(controller, rt):
    bad_width = l2_entry(2)
    bad_width.match[0].exact.value = b"\x01" * 7
    unknown_table = l2_entry(3)
    unknown_table.table_id = 0x02000001
    with pytest.raises(grpc.RpcError) as info:
        controller.write(rt.update(INSERT, table_entry=l2_entry(1)), rt.update(INSERT, table_entry=l2_entry(1)),
                         rt.update(INSERT, table_entry=bad_width), rt.update(INSERT, table_entry=unknown_table),
                         rt.update(DELETE, table_entry=l2_entry(5)))
    assert info.value.code() == C.UNKNOWN
    assert [code for code, _ in rt.batch_errors(info.value)] == [
        C.OK, C.ALREADY_EXISTS, C.OUT_OF_RANGE, C.INVALID_ARGUMENT, C.NOT_FOUND]
    # the good update took effect, the rest changed nothing
    read = controller.read(p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry(
        table_id=ids.hashed_id(ids.TABLE, "MyIngress.l2"))))
    assert [e.table_entry.match[0].exact.value for e in read] == [b"\x01"]


def test_malformed_update_fails_alone(controller, rt):
    """Each update of a Write is parsed on its own: a garbled one is INVALID_ARGUMENT, the
    others apply."""
    good = rt.update(INSERT, table_entry=l2_entry(1)).SerializeToString()
    garbled = b"\x12\x05\x12\x03\x08"  # Update{entity: a table entry cut short}
    request = p4runtime_pb2.WriteRequest(device_id=controller.device_id)
    request.election_id.low = controller.election_id
    updates = p4runtime_pb2.WriteRequest.DESCRIPTOR.fields_by_name["updates"].number
    data = request.SerializeToString() + b"".join(wire.bytes_field(updates, u) for u in (garbled, good))
    write = controller.channel.unary_unary("/p4.v1.P4Runtime/Write", request_serializer=None,
                                           response_deserializer=None)
    with pytest.raises(grpc.RpcError) as info:
        write(data, timeout=10)
    assert info.value.code() == C.UNKNOWN
    assert [code for code, _ in rt.batch_errors(info.value)] == [C.INVALID_ARGUMENT, C.OK]
    read = controller.read(p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry(
        table_id=ids.hashed_id(ids.TABLE, "MyIngress.l2"))))
    assert [e.table_entry.match[0].exact.value for e in read] == [b"\x01"]


def test_full_table_is_resource_exhausted(controller, rt):
    controller.write(*[rt.update(INSERT, table_entry=l2_entry(mac)) for mac in range(1, 5)])
    with pytest.raises(grpc.RpcError) as info:
        controller.write(rt.update(INSERT, table_entry=l2_entry(99)))
    assert rt.batch_errors(info.value)[0][0] == C.RESOURCE_EXHAUSTED


def acl_entry(priority: int, value: bytes = b"\x08\x00", mask: bytes = b"\xff\xff") -> p4runtime_pb2.TableEntry:
    e = p4runtime_pb2.TableEntry(table_id=ids.hashed_id(ids.TABLE, "MyIngress.acl"), priority=priority)
    t = e.match.add(field_id=1).ternary
    t.value, t.mask = value, mask
    e.action.action.action_id = ids.hashed_id(ids.ACTION, "MyIngress.drop")
    return e


def test_malformed_entries_are_invalid_argument(controller, rt):
    lpm = p4runtime_pb2.TableEntry(table_id=ids.hashed_id(ids.TABLE, "MyIngress.routes"))
    m = lpm.match.add(field_id=1).lpm
    m.value, m.prefix_len = bytes([10, 0, 0, 1]), 8
    lpm.action.action.action_id = ids.hashed_id(ids.ACTION, "MyIngress.drop")
    default_only = acl_entry(5)
    default_only.action.action.action_id = ids.hashed_id(ids.ACTION, "NoAction")
    with pytest.raises(grpc.RpcError) as info:
        controller.write(rt.update(INSERT, table_entry=lpm),
                         rt.update(INSERT, table_entry=acl_entry(0)),
                         rt.update(INSERT, table_entry=acl_entry(5, value=b"\x08\x01", mask=b"\xff\x00")),
                         rt.update(INSERT, table_entry=default_only),
                         rt.update(INSERT, table_entry=acl_entry(5)))
    errors = rt.batch_errors(info.value)
    assert [code for code, _ in errors] == [C.INVALID_ARGUMENT] * 4 + [C.OK]
    assert "past the /8 prefix" in errors[0][1]
    assert "need a priority" in errors[1][1]
    assert "outside the mask" in errors[2][1]
    assert "@defaultonly" in errors[3][1]


def test_const_default_action_cannot_change(controller, rt):
    e = p4runtime_pb2.TableEntry(table_id=ids.hashed_id(ids.TABLE, "MyIngress.acl"), is_default_action=True)
    e.action.action.action_id = ids.hashed_id(ids.ACTION, "MyIngress.drop")
    with pytest.raises(grpc.RpcError) as info:
        controller.write(rt.update(MODIFY, table_entry=e))
    assert rt.batch_errors(info.value)[0][0] == C.PERMISSION_DENIED


def test_unsupported_requests_are_unimplemented(controller, rt):
    req = p4runtime_pb2.WriteRequest(device_id=1, atomicity=p4runtime_pb2.WriteRequest.ROLLBACK_ON_ERROR)
    req.election_id.low = 10
    with pytest.raises(grpc.RpcError) as info:
        controller.stub.Write(req)
    assert info.value.code() == C.UNIMPLEMENTED
    ext = p4runtime_pb2.Entity()
    ext.extern_entry.extern_type_id = 0x81000001
    with pytest.raises(grpc.RpcError) as info:
        controller.write(p4runtime_pb2.Update(type=INSERT, entity=ext))
    assert rt.batch_errors(info.value)[0][0] == C.UNIMPLEMENTED


def test_backup_client_cannot_write_and_hears_about_primary_changes(controller, switch, rt):
    backup = rt.Client(switch.address, election_id=3)
    try:
        arb = backup.arbitrate().arbitration
        assert arb.status.code == C.ALREADY_EXISTS.value[0]
        assert (arb.election_id.high, arb.election_id.low) == (0, 10)
        with pytest.raises(grpc.RpcError) as info:
            backup.write(rt.update(INSERT, table_entry=l2_entry(1)))
        assert info.value.code() == C.PERMISSION_DENIED
        assert backup.read(p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry())) == []  # reads are open

        # the backup takes over with a higher id: both are told
        arb = backup.arbitrate(election_id=20).arbitration
        assert arb.status.code == C.OK.value[0] and arb.election_id.low == 20
        old = controller.next("arbitration").arbitration
        assert old.status.code == C.ALREADY_EXISTS.value[0] and old.election_id.low == 20
        with pytest.raises(grpc.RpcError) as info:
            controller.write(rt.update(INSERT, table_entry=l2_entry(1)))
        assert info.value.code() == C.PERMISSION_DENIED
        backup.write(rt.update(INSERT, table_entry=l2_entry(1)))

        # the new primary leaves: primary goes back to the remaining client, which is told so
        backup.close()
        back = controller.next("arbitration").arbitration
        assert back.status.code == C.OK.value[0] and back.election_id.low == 10
        controller.write(rt.update(DELETE, table_entry=l2_entry(1)))
    finally:
        backup.close()


def test_duplicate_election_id_or_wrong_device_closes_the_stream(controller, switch, rt):
    dup = rt.Client(switch.address, election_id=10)
    try:
        assert dup.arbitrate() is None
        assert dup.stream_error.code() == C.INVALID_ARGUMENT
    finally:
        dup.close()
    other = rt.Client(switch.address, election_id=11)
    try:
        assert other.arbitrate(device_id=7) is None
        assert other.stream_error.code() == C.NOT_FOUND
    finally:
        other.close()
    with_role = rt.Client(switch.address, election_id=12)
    try:
        req = p4runtime_pb2.StreamMessageRequest()
        req.arbitration.device_id = 1
        req.arbitration.role.name = "sdn-apps"
        req.arbitration.election_id.low = 12
        with_role.send(req)
        assert with_role.next("arbitration") is None
        assert with_role.stream_error.code() == C.NOT_FOUND
        assert "sdn-apps" in with_role.stream_error.details()
    finally:
        with_role.close()
    req = p4runtime_pb2.ReadRequest(device_id=1, role="sdn-apps")
    with pytest.raises(grpc.RpcError) as info:
        list(controller.stub.Read(req))
    assert info.value.code() == C.NOT_FOUND


def test_packet_out_from_backup_is_refused_on_the_stream(controller, switch, rt):
    backup = rt.Client(switch.address, election_id=2)
    try:
        backup.arbitrate()
        req = p4runtime_pb2.StreamMessageRequest()
        req.packet.payload = b"\x00" * 14
        backup.send(req)
        err = backup.next("error").error
        assert err.canonical_code == C.PERMISSION_DENIED.value[0]
        assert err.packet_out.packet_out.payload == b"\x00" * 14
    finally:
        backup.close()


def test_is_const_in_a_write_is_invalid(controller, rt):
    entry = l2_entry(1)
    entry.is_const = True
    with pytest.raises(grpc.RpcError) as info:
        controller.write(rt.update(INSERT, table_entry=entry))
    code, message = rt.batch_errors(info.value)[0]
    assert code == C.INVALID_ARGUMENT and "is_const" in message
    assert controller.read(p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry())) == []


@pytest.mark.parametrize("kind", ["counter_entry", "register_entry"])
def test_negative_index_is_invalid_and_past_the_end_out_of_range(controller, rt, kind):
    if kind == "counter_entry":
        entity = p4runtime_pb2.CounterEntry(counter_id=ids.hashed_id(ids.COUNTER, "MyIngress.port_packets"))
    else:
        entity = p4runtime_pb2.RegisterEntry(register_id=ids.hashed_id(ids.REGISTER, "MyIngress.last_length"))
    for index, code in ((-1, C.INVALID_ARGUMENT), (-(1 << 63), C.INVALID_ARGUMENT), (1 << 20, C.OUT_OF_RANGE)):
        entity.index.index = index
        with pytest.raises(grpc.RpcError) as info:
            controller.read(p4runtime_pb2.Entity(**{kind: entity}))
        assert info.value.code() == code, index
    entity.index.index = -1
    if kind == "register_entry":
        entity.data.bitstring = b"\x01"
    with pytest.raises(grpc.RpcError) as info:
        controller.write(rt.update(MODIFY, **{kind: entity}))
    assert rt.batch_errors(info.value)[0][0] == C.INVALID_ARGUMENT


def test_huge_batch_details_keep_every_code_within_bounds():

    errors = [update_error(C.INVALID_ARGUMENT, f"update {i}: " + "x" * 300) for i in range(10000)]
    status = batch_status(errors, "10000 of 10000 updates failed")
    assert len(status.details) == 10000
    assert status.ByteSize() < 2 * MAX_DETAILS  # the client channel accepts 4 MiB
    last = p4runtime_pb2.Error()
    status.details[-1].Unpack(last)
    assert last.canonical_code == C.INVALID_ARGUMENT.value[0] and last.message.startswith("update 9999: xx")
