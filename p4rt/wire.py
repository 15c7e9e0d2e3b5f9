"""The protobuf wire format of the P4Runtime messages on the hot path, decoded and encoded
by hand.

Why: the protobuf runtime that p4runtime-shell pins (3.20) is pure Python on Python 3.11;
parsing a WriteRequest costs about 100 us per table entry and serializing a ReadResponse
about 400 us per entry, ten times what the switch needs to apply or read the entry. The
server therefore takes Write requests and gives Read responses as bytes (``server.py``
registers the methods that way) and uses this module for what dominates real workloads:

* **Write**: ``split_write_request`` cuts a WriteRequest into its header (parsed by protobuf:
  a few bytes) and its updates; ``decode_table_update`` reads a table-entry update into
  light views that have the attribute names of the protobuf messages, so the one validation
  in ``translate.py`` and ``entities.py`` serves both. Anything it does not handle (another
  entity kind, direct counter/meter data, one-shot action sets, unknown or repeated
  sub-messages) returns None and the caller parses that update with protobuf: the fast path
  only ever narrows what protobuf accepts, never widens it.
* **Read**: entities are encoded straight to bytes (``Encoder``) and wrapped into
  ReadResponse messages (``read_response``); entity kinds without an encoder here are
  serialized by protobuf and wrapped the same way.

Field numbers come from the message descriptors, not from constants typed in here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from p4.v1 import p4data_pb2, p4runtime_pb2


def numbers(message: Any) -> dict[str, int]:
    """Field name -> field number of a protobuf message class."""
    return {f.name: f.number for f in message.DESCRIPTOR.fields}


_WR = numbers(p4runtime_pb2.WriteRequest)
_UP = numbers(p4runtime_pb2.Update)
_EN = numbers(p4runtime_pb2.Entity)
_TE = numbers(p4runtime_pb2.TableEntry)
_FM = numbers(p4runtime_pb2.FieldMatch)
_TA = numbers(p4runtime_pb2.TableAction)
_AC = numbers(p4runtime_pb2.Action)
_PA = numbers(p4runtime_pb2.Action.Param)
_CE = numbers(p4runtime_pb2.CounterEntry)
_CD = numbers(p4runtime_pb2.CounterData)
_RE = numbers(p4runtime_pb2.RegisterEntry)
_IX = numbers(p4runtime_pb2.Index)
_PD = numbers(p4data_pb2.P4Data)
_RR = numbers(p4runtime_pb2.ReadResponse)

VARINT, LEN = 0, 2


class Undecodable(Exception):
    """Not for the fast path (or not protobuf at all): parse it with protobuf instead."""


# ---------------------------------------------------------------------------------- decoding
def _varint(data: bytes, pos: int) -> tuple[int, int]:
    b = data[pos]
    if b < 0x80:
        return b, pos + 1
    value, shift = b & 0x7F, 7
    while True:
        pos += 1
        b = data[pos]
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos + 1
        shift += 7
        if shift > 63:
            raise Undecodable("varint too long")


def fields(data: bytes) -> list[tuple[int, Any]]:
    """(key, value) of every field of one message, key being ``number << 3 | wire type``:
    ints for varints, bytes for length-delimited fields. Fixed-width and group fields are
    not in the messages the fast path reads: Undecodable. Keys and lengths under 128 (all
    of them in practice) take the short way."""
    out = []
    pos, end = 0, len(data)
    while pos < end:
        key = data[pos]
        pos += 1
        if key >= 0x80:
            key, pos = _varint(data, pos - 1)
        wire = key & 7
        if wire == LEN:
            length = data[pos]
            pos += 1
            if length >= 0x80:
                length, pos = _varint(data, pos - 1)
            value = data[pos:pos + length]
            pos += length
            if pos > end:
                raise Undecodable("truncated field")
        elif wire == VARINT:
            value = data[pos]
            pos += 1
            if value >= 0x80:
                value, pos = _varint(data, pos - 1)
        else:
            raise Undecodable(f"wire type {wire}")
        out.append((key, value))
    return out


def _key(number: int, wire: int) -> int:
    return number << 3 | wire


def _signed(value: int, bits: int) -> int:
    """An int32/int64 (or enum) field's varint as protobuf reads it: the low ``bits`` bits,
    two's complement."""
    sign = 1 << (bits - 1)
    return ((value & ((1 << bits) - 1)) ^ sign) - sign


