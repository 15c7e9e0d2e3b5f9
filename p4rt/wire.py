"""The protobuf wire format of the P4Runtime messages on the hot path, cut and encoded by hand.

Why: protobuf's C (upb) backend parses a whole Update in about 5 us, so Write requests are parsed
by protobuf, update by update (``split_write_request`` cuts a WriteRequest into its header and
each update's bytes, so one malformed update fails alone, as the others are applied). Building
Read answers field by field through the message API costs more than writing their bytes, and a
full Read of a program's counters and registers is tens of thousands of entities: entities are
encoded straight to bytes (``counter_entities``, ``register_entities``, and ``p4rt.codec``'s
``*_bytes``) and wrapped into ReadResponse messages (``read_response``); entity kinds without an
encoder here are serialized by protobuf and wrapped the same way.

Field numbers come from the message descriptors, not from constants typed in here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from p4.v1 import p4data_pb2, p4runtime_pb2


def numbers(message: Any) -> dict[str, int]:
    """Field name -> field number of a protobuf message class."""
    return {f.name: f.number for f in message.DESCRIPTOR.fields}


_WR = numbers(p4runtime_pb2.WriteRequest)
_EN = numbers(p4runtime_pb2.Entity)
_CE = numbers(p4runtime_pb2.CounterEntry)
_CD = numbers(p4runtime_pb2.CounterData)
_RE = numbers(p4runtime_pb2.RegisterEntry)
_IX = numbers(p4runtime_pb2.Index)
_PD = numbers(p4data_pb2.P4Data)
_RR = numbers(p4runtime_pb2.ReadResponse)

VARINT: Final = 0
LEN: Final = 2


class Undecodable(Exception):
    """Bytes that are not a protobuf message of the shape read here (cut short, bad wire type)."""


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
    not in the messages read this way (ReadResponses, counted by the benchmark): Undecodable.
    Keys and lengths under 128 (all of them in practice) take the short way."""
    out = []
    pos, end = 0, len(data)
    value: Any  # the field's int or bytes
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
            number = data[pos]
            pos += 1
            if number >= 0x80:
                number, pos = _varint(data, pos - 1)
            value = number
        else:
            raise Undecodable(f"wire type {wire}")
        out.append((key, value))
    return out


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


_SMALL: Final = [bytes([i]) for i in range(0x80)]


_TAGS: Final[dict[int, bytes]] = {}  # key (number << 3 | wire type) -> its varint, made once


def tag(number: int, wire: int) -> bytes:
    key = number << 3 | wire
    encoded = _TAGS.get(key)
    if encoded is None:
        encoded = _TAGS[key] = varint(key)
    return encoded


def varint_field(number: int, value: int) -> bytes:
    """A varint field; zero is the default and is left out, as protobuf does."""
    if not value:
        return b""
    return tag(number, VARINT) + (_SMALL[value] if 0 < value < 0x80 else varint(value))


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


ENTITY_TAGS: Final = {name: tag(number, LEN) for name, number in _EN.items()}
_COUNTER_ID: Final = tag(_CE["counter_id"], VARINT)
_COUNTER_INDEX: Final = tag(_CE["index"], LEN)
_COUNTER_DATA: Final = tag(_CE["data"], LEN)
_REGISTER_ID: Final = tag(_RE["register_id"], VARINT)
_REGISTER_INDEX: Final = tag(_RE["index"], LEN)
_REGISTER_DATA: Final = tag(_RE["data"], LEN)
_INDEX: Final = tag(_IX["index"], VARINT)
_BYTES: Final = tag(_CD["byte_count"], VARINT)
_PACKETS: Final = tag(_CD["packet_count"], VARINT)
_BITSTRING: Final = tag(_PD["bitstring"], LEN)


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
