"""p4rt.thrift against Apache Thrift's own Python library (the ``thrift`` package, a test-only
dependency): the same values give the same bytes, each side reads the other's, and broken
input is refused with a clear error."""

from __future__ import annotations

import io
from typing import Any

import pytest
from thrift.protocol import TBinaryProtocol, TMultiplexedProtocol
from thrift.Thrift import TApplicationException, TMessageType, TType
from thrift.transport import TTransport

from p4rt import thrift as t
from p4rt.bmv2_runtime import SERVICES, match_param
from p4rt.entries import Exact, Lpm, Optional, Range, Ternary

INNER = t.struct("Inner", (1, "key", t.BINARY), (2, "prefix_length", t.I32))
EVERYTHING = t.struct(
    "Everything",
    (1, "flag", t.BOOL), (2, "byte", t.BYTE), (3, "short", t.I16), (4, "word", t.I32), (5, "long", t.I64),
    (6, "real", t.DOUBLE), (7, "text", t.STRING), (8, "blob", t.BINARY), (9, "longs", t.ListOf(t.I64)),
    (10, "inners", t.ListOf(INNER)), (11, "extra", t.MapOf(t.STRING, t.STRING)), (12, "inner", INNER),
    (300, "far", t.I32),
)
VALUES: dict[str, Any] = {
    "flag": True, "byte": -128, "short": 32767, "word": -(1 << 31), "long": (1 << 63) - 1, "real": -2.5e-300,
    "text": "Grüße, 交换机", "blob": b"\x00\xff\x80", "longs": [0, -1, 1 << 40], "extra": {"rx": "12", "tx": ""},
    "inners": [{"key": b"\x0a\x00\x01\x00", "prefix_length": 24}, {"key": b""}],
    "inner": {"prefix_length": 0}, "far": 7,
}


def lib_write(proto: TBinaryProtocol.TBinaryProtocol, ty: t.Type, v: Any) -> None:
    """Writes ``v`` with the library's protocol methods (what generated code does)."""
    if ty is t.BOOL:
        proto.writeBool(v)
    elif ty is t.BYTE:
        proto.writeByte(v)
    elif ty is t.I16:
        proto.writeI16(v)
    elif ty is t.I32:
        proto.writeI32(v)
    elif ty is t.I64:
        proto.writeI64(v)
    elif ty is t.DOUBLE:
        proto.writeDouble(v)
    elif ty is t.STRING:
        proto.writeString(v)
    elif ty is t.BINARY:
        proto.writeBinary(v)
    elif isinstance(ty, t.ListOf):
        proto.writeListBegin(ty.elem.ttype, len(v))
        for item in v:
            lib_write(proto, ty.elem, item)
        proto.writeListEnd()
    elif isinstance(ty, t.MapOf):
        proto.writeMapBegin(ty.key.ttype, ty.value.ttype, len(v))
        for k, item in v.items():
            lib_write(proto, ty.key, k)
            lib_write(proto, ty.value, item)
        proto.writeMapEnd()
    else:
        proto.writeStructBegin(ty.name)
        for f in ty.fields:
            if v.get(f.name) is not None:
                proto.writeFieldBegin(f.name, f.type.ttype, f.id)
                lib_write(proto, f.type, v[f.name])
                proto.writeFieldEnd()
        proto.writeFieldStop()
        proto.writeStructEnd()


def lib_read(proto: TBinaryProtocol.TBinaryProtocol, ty: t.Type) -> Any:
    """Reads a value with the library's protocol methods."""
    if isinstance(ty, t.Scalar):
        return {t.BOOL: proto.readBool, t.BYTE: proto.readByte, t.I16: proto.readI16, t.I32: proto.readI32,
                t.I64: proto.readI64, t.DOUBLE: proto.readDouble, t.STRING: proto.readString,
                t.BINARY: proto.readBinary}[ty]()
    if isinstance(ty, t.ListOf):
        _, n = proto.readListBegin()
        return [lib_read(proto, ty.elem) for _ in range(n)]
    if isinstance(ty, t.MapOf):
        _, _, n = proto.readMapBegin()
        return {lib_read(proto, ty.key): lib_read(proto, ty.value) for _ in range(n)}
    out = {}
    proto.readStructBegin()
    while True:
        _, ftype, fid = proto.readFieldBegin()
        if ftype == TType.STOP:
            break
        f = ty.by_id(fid)
        assert f is not None and f.type.ttype == ftype, (fid, ftype)
        out[f.name] = lib_read(proto, f.type)
        proto.readFieldEnd()
    proto.readStructEnd()
    return out