def split_write_request(data: bytes) -> tuple[p4runtime_pb2.WriteRequest, list[bytes]]:
    """The WriteRequest without its updates (protobuf-parsed) and each update's bytes."""
    updates_field = _WR["updates"]
    header = bytearray()
    updates = []
    pos, end = 0, len(data)
    try:
        while pos < end:
            start = pos
            key, pos = _varint(data, pos)
            wire = key & 7
            if wire == VARINT:
                _, pos = _varint(data, pos)
            elif wire == LEN:
                length, pos = _varint(data, pos)
                if pos + length > end:
                    raise Undecodable("truncated field")
                if key >> 3 == updates_field:
                    updates.append(data[pos:pos + length])
                    pos += length
                    continue
                pos += length
            elif wire == 1:
                pos += 8
            elif wire == 5:
                pos += 4
            else:
                raise Undecodable(f"wire type {wire}")
            if pos > end:
                raise Undecodable("truncated field")
            header += data[start:pos]
    except IndexError:
        raise Undecodable("truncated message") from None
    return p4runtime_pb2.WriteRequest.FromString(bytes(header)), updates


class _View:
    """Read-only stand-in for a protobuf message: its fields as attributes; sub-messages
    the fast path declines are never present."""

    __slots__ = ()

    def HasField(self, name: str) -> bool:  # noqa: N802 - the protobuf method name
        return getattr(self, name, None) is not None


class _Value(_View):
    __slots__ = ("value",)

    def __init__(self, value: bytes) -> None:
        self.value = value


class _Lpm(_View):
    __slots__ = ("value", "prefix_len")

    def __init__(self, value: bytes, prefix_len: int) -> None:
        self.value, self.prefix_len = value, prefix_len


class _Ternary(_View):
    __slots__ = ("value", "mask")

    def __init__(self, value: bytes, mask: bytes) -> None:
        self.value, self.mask = value, mask


class _Range(_View):
    __slots__ = ("low", "high")

    def __init__(self, low: bytes, high: bytes) -> None:
        self.low, self.high = low, high


class FieldMatchView(_View):
    __slots__ = ("field_id", "kind", "exact", "lpm", "ternary", "range", "optional")

    def __init__(self, field_id: int, kind: str, sub: _View) -> None:
        self.field_id, self.kind = field_id, kind
        self.exact = self.lpm = self.ternary = self.range = self.optional = None
        setattr(self, kind, sub)

    def WhichOneof(self, _group: str) -> str:  # noqa: N802
        return self.kind


class ParamView(_View):
    __slots__ = ("param_id", "value")

    def __init__(self, param_id: int, value: bytes) -> None:
        self.param_id, self.value = param_id, value


class ActionView(_View):
    __slots__ = ("action_id", "params")

    def __init__(self, action_id: int, params: list[ParamView]) -> None:
        self.action_id, self.params = action_id, params


class TableActionView(_View):
    __slots__ = ("kind", "action", "action_profile_member_id", "action_profile_group_id")
    action_profile_action_set = None

    def __init__(self, kind: str | None, action: ActionView | None, member: int, group: int) -> None:
        self.kind, self.action = kind, action
        self.action_profile_member_id, self.action_profile_group_id = member, group

    def WhichOneof(self, _group: str) -> str | None:  # noqa: N802
        return self.kind


class TableEntryView(_View):
    __slots__ = ("table_id", "match", "action", "has_action", "priority", "is_default_action",
                 "idle_timeout_ns", "metadata", "is_const")
    counter_data = meter_config = time_since_last_hit = meter_counter_data = None

    def __init__(self) -> None:
        self.table_id = self.priority = self.idle_timeout_ns = 0
        self.match: list[FieldMatchView] = []
        self.action = _NO_ACTION  # as protobuf: an absent sub-message reads as an empty one
        self.has_action = False
        self.is_default_action = self.is_const = False
        self.metadata = b""

    def HasField(self, name: str) -> bool:  # noqa: N802
        return self.has_action if name == "action" else getattr(self, name, None) is not None


_NO_ACTION = TableActionView(None, None, 0, 0)


class EntityView(_View):
    __slots__ = ("table_entry",)

    def __init__(self, table_entry: TableEntryView) -> None:
        self.table_entry = table_entry

    def WhichOneof(self, _group: str) -> str:  # noqa: N802
        return "table_entry"


class UpdateView(_View):
    __slots__ = ("type", "entity")

    def __init__(self, update_type: int, entity: EntityView) -> None:
        self.type, self.entity = update_type, entity


