"""The protobuf wire format of the P4Runtime messages on the hot path, cut and encoded by hand.

Why: protobuf's C (upb) backend parses a whole Update in about 5 us, so Write requests are parsed
by protobuf, update by update (``split_write_request`` cuts a WriteRequest into its header and
each update's bytes, so one malformed update fails alone, as the others are applied). Building
Read answers field by field through the message API costs more than writing their bytes, and a
full Read of a program's counters and registers is tens of thousands of entities: entities are
encoded straight to bytes (``counter_entities``, ``register_entities``, and ``p4rt.codec``'s
``*_bytes``) and wrapped into ReadResponse messages (``read_response``); entity kinds without an
encoder here are serialized by protobuf and wrapped the same way. A poller's Read (the telemetry's
cells of each port, every sample) is cut here on both sides: the switch finds the cells it names
(``read_request``), the controller their values (``counter_cells``, ``register_cells``), where
protobuf's message objects cost ~600 instructions an attribute read, a dozen of them a cell.

Field numbers come from the message descriptors, not from constants typed in here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from librt.strings import BytesWriter
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
_RQ = numbers(p4runtime_pb2.ReadRequest)

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


def _key(number: int, wire: int) -> int:
    return number << 3 | wire


def _int64(value: int) -> int:
    """A varint read as the int64 it encodes (two's complement)."""
    return value - (1 << 64) if value >= 1 << 63 else value


_DEVICE_ID_KEY: Final = _key(_RQ["device_id"], VARINT)
_ROLE_KEY: Final = _key(_RQ["role"], LEN)
_REQUEST_ENTITY_KEY: Final = _key(_RQ["entities"], LEN)
_RESPONSE_ENTITY_KEY: Final = _key(_RR["entities"], LEN)
_INDEX_KEY: Final = _key(_IX["index"], VARINT)
_PACKETS_KEY: Final = _key(_CD["packet_count"], VARINT)
_BYTES_KEY: Final = _key(_CD["byte_count"], VARINT)
_BITSTRING_KEY: Final = _key(_PD["bitstring"], LEN)
# an Entity's key of a cell kind -> (the kind, its object id's key, its index's key, its data's key)
_COUNTER_ENTRY_KEY: Final = _key(_EN["counter_entry"], LEN)
_REGISTER_ENTRY_KEY: Final = _key(_EN["register_entry"], LEN)
_CELL_KINDS: Final[dict[int, tuple[str, int, int, int]]] = {
    _COUNTER_ENTRY_KEY: ("counter_entry", _key(_CE["counter_id"], VARINT), _key(_CE["index"], LEN),
                         _key(_CE["data"], LEN)),
    _REGISTER_ENTRY_KEY: ("register_entry", _key(_RE["register_id"], VARINT), _key(_RE["index"], LEN),
                          _key(_RE["data"], LEN)),
}


# The cell reads below walk the bytes with a position, never cutting out a field: a list of
# fields per message (``fields``) made them cost more than protobuf's objects.
def _skip(data: bytes, pos: int, key: int) -> int:
    """The position after the value, starting at ``pos``, of a field with ``key``."""
    wire = key & 7
    if wire == VARINT:
        return _varint(data, pos)[1]
    if wire == LEN:
        length, pos = _varint(data, pos)
        return pos + length
    if wire == 1:
        return pos + 8
    if wire == 5:
        return pos + 4
    raise Undecodable(f"wire type {wire}")


def _sub(data: bytes, pos: int, end: int) -> tuple[int, int]:
    """(start, stop) of a length-delimited value at ``pos`` inside a message ending at ``end``."""
    length, pos = _varint(data, pos)
    stop = pos + length
    if stop > end:
        raise Undecodable("truncated field")
    return pos, stop


def _index(data: bytes, pos: int, end: int) -> int | None:
    """The value of the Index message in data[pos:end]; None if it holds anything else."""
    index = 0
    while pos < end:
        key, pos = _varint(data, pos)
        if key != _INDEX_KEY:
            return None
        value, pos = _varint(data, pos)
        index = _int64(value)
    return index


def _cell(data: bytes, pos: int, end: int) -> tuple[str, int, int] | None:
    """(kind, object id, index) of the Entity in data[pos:end] if it names one cell of a
    counter or register by its id and index and nothing else; None for every other entity."""
    try:
        key, pos = _varint(data, pos)
        shape = _CELL_KINDS.get(key)
        if shape is None:
            return None
        kind, id_key, index_key, _ = shape
        pos, stop = _sub(data, pos, end)
        if stop != end:
            return None  # more than the one field
        obj_id = 0
        index: int | None = None
        while pos < stop:
            key, pos = _varint(data, pos)
            if key == id_key:
                obj_id, pos = _varint(data, pos)
            elif key == index_key:
                start, pos = _sub(data, pos, stop)
                index = _index(data, start, pos)
                if index is None:
                    return None
            else:
                return None
    except (Undecodable, IndexError):
        return None  # protobuf's parse says what is wrong
    if not obj_id or index is None:
        return None
    return kind, obj_id, index


def read_request(data: bytes) -> tuple[int, str, list[Any]]:
    """Device id, role and entities of a ReadRequest, each entity a (kind, object id, index)
    when it names one counter or register cell (``_cell``), else its bytes for protobuf.
    Undecodable if the request holds anything else, or is not a message."""
    device_id, role = 0, ""
    entities: list[Any] = []
    pos, end = 0, len(data)
    try:
        while pos < end:
            key, pos = _varint(data, pos)
            if key == _REQUEST_ENTITY_KEY:
                start, pos = _sub(data, pos, end)
                cell = _cell(data, start, pos)
                entities.append(data[start:pos] if cell is None else cell)
            elif key == _DEVICE_ID_KEY:
                device_id, pos = _varint(data, pos)
            elif key == _ROLE_KEY:
                start, pos = _sub(data, pos, end)
                role = data[start:pos].decode()
            else:
                raise Undecodable(f"field {key >> 3} of wire type {key & 7}")
    except (IndexError, UnicodeDecodeError):
        raise Undecodable("truncated message") from None
    return device_id, role, entities


def _entries(chunks: Iterable[bytes], entry_key: int) -> list[tuple[bytes, int, int, int, int]]:
    """(chunk, object id, index, data's start, data's stop) of each counter or register entry
    (``entry_key``) of serialized ReadResponses; an entry without data has an empty span."""
    _, id_key, index_key, data_key = _CELL_KINDS[entry_key]
    out = []
    try:
        for chunk in chunks:
            pos, end = 0, len(chunk)
            while pos < end:
                key, pos = _varint(chunk, pos)
                if key != _RESPONSE_ENTITY_KEY:
                    pos = _skip(chunk, pos, key)
                    continue
                start, stop = _sub(chunk, pos, end)
                while start < stop:
                    k, start = _varint(chunk, start)
                    if k != entry_key:
                        start = _skip(chunk, start, k)
                        continue
                    at, entry_end = _sub(chunk, start, stop)
                    obj_id = index = data_start = data_stop = 0
                    while at < entry_end:
                        key, at = _varint(chunk, at)
                        if key == id_key:
                            obj_id, at = _varint(chunk, at)
                        elif key == index_key:
                            first, at = _sub(chunk, at, entry_end)
                            index = _index(chunk, first, at) or 0
                        elif key == data_key:
                            data_start, at = _sub(chunk, at, entry_end)
                            data_stop = at
                        else:
                            at = _skip(chunk, at, key)
                    out.append((chunk, obj_id, index, data_start, data_stop))
                    start = entry_end
                pos = stop
    except IndexError:
        raise Undecodable("ReadResponse: truncated message") from None
    return out


def counter_cells(chunks: Iterable[bytes]) -> dict[int, dict[int, tuple[int, int]]]:
    """counter id -> index -> (packets, bytes) of the counter entries of serialized
    ReadResponses (a poller reads several counters' cells in one Read)."""
    out: dict[int, dict[int, tuple[int, int]]] = {}
    try:
        for data, obj_id, index, pos, end in _entries(chunks, _COUNTER_ENTRY_KEY):
            packets = nbytes = 0
            while pos < end:
                key, pos = _varint(data, pos)
                if key == _PACKETS_KEY:
                    value, pos = _varint(data, pos)
                    packets = _int64(value)
                elif key == _BYTES_KEY:
                    value, pos = _varint(data, pos)
                    nbytes = _int64(value)
                else:
                    pos = _skip(data, pos, key)
            cells = out.get(obj_id)
            if cells is None:
                cells = out[obj_id] = {}
            cells[index] = (packets, nbytes)
    except IndexError:
        raise Undecodable("ReadResponse: truncated counter data") from None
    return out


def register_cells(chunks: Iterable[bytes]) -> dict[int, dict[int, int]]:
    """register id -> index -> value (its bitstring, big-endian) of the register entries of
    serialized ReadResponses; 0 where the data is not a bitstring."""
    out: dict[int, dict[int, int]] = {}
    try:
        for data, obj_id, index, pos, end in _entries(chunks, _REGISTER_ENTRY_KEY):
            value = 0
            while pos < end:
                key, pos = _varint(data, pos)
                if key == _BITSTRING_KEY:
                    first, pos = _sub(data, pos, end)
                    value = int.from_bytes(data[first:pos], "big")
                else:
                    pos = _skip(data, pos, key)
            cells = out.get(obj_id)
            if cells is None:
                cells = out[obj_id] = {}
            cells[index] = value
    except IndexError:
        raise Undecodable("ReadResponse: truncated register data") from None
    return out


# ---------------------------------------------------------------------------------- encoding
def _put_varint(out: BytesWriter, value: int) -> None:
    """``value``'s varint (unsigned, or int64 two's complement) into ``out``."""
    if 0 <= value < 0x80:
        out.append(value)
        return
    value &= 0xFFFFFFFFFFFFFFFF
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def varint(value: int) -> bytes:
    """Unsigned (or int64 two's complement) varint."""
    if 0 <= value < 0x80:
        return _SMALL[value]
    out = BytesWriter()
    _put_varint(out, value)
    return out.getvalue()


_SMALL: Final = [bytes([i]) for i in range(0x80)]


_TAGS: Final[dict[int, bytes]] = {}  # key (number << 3 | wire type) -> its varint, made once


def tag(number: int, wire: int) -> bytes:
    key = _key(number, wire)
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


def _repeated(number: int, payloads: Iterable[bytes]) -> bytes:
    """Length-delimited field ``number`` once for each of ``payloads``."""
    field = tag(number, LEN)
    return b"".join(field + with_length(p) for p in payloads)


def read_response(entities: Iterable[bytes]) -> bytes:
    """A ReadResponse of already encoded Entity messages."""
    return _repeated(_RR["entities"], entities)


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


def read_entities(entities: Iterable[p4runtime_pb2.Entity]) -> bytes:
    """The ``entities`` fields of a ReadRequest (``read_request_bytes`` adds the device)."""
    return _repeated(_RQ["entities"], (e.SerializeToString() for e in entities))


def read_request_bytes(device_id: int, entities: bytes) -> bytes:
    """A ReadRequest of ``device_id`` for the ``entities`` fields ``read_entities`` made."""
    return varint_field(_RQ["device_id"], device_id) + entities


def response_entities(chunks: Iterable[bytes]) -> list[p4runtime_pb2.Entity]:
    """The Entity messages of serialized ReadResponses."""
    return [e for chunk in chunks for e in p4runtime_pb2.ReadResponse.FromString(chunk).entities]


def with_length(payload: bytes) -> bytes:
    """A length prefix and the payload (the value part of a length-delimited field)."""
    return varint(len(payload)) + payload


def _varint_size(value: int) -> int:
    """Bytes of ``value``'s varint (``varint`` writes it)."""
    if 0 <= value < 0x80:
        return 1
    value &= 0xFFFFFFFFFFFFFFFF
    size = 1
    while value >= 0x80:
        value >>= 7
        size += 1
    return size


def counter_entities(counter_id: int, cells: Iterable[tuple[int, int, int]]) -> list[bytes]:
    """Entity{counter_entry} per (index, packets, bytes); zero counts are left out, as
    protobuf leaves out default values. Each written into one ``BytesWriter``, sizes first:
    concatenating its parts cost ~2,100 instructions a cell of a telemetry sample."""
    head = _COUNTER_ID + varint(counter_id) + _COUNTER_INDEX
    entity = ENTITY_TAGS["counter_entry"]
    out = []
    for index, packets, nbytes in cells:
        index_size = 1 + _varint_size(index) if index else 0
        data_size = (1 + _varint_size(nbytes) if nbytes else 0) + (1 + _varint_size(packets) if packets else 0)
        body_size = (len(head) + _varint_size(index_size) + index_size
                     + len(_COUNTER_DATA) + _varint_size(data_size) + data_size)
        w = BytesWriter()
        w.write(entity)
        _put_varint(w, body_size)
        w.write(head)
        _put_varint(w, index_size)
        if index:
            w.write(_INDEX)
            _put_varint(w, index)
        w.write(_COUNTER_DATA)
        _put_varint(w, data_size)
        if nbytes:
            w.write(_BYTES)
            _put_varint(w, nbytes)
        if packets:
            w.write(_PACKETS)
            _put_varint(w, packets)
        out.append(w.getvalue())
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