def lib_bytes(write) -> bytes:
    buf = TTransport.TMemoryBuffer()
    write(TBinaryProtocol.TBinaryProtocol(buf))
    return buf.getvalue()


def lib_reader(data: bytes) -> TBinaryProtocol.TBinaryProtocol:
    return TBinaryProtocol.TBinaryProtocol(TTransport.TMemoryBuffer(data), strictRead=True)


def test_a_struct_of_every_type_encodes_to_the_librarys_bytes_and_back() -> None:
    ours = t.encode_struct(EVERYTHING, VALUES)
    assert ours == lib_bytes(lambda p: lib_write(p, EVERYTHING, VALUES))
    assert t.decode_struct(EVERYTHING, ours) == VALUES
    assert lib_read(lib_reader(ours), EVERYTHING) == VALUES


@pytest.mark.parametrize("service, method, args", [
    ("standard", "bm_register_read", {"cxt_id": 0, "register_array_name": "MyIngress.r", "idx": 3}),
    ("standard", "bm_counter_write", {"cxt_id": 0, "counter_name": "c", "index": 1,
                                      "value": {"bytes": 1500, "packets": 1}}),
    ("simple_switch", "mirroring_session_add", {"mirror_id": 5, "config": {"port": 3}}),
    ("simple_switch", "set_egress_priority_queue_rate", {"port_num": 2, "priority": 7, "rate_pps": 1 << 33}),
    ("simple_pre_lag", "bm_mc_node_create", {"cxt_id": 0, "rid": 9, "port_map": "1010", "lag_map": ""}),
    ("standard", "bm_mt_add_entry", {
        "cxt_id": 0, "table_name": "I.acl", "action_name": "I.fwd", "action_data": [b"\x01\x02", b"\x00\x07"],
        "match_key": [match_param(Exact(5), 9), match_param(Lpm(0x0A000000, 8), 32),
                      match_param(Ternary(0x10, 0xF0), 8), match_param(Range(3, 9), 16),
                      match_param(Optional(None), 12)],
        "options": {"priority": 16777000}}),
])
def test_a_multiplexed_call_is_byte_for_byte_the_librarys(service: str, method: str, args: dict[str, Any]) -> None:
    m = SERVICES[service].methods[method]
    ours = t.encode_message(f"{service}:{method}", t.MessageType.CALL, 42, m.args_struct, args)

    def write(p):
        mp = TMultiplexedProtocol.TMultiplexedProtocol(p, service)
        mp.writeMessageBegin(method, TMessageType.CALL, 42)
        lib_write(mp, m.args_struct, args)
        mp.writeMessageEnd()

    assert ours == lib_bytes(write)
    proto = lib_reader(ours)
    assert proto.readMessageBegin() == (f"{service}:{method}", TMessageType.CALL, 42)
    assert lib_read(proto, m.args_struct) == args


def test_replies_and_declared_exceptions_written_by_the_library_decode() -> None:
    m = SERVICES["standard"].methods["bm_register_read"]

    def reply(fields: dict[str, Any], mtype: int = TMessageType.REPLY, seqid: int = 9) -> t.Reader:
        def write(p):
            p.writeMessageBegin("bm_register_read", mtype, seqid)
            lib_write(p, m.result_struct, fields)
            p.writeMessageEnd()
        return t.Reader(io.BytesIO(lib_bytes(write)))

    assert t.decode_reply(reply({"success": -5}), m, 9) == (-5, None)
    assert t.decode_reply(reply({"ouch": {"code": 2}}), m, 9) == (None, ("InvalidRegisterOperation", {"code": 2}))
    with pytest.raises(t.ApplicationError) as e:
        t.decode_reply(reply({"success": 1}, seqid=8), m, 9)
    assert e.value.kind == t.AppErrorType.BAD_SEQUENCE_ID
    with pytest.raises(t.ApplicationError) as e:
        t.decode_reply(reply({}), m, 9)
    assert e.value.kind == t.AppErrorType.MISSING_RESULT


