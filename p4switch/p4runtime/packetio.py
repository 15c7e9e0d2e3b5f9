"""Controller packet metadata: the ``packet_out`` header the server prepends to a PacketOut
payload, and the ``packet_in`` header it strips from frames sent to the CPU port.

Both headers are laid out as P4Info lists their metadata: fields in order, each
``bitwidth`` bits, most significant bit first, with no padding (a P4 header is a whole number
of bytes, so the sum of widths is too).
"""

from __future__ import annotations

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from p4rt.bytestrings import canonical, values_by_id
from p4rt.errors import invalid


def header_bytes(header: p4info_pb2.ControllerPacketMetadata) -> int:
    """Bytes the controller header takes at the front of a frame."""
    return (sum(m.bitwidth for m in header.metadata) + 7) // 8


def encode_packet_out(header: p4info_pb2.ControllerPacketMetadata | None, msg: p4runtime_pb2.PacketOut) -> bytes:
    """Frame to inject at the CPU port; raises P4RuntimeError (INVALID_ARGUMENT) on bad metadata."""
    if header is None:
        if msg.metadata:
            raise invalid("the P4 program has no @controller_header(\"packet_out\"); metadata not allowed")
        return msg.payload
    values = values_by_id({m.id: m for m in header.metadata},
                           ((md.metadata_id, md.value) for md in msg.metadata), "packet_out", "metadata")
    word, total = 0, 0
    for m in header.metadata:
        word = (word << m.bitwidth) | values[m.id]
        total += m.bitwidth
    pad = (-total) % 8
    return (word << pad).to_bytes((total + pad) // 8, "big") + msg.payload


def decode_packet_in(header: p4info_pb2.ControllerPacketMetadata | None, frame: bytes) -> p4runtime_pb2.PacketIn | None:
    """The PacketIn for a CPU-port frame, or None if it is shorter than the header."""
    if header is None:
        return p4runtime_pb2.PacketIn(payload=frame)
    size = header_bytes(header)
    if len(frame) < size:
        return None
    total = sum(m.bitwidth for m in header.metadata)
    word = int.from_bytes(frame[:size], "big") >> (size * 8 - total)
    msg = p4runtime_pb2.PacketIn(payload=frame[size:])
    shift = total
    for m in header.metadata:
        shift -= m.bitwidth
        value = (word >> shift) & ((1 << m.bitwidth) - 1)
        msg.metadata.add(metadata_id=m.id, value=canonical(value))
    return msg
