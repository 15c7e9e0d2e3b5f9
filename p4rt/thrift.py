"""Apache Thrift's binary protocol: the wire format of BMv2's runtime interface.

BMv2 (``simple_switch --thrift-port``) serves its runtime API with Thrift's strict binary
protocol over a buffered (unframed) TCP stream, one ``TMultiplexedProtocol`` service per
component (``standard``, ``simple_pre_lag``, ``simple_switch``), so a call's message name is
``"service:method"``. This module is that protocol and nothing else: a type description of
structs and methods (what an IDL file says), an encoder and a decoder, messages, and the
``TApplicationException`` a server answers when it cannot run a call. It holds no socket
state beyond reading and writing whole messages; :mod:`p4rt.bmv2_runtime` has the BMv2
services, our switch's server maps them onto its device.

Values: a struct is a ``dict`` of field name to value (absent or ``None`` fields are not sent,
like optional fields), a list is a ``list``, a map a ``dict``, ``STRING`` is ``str`` (UTF-8)
and ``BINARY`` is ``bytes``.
"""

from __future__ import annotations

import io
import struct as _wire
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, BinaryIO


class TType(IntEnum):
    """Type codes on the wire."""

    STOP = 0
    BOOL = 2
    BYTE = 3
    DOUBLE = 4
    I16 = 6
    I32 = 8
    I64 = 10
    STRING = 11
    STRUCT = 12
    MAP = 13
    SET = 14
    LIST = 15


class MessageType(IntEnum):
    CALL = 1
    REPLY = 2
    EXCEPTION = 3
    ONEWAY = 4


VERSION_1 = 0x80010000
VERSION_MASK = 0xFFFF0000
MULTIPLEX_SEPARATOR = ":"
MAX_MESSAGE = 64 << 20  # no runtime call needs more; a bigger length is garbage on the wire


class ProtocolError(Exception):
    """Bytes that are not a Thrift binary-protocol message (or the peer closed mid-message)."""


# ---- types (what an IDL declares) ---------------------------------------------------------
@dataclass(frozen=True)
class Scalar:
    ttype: TType
    name: str


BOOL = Scalar(TType.BOOL, "bool")
BYTE = Scalar(TType.BYTE, "byte")
I16 = Scalar(TType.I16, "i16")
I32 = Scalar(TType.I32, "i32")
I64 = Scalar(TType.I64, "i64")
DOUBLE = Scalar(TType.DOUBLE, "double")
STRING = Scalar(TType.STRING, "string")
BINARY = Scalar(TType.STRING, "binary")


@dataclass(frozen=True)
class ListOf:
    elem: Type
    ttype: TType = TType.LIST


@dataclass(frozen=True)
class MapOf:
    key: Type
    value: Type
    ttype: TType = TType.MAP


@dataclass(frozen=True)
class Field:
    id: int
    name: str
    type: Type


@dataclass(frozen=True)
class Struct:
    """A struct or exception type: fields by id."""

    name: str
    fields: tuple[Field, ...]
    ttype: TType = TType.STRUCT

    def by_id(self, fid: int) -> Field | None:
        for f in self.fields:
            if f.id == fid:
                return f
        return None


Type = Scalar | ListOf | MapOf | Struct


def struct(name: str, *fields: tuple[int, str, Type]) -> Struct:
    """``struct("MirroringSessionConfig", (1, "port", I32), (2, "mgid", I32))``."""
    return Struct(name, tuple(Field(*f) for f in fields))


@dataclass(frozen=True)
class Method:
    """One service method: its argument struct, result type (``None`` for void) and the
    exceptions it declares (``throws (1: InvalidRegisterOperation ouch)``)."""

    name: str
    args: tuple[Field, ...] = ()
    result: Type | None = None
    throws: tuple[Field, ...] = ()

    @property
    def args_struct(self) -> Struct:
        return Struct(f"{self.name}_args", self.args)

    @property
    def result_struct(self) -> Struct:
        success = (Field(0, "success", self.result),) if self.result is not None else ()
        return Struct(f"{self.name}_result", success + self.throws)


def method(name: str, args: tuple[tuple[int, str, Type], ...] = (), result: Type | None = None,
           throws: tuple[tuple[int, str, Struct], ...] = ()) -> Method:
    return Method(name, tuple(Field(*a) for a in args), result, tuple(Field(*t) for t in throws))


# ---- TApplicationException ----------------------------------------------------------------
class AppErrorType(IntEnum):
    UNKNOWN = 0
    UNKNOWN_METHOD = 1
    INVALID_MESSAGE_TYPE = 2
    WRONG_METHOD_NAME = 3
    BAD_SEQUENCE_ID = 4
    MISSING_RESULT = 5
    INTERNAL_ERROR = 6
    PROTOCOL_ERROR = 7