_MATCH_KINDS = {_key(_FM[k], LEN): k for k in ("exact", "ternary", "lpm", "range", "optional")}
_K_FIELD_ID = _key(_FM["field_id"], VARINT)
_K_FIRST = _key(1, LEN)  # value / low of every match kind
_K_SECOND = {"lpm": _key(2, VARINT), "ternary": _key(2, LEN), "range": _key(2, LEN)}  # prefix_len, mask, high
_K_ACTION_ID, _K_PARAMS = _key(_AC["action_id"], VARINT), _key(_AC["params"], LEN)
_K_PARAM_ID, _K_PARAM_VALUE = _key(_PA["param_id"], VARINT), _key(_PA["value"], LEN)
_K_TA = {_key(_TA["action"], LEN): "action", _key(_TA["action_profile_member_id"], VARINT): "action_profile_member_id",
         _key(_TA["action_profile_group_id"], VARINT): "action_profile_group_id"}
_K_TYPE, _K_ENTITY = _key(_UP["type"], VARINT), _key(_UP["entity"], LEN)
_K_TABLE_ENTRY = _key(_EN["table_entry"], LEN)
_K_TABLE_ID, _K_MATCH, _K_ACTION = (_key(_TE["table_id"], VARINT), _key(_TE["match"], LEN),
                                    _key(_TE["action"], LEN))
_K_PRIORITY, _K_DEFAULT, _K_IDLE = (_key(_TE["priority"], VARINT), _key(_TE["is_default_action"], VARINT),
                                    _key(_TE["idle_timeout_ns"], VARINT))
_K_METADATA, _K_CONST = _key(_TE["metadata"], LEN), _key(_TE["is_const"], VARINT)
_U32 = 0xFFFFFFFF


def _field_match(data: bytes) -> FieldMatchView:
    field_id, kind, body = 0, None, b""
    for key, value in fields(data):
        if key == _K_FIELD_ID:
            field_id = value & _U32
        elif key in _MATCH_KINDS and kind is None:
            kind, body = _MATCH_KINDS[key], value
        else:
            raise Undecodable(f"field match key {key}")
    if kind is None:
        raise Undecodable("field match without a kind")
    second_key = _K_SECOND.get(kind)
    a, b = b"", (0 if kind == "lpm" else b"")
    for key, value in fields(body):
        if key == _K_FIRST:
            a = value
        elif key == second_key:
            b = value
        else:
            raise Undecodable(f"{kind} key {key}")
    if kind == "lpm":
        return FieldMatchView(field_id, kind, _Lpm(a, _signed(b, 32)))
    if kind == "ternary":
        return FieldMatchView(field_id, kind, _Ternary(a, b))
    if kind == "range":
        return FieldMatchView(field_id, kind, _Range(a, b))
    return FieldMatchView(field_id, kind, _Value(a))


def _action(data: bytes) -> ActionView:
    action_id, params = 0, []
    for key, value in fields(data):
        if key == _K_PARAMS:
            param_id, param = 0, b""
            for k, v in fields(value):
                if k == _K_PARAM_ID:
                    param_id = v & _U32
                elif k == _K_PARAM_VALUE:
                    param = v
                else:
                    raise Undecodable(f"param key {k}")
            params.append(ParamView(param_id, param))
        elif key == _K_ACTION_ID:
            action_id = value & _U32
        else:
            raise Undecodable(f"action key {key}")
    return ActionView(action_id, params)


def _table_action(data: bytes) -> TableActionView:
    found = fields(data)
    if not found:
        return TableActionView(None, None, 0, 0)
    if len(found) > 1:
        raise Undecodable("table action with two kinds")
    key, value = found[0]
    kind = _K_TA.get(key)  # one-shot action sets are left to protobuf
    if kind == "action":
        return TableActionView(kind, _action(value), 0, 0)
    if kind == "action_profile_member_id":
        return TableActionView(kind, None, value & _U32, 0)
    if kind == "action_profile_group_id":
        return TableActionView(kind, None, 0, value & _U32)
    raise Undecodable(f"table action key {key}")


def decode_table_update(data: bytes) -> UpdateView | None:
    """A table-entry Update as views, or None when protobuf should parse it."""
    try:
        update_type, entity = 0, None
        for key, value in fields(data):
            if key == _K_TYPE:
                update_type = _signed(value, 32)
            elif key == _K_ENTITY and entity is None:
                entity = value
            else:
                return None
        if entity is None:
            return None
        found = fields(entity)
        if len(found) != 1 or found[0][0] != _K_TABLE_ENTRY:
            return None
        return UpdateView(update_type, EntityView(_table_entry(found[0][1])))
    except (Undecodable, IndexError):  # IndexError: a message cut short
        return None