def test_application_exceptions_match_the_library_both_ways() -> None:
    ours = t.encode_message("frob", t.MessageType.EXCEPTION, 3, t.APPLICATION_EXCEPTION,
                            {"message": "Invalid method name: 'frob'", "type": t.AppErrorType.UNKNOWN_METHOD})

    def write(p):
        p.writeMessageBegin("frob", TMessageType.EXCEPTION, 3)
        TApplicationException(TApplicationException.UNKNOWN_METHOD, "Invalid method name: 'frob'").write(p)
        p.writeMessageEnd()

    assert ours == lib_bytes(write)
    with pytest.raises(t.ApplicationError) as e:
        t.decode_reply(t.Reader(io.BytesIO(ours)), SERVICES["simple_switch"].methods["get_time_elapsed_us"], 3)
    assert e.value.kind == t.AppErrorType.UNKNOWN_METHOD and "frob" in e.value.message


def test_fields_the_schema_does_not_know_are_skipped() -> None:
    newer = t.struct("Newer", (1, "code", t.I32), (2, "detail", EVERYTHING), (3, "tags", t.MapOf(t.I32, t.ListOf(t.STRING))))
    data = t.encode_struct(newer, {"code": 4, "detail": VALUES, "tags": {1: ["a", "b"]}})
    older = t.struct("Older", (1, "code", t.I32))
    assert t.decode_struct(older, data) == {"code": 4}
    assert t.decode_struct(t.struct("Mistyped", (1, "code", t.STRING)), data) == {}  # wrong wire type: skipped


def test_a_non_strict_message_header_is_read_and_framing_matches_the_library() -> None:
    buf = TTransport.TMemoryBuffer()
    p = TBinaryProtocol.TBinaryProtocol(buf, strictWrite=False)
    p.writeMessageBegin("standard:bm_register_reset", TMessageType.CALL, 77)
    data = buf.getvalue()
    assert t.Reader(io.BytesIO(data)).message_begin() == ("standard:bm_register_reset", t.MessageType.CALL, 77)

    framed = TTransport.TMemoryBuffer()
    ft = TTransport.TFramedTransport(framed)
    ft.write(b"hello thrift")
    ft.flush()
    assert framed.getvalue() == t.frame(b"hello thrift")
    assert t.read_frame(io.BytesIO(framed.getvalue())).read() == b"hello thrift"


@pytest.mark.parametrize("data, message", [
    (b"\x80\x02\x00\x01", "bad protocol version"),
    (b"\x80\x01\x00\x01\x00\x00\x00\x05ab", "connection closed inside a message"),
    (b"\x80\x01\x00\x01\x7f\xff\xff\xff", "bad length"),
    (b"\x80\x01\x00\x09\x00\x00\x00\x01a\x00\x00\x00\x01", "bad message header"),
])
def test_broken_messages_are_refused_with_a_clear_error(data: bytes, message: str) -> None:
    with pytest.raises(t.ProtocolError, match=message):
        t.Reader(io.BytesIO(data)).message_begin()


def test_values_that_do_not_fit_their_type_are_refused_before_sending() -> None:
    with pytest.raises(ValueError, match="does not fit a Thrift i32"):
        t.encode_struct(INNER, {"prefix_length": 1 << 31})
    with pytest.raises(ValueError, match="has no field nope"):
        t.encode_struct(INNER, {"nope": 1})
    with pytest.raises(t.ProtocolError, match="unknown type code 99"):
        t.decode_struct(INNER, b"\x63\x00\x01")