APPLICATION_EXCEPTION = struct("TApplicationException", (1, "message", STRING), (2, "type", I32))


class ApplicationError(Exception):
    """A ``TApplicationException``: the server could not run the call at all (unknown
    method or service, bad arguments, internal error)."""

    def __init__(self, kind: int, message: str) -> None:
        try:
            self.kind: AppErrorType | int = AppErrorType(kind)
        except ValueError:
            self.kind = kind
        self.message = message
        name = self.kind.name if isinstance(self.kind, AppErrorType) else str(kind)
        super().__init__(f"{name}: {message}")


# ---- encoder ------------------------------------------------------------------------------
_FMT = {TType.BYTE: ">b", TType.I16: ">h", TType.I32: ">i", TType.I64: ">q", TType.DOUBLE: ">d"}


class Writer:
    """Appends binary-protocol values to a buffer."""

    def __init__(self) -> None:
        self.buf = bytearray()

    def i32(self, v: int) -> None:
        self.buf += _wire.pack(">i", v)

    def bytes_(self, b: bytes) -> None:
        self.i32(len(b))
        self.buf += b

    def value(self, t: Type, v: Any) -> None:
        if isinstance(t, Scalar):
            if t.ttype == TType.BOOL:
                self.buf.append(1 if v else 0)
            elif t.ttype == TType.STRING:  # STRING takes str (UTF-8), BINARY bytes
                self.bytes_(v.encode("utf-8") if isinstance(v, str) else bytes(v))
            else:
                try:
                    self.buf += _wire.pack(_FMT[t.ttype], v)
                except _wire.error:
                    raise ValueError(f"{v!r} does not fit a Thrift {t.name}") from None
        elif isinstance(t, ListOf):
            self.buf.append(t.elem.ttype)
            self.i32(len(v))
            for item in v:
                self.value(t.elem, item)
        elif isinstance(t, MapOf):
            self.buf.append(t.key.ttype)
            self.buf.append(t.value.ttype)
            self.i32(len(v))
            for k, item in v.items():
                self.value(t.key, k)
                self.value(t.value, item)
        else:
            self.struct(t, v)

    def struct(self, t: Struct, values: Mapping[str, Any]) -> None:
        unknown = set(values) - {f.name for f in t.fields}
        if unknown:
            raise ValueError(f"{t.name} has no field {', '.join(sorted(unknown))}")
        for f in t.fields:
            v = values.get(f.name)
            if v is None:
                continue
            self.buf.append(f.type.ttype)
            self.buf += _wire.pack(">h", f.id)
            self.value(f.type, v)
        self.buf.append(TType.STOP)

    def message_begin(self, name: str, mtype: MessageType, seqid: int) -> None:
        self.buf += _wire.pack(">I", VERSION_1 | mtype)
        self.bytes_(name.encode("utf-8"))
        self.i32(seqid)


def encode_struct(t: Struct, values: Mapping[str, Any]) -> bytes:
    w = Writer()
    w.struct(t, values)
    return bytes(w.buf)


def encode_message(name: str, mtype: MessageType, seqid: int, body: Struct, values: Mapping[str, Any]) -> bytes:
    """One whole message: header and its struct (arguments, result or exception)."""
    w = Writer()
    w.message_begin(name, mtype, seqid)
    w.struct(body, values)
    return bytes(w.buf)