def _table_entry(data: bytes) -> TableEntryView:
    te = TableEntryView()
    for key, value in fields(data):
        if key == _K_MATCH:
            te.match.append(_field_match(value))
        elif key == _K_TABLE_ID:
            te.table_id = value & _U32
        elif key == _K_ACTION and not te.has_action:
            te.action, te.has_action = _table_action(value), True
        elif key == _K_PRIORITY:
            te.priority = _signed(value, 32)
        elif key == _K_DEFAULT:
            te.is_default_action = bool(value)
        elif key == _K_IDLE:
            te.idle_timeout_ns = _signed(value, 64)
        elif key == _K_METADATA:
            te.metadata = value
        elif key == _K_CONST:
            te.is_const = bool(value)
        else:  # counter data, meter config, time since last hit, deprecated fields, unknown ones
            raise Undecodable(f"table entry key {key}")
    return te


# ---------------------------------------------------------------------------------- encoding
def varint(value: int) -> bytes:
    """Unsigned (or int64 two's complement) varint."""
    if 0 <= value < 0x80:
        return _SMALL[value]
    value &= 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


_SMALL = [bytes([i]) for i in range(0x80)]


def tag(number: int, wire: int) -> bytes:
    return varint(_key(number, wire))


def varint_field(number: int, value: int) -> bytes:
    """A varint field; zero is the default and is left out, as protobuf does."""
    return tag(number, VARINT) + varint(value) if value else b""


def bytes_field(number: int, payload: bytes, keep_empty: bool = True) -> bytes:
    """A length-delimited field: a sub-message (present even when empty) or, with
    ``keep_empty=False``, a bytes scalar (left out when empty)."""
    if not payload and not keep_empty:
        return b""
    return tag(number, LEN) + varint(len(payload)) + payload


def read_response(entities: Iterable[bytes]) -> bytes:
    """A ReadResponse of already encoded Entity messages."""
    field = tag(_RR["entities"], LEN)
    return b"".join(field + varint(len(e)) + e for e in entities)


ENTITY_TAGS = {name: tag(number, LEN) for name, number in _EN.items()}
_COUNTER_ID = tag(_CE["counter_id"], VARINT)
_COUNTER_INDEX = tag(_CE["index"], LEN)
_COUNTER_DATA = tag(_CE["data"], LEN)
_REGISTER_ID = tag(_RE["register_id"], VARINT)
_REGISTER_INDEX = tag(_RE["index"], LEN)
_REGISTER_DATA = tag(_RE["data"], LEN)
_INDEX = tag(_IX["index"], VARINT)
_BYTES = tag(_CD["byte_count"], VARINT)
_PACKETS = tag(_CD["packet_count"], VARINT)
_BITSTRING = tag(_PD["bitstring"], LEN)


def with_length(payload: bytes) -> bytes:
    """A length prefix and the payload (the value part of a length-delimited field)."""
    return varint(len(payload)) + payload


def counter_entities(counter_id: int, cells: Iterable[tuple[int, int, int]]) -> list[bytes]:
    """Entity{counter_entry} per (index, packets, bytes); zero counts are left out, as
    protobuf leaves out default values."""
    head = _COUNTER_ID + varint(counter_id) + _COUNTER_INDEX
    entity = ENTITY_TAGS["counter_entry"]
    out = []
    for index, packets, nbytes in cells:
        data = (_BYTES + varint(nbytes) if nbytes else b"") + (_PACKETS + varint(packets) if packets else b"")
        index_msg = _INDEX + varint(index) if index else b""
        body = head + with_length(index_msg) + _COUNTER_DATA + with_length(data)
        out.append(entity + with_length(body))
    return out


def register_entities(register_id: int, cells: Iterable[tuple[int, bytes]]) -> list[bytes]:
    """Entity{register_entry} per (index, value as canonical bytes)."""
    head = _REGISTER_ID + varint(register_id) + _REGISTER_INDEX
    entity = ENTITY_TAGS["register_entry"]
    out = []
    for index, value in cells:
        index_msg = _INDEX + varint(index) if index else b""
        data = _BITSTRING + with_length(value)
        body = head + with_length(index_msg) + _REGISTER_DATA + with_length(data)
        out.append(entity + with_length(body))
    return out