# ---- decoder ------------------------------------------------------------------------------
class Reader:
    """Reads binary-protocol values from a stream (a socket's file or ``io.BytesIO``)."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream

    def read(self, n: int) -> bytes:
        data = self._stream.read(n)
        if data is None or len(data) != n:
            raise EOFError if not data else ProtocolError(f"connection closed inside a message ({len(data)} of {n} bytes)")
        return data

    def _unpack(self, fmt: str, n: int) -> Any:
        return _wire.unpack(fmt, self.read(n))[0]

    def i32(self) -> int:
        return self._unpack(">i", 4)

    def bytes_(self) -> bytes:
        n = self.i32()
        if not 0 <= n <= MAX_MESSAGE:
            raise ProtocolError(f"bad length {n}")
        return self.read(n)

    def value(self, ttype: int, t: Type | None) -> Any:
        """A value of wire type ``ttype``; ``t`` (the declared type, if known) turns strings
        into ``str`` and structs into dicts by field name. Without ``t`` a struct becomes a
        dict by field id (used to skip fields the schema does not know)."""
        if t is not None and t.ttype != ttype:
            raise ProtocolError(f"expected a {TType(t.ttype).name}, got type code {ttype}")
        if ttype == TType.BOOL:
            return self.read(1) != b"\x00"
        if ttype in _FMT:
            fmt = _FMT[TType(ttype)]
            return self._unpack(fmt, _wire.calcsize(fmt))
        if ttype == TType.STRING:
            data = self.bytes_()
            if t is STRING:
                try:
                    return data.decode("utf-8")
                except UnicodeDecodeError:
                    raise ProtocolError("string is not UTF-8") from None
            return data
        if ttype == TType.STRUCT:
            return self.struct(t if isinstance(t, Struct) else None)
        if ttype in (TType.LIST, TType.SET):
            etype, n = self.read(1)[0], self.i32()
            self._check_count(n)
            elem = t.elem if isinstance(t, ListOf) else None
            return [self.value(etype, elem) for _ in range(n)]
        if ttype == TType.MAP:
            ktype, vtype = self.read(1)[0], self.read(1)[0]
            n = self.i32()
            self._check_count(n)
            k_t, v_t = (t.key, t.value) if isinstance(t, MapOf) else (None, None)
            return {self.value(ktype, k_t): self.value(vtype, v_t) for _ in range(n)}
        raise ProtocolError(f"unknown type code {ttype}")

    @staticmethod
    def _check_count(n: int) -> None:
        if not 0 <= n <= MAX_MESSAGE:
            raise ProtocolError(f"bad element count {n}")

    def struct(self, t: Struct | None) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        while True:
            ttype = self.read(1)[0]
            if ttype == TType.STOP:
                return out
            fid = self._unpack(">h", 2)
            f = t.by_id(fid) if t is not None else None
            if f is not None and f.type.ttype == ttype:
                out[f.name] = self.value(ttype, f.type)
            elif t is None:
                out[fid] = self.value(ttype, None)
            else:
                self.value(ttype, None)  # a field this side does not know: skipped, as Thrift does

    def message_begin(self) -> tuple[str, MessageType, int]:
        first = self.i32()
        if first < 0:  # strict: version word, then name
            if (first & VERSION_MASK) != VERSION_1:
                raise ProtocolError(f"bad protocol version {first & 0xFFFFFFFF:#x}")
            mtype = first & 0xFF
            name = self.bytes_()
        else:  # old non-strict form: name length, name, type byte
            if first > MAX_MESSAGE:
                raise ProtocolError(f"bad message name length {first}")
            name = self.read(first)
            mtype = self.read(1)[0]
        seqid = self.i32()
        try:
            return name.decode("utf-8"), MessageType(mtype), seqid
        except (UnicodeDecodeError, ValueError):
            raise ProtocolError(f"bad message header (type {mtype}, name {name[:40]!r})") from None


def decode_struct(t: Struct, data: bytes) -> dict[str, Any]:
    return Reader(io.BytesIO(data)).struct(t)


# ---- transports ---------------------------------------------------------------------------
def frame(message: bytes) -> bytes:
    """TFramedTransport's form: a 4-byte length, then the message (BMv2 does not use it)."""
    return _wire.pack(">i", len(message)) + message


def read_frame(stream: BinaryIO) -> io.BytesIO:
    """The next framed message, for a :class:`Reader`."""
    r = Reader(stream)
    n = r.i32()
    if not 0 <= n <= MAX_MESSAGE:
        raise ProtocolError(f"bad frame length {n}")
    return io.BytesIO(r.read(n))


# ---- services -----------------------------------------------------------------------------
@dataclass
class Service:
    """A service's methods by name (what a ``service`` block of an IDL file declares)."""

    name: str
    methods: dict[str, Method] = field(default_factory=dict)

    @classmethod
    def of(cls, name: str, *methods: Method) -> Service:
        return cls(name, {m.name: m for m in methods})


Handler = Callable[..., Any]


class UserException(Exception):
    """Raised by a server handler to answer with one of the method's declared exceptions."""

    def __init__(self, name: str, values: Mapping[str, Any]) -> None:
        self.name, self.values = name, dict(values)
        super().__init__(f"{name}{self.values}")


def serve_message(reader: Reader, services: Mapping[str, tuple[Service, Mapping[str, Handler]]]) -> tuple[bytes | None, bool]:
    """Reads one call from ``reader`` and runs its handler: ``(reply bytes or None for a
    oneway call, whether the connection must be closed after the reply)``.

    As Thrift's C++ multiplexed processor (BMv2's) does: the service named before the ``:``
    runs the call and the reply carries the bare method name; a call without a service name or
    for an unknown service is answered with a ``PROTOCOL_ERROR`` and the connection is closed;
    an unknown method of a known service gets ``UNKNOWN_METHOD`` and the connection stays.
    Handlers get the arguments as keywords and may raise :class:`UserException` (a declared
    exception), :class:`ApplicationError`, or anything else (``INTERNAL_ERROR``). Raises
    ``EOFError`` at a clean end of stream and :class:`ProtocolError` on garbage."""
    name, mtype, seqid = reader.message_begin()
    service_name, sep, method_name = name.partition(MULTIPLEX_SEPARATOR)
    if not sep:
        method_name = name
    entry = services.get(service_name) if sep else None
    m = entry[0].methods.get(method_name) if entry else None
    if mtype not in (MessageType.CALL, MessageType.ONEWAY) or m is None or method_name not in entry[1]:
        reader.struct(None)  # consume the arguments
        if mtype not in (MessageType.CALL, MessageType.ONEWAY):
            return _app_error(name, seqid, AppErrorType.INVALID_MESSAGE_TYPE,
                              f"expected a call, got message type {mtype.name}"), True
        if not sep:
            return _app_error(name, seqid, AppErrorType.PROTOCOL_ERROR, "TMultiplexedProcessor: Non-multiplexed client "
                              "request dropped. Did you forget to call defaultProcessor()?"), True
        if entry is None:
            return _app_error(name, seqid, AppErrorType.PROTOCOL_ERROR, f"TMultiplexedProcessor: Unknown service: "
                              f"{service_name}. Did you forget to call registerProcessor()?"), True
        return _app_error(method_name, seqid, AppErrorType.UNKNOWN_METHOD, f"Invalid method name: '{method_name}'"), False
    try:
        args = reader.struct(m.args_struct)
    except ProtocolError as e:  # the stream is out of step now
        return _app_error(method_name, seqid, AppErrorType.PROTOCOL_ERROR, str(e)), True
    missing = [f.name for f in m.args if f.name not in args]
    handler = entry[1][method_name]
    result_t = m.result_struct
    try:
        if missing:
            raise ApplicationError(AppErrorType.PROTOCOL_ERROR, f"{method_name}: missing argument(s) {', '.join(missing)}")
        value = handler(**args)
        reply = {"success": value} if m.result is not None else {}
        if m.result is not None and value is None:
            raise ApplicationError(AppErrorType.MISSING_RESULT, f"{method_name} failed: unknown result")
    except UserException as e:
        declared = [f for f in m.throws if f.type.name == e.name]
        if not declared:
            return _app_error(method_name, seqid, AppErrorType.INTERNAL_ERROR, f"undeclared exception {e}"), False
        reply = {declared[0].name: e.values}
    except ApplicationError as e:
        return _app_error(method_name, seqid, e.kind, e.message), False
    except Exception as e:  # a bug in one handler must not take the server down
        return _app_error(method_name, seqid, AppErrorType.INTERNAL_ERROR, f"{type(e).__name__}: {e}"), False
    if mtype == MessageType.ONEWAY:
        return None, False
    return encode_message(method_name, MessageType.REPLY, seqid, result_t, reply), False


def _app_error(name: str, seqid: int, kind: int, message: str) -> bytes:
    return encode_message(name, MessageType.EXCEPTION, seqid, APPLICATION_EXCEPTION, {"message": message, "type": int(kind)})


def decode_reply(reader: Reader, m: Method, seqid: int) -> tuple[Any, tuple[str, dict[str, Any]] | None]:
    """Reads the reply to call ``seqid`` of ``m``: ``(result, None)``, or ``(None, (exception
    type name, its fields))`` for a declared exception. Raises :class:`ApplicationError` for
    a ``TApplicationException``."""
    name, mtype, got_seqid = reader.message_begin()
    if mtype == MessageType.EXCEPTION:
        err = reader.struct(APPLICATION_EXCEPTION)
        raise ApplicationError(err.get("type", 0), err.get("message", ""))
    if mtype != MessageType.REPLY:
        raise ProtocolError(f"expected a reply to {m.name}, got a {mtype.name}")
    result = reader.struct(m.result_struct)
    if got_seqid != seqid:
        raise ApplicationError(AppErrorType.BAD_SEQUENCE_ID, f"{m.name}: reply {got_seqid} to call {seqid}")
    if name != m.name and name.rpartition(MULTIPLEX_SEPARATOR)[2] != m.name:
        raise ApplicationError(AppErrorType.WRONG_METHOD_NAME, f"{m.name}: reply is for {name}")
    for f in m.throws:
        if f.name in result:
            return None, (f.type.name, result[f.name])
    if m.result is None:
        return None, None
    if "success" not in result:
        raise ApplicationError(AppErrorType.MISSING_RESULT, f"{m.name} failed: unknown result")
    return result["success"], None
