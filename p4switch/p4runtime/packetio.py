"""Controller packet metadata: the ``packet_out`` header the server prepends to a PacketOut
payload, and the ``packet_in`` header it strips from frames sent to the CPU port.

Both headers are laid out as P4Info lists their metadata: fields in order, each
``bitwidth`` bits, most significant bit first, with no padding (a P4 header is a whole number
of bytes, so the sum of widths is too).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from p4rt.bytestrings import canonical, values_by_id
from p4rt.errors import invalid
from p4rt.packets import PacketIn, PacketMetadata


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


MEMO_HEADERS: Final = 4096  # distinct packet_in headers whose metadata a PacketInHeader keeps


class PacketInHeader:
    """The ``packet_in`` controller header's layout, read once from P4Info (protobuf field
    access per packet would cost more than the split): its fields' (id, bitwidth) in order.
    The metadata of each distinct header (up to ``memo_headers``) are decoded once: a switch's
    CPU-port frames carry few (fabric.p4's, the ingress port), and decoding one cost more than
    the rest of the packet-in (a packet-in per INT report in a simulation)."""

    __slots__ = ("fields", "size", "total", "memo_headers", "_memo")

    def __init__(self, header: p4info_pb2.ControllerPacketMetadata | None, memo_headers: int = MEMO_HEADERS) -> None:
        self.memo_headers = memo_headers
        self.fields: list[tuple[int, int]] = [] if header is None else [(m.id, m.bitwidth) for m in header.metadata]
        self.total: int = sum(w for _, w in self.fields)
        self.size: int = (self.total + 7) // 8  # an int to mypyc: the frame's slices are C calls
        self._memo: dict[bytes, tuple[PacketMetadata, ...]] = {}

    def split(self, frame: bytes) -> PacketIn | None:
        """The packet-in for a CPU-port frame, or None if it is shorter than the header."""
        size = self.size
        if not size:
            return PacketIn(frame)
        if len(frame) < size:
            return None
        head = frame[:size]
        metadata = self._memo.get(head)
        if metadata is None:
            metadata = self.metadata(head)
            if len(self._memo) < self.memo_headers:
                self._memo[head] = metadata
        return PacketIn(frame[size:], metadata)

    def metadata(self, head: bytes) -> tuple[PacketMetadata, ...]:
        """The metadata fields of a header's ``size`` bytes."""
        word = int.from_bytes(head, "big") >> (self.size * 8 - self.total)
        shift = self.total
        metadata = []
        for mid, width in self.fields:
            shift -= width
            metadata.append(PacketMetadata(mid, canonical((word >> shift) & ((1 << width) - 1))))
        return tuple(metadata)


class PacketInRoute:
    """Where a switch's CPU-port frames go (``send`` is the device's packet-in callback): split
    by the pipeline's ``packet_in`` header into a PacketIn for the primary client's stream
    handler (``deliver``, which the service sets when the primary changes); with no pipeline
    or no primary, or shorter than the header, counted in ``stats`` and dropped. Compiled with
    the device, not a method of the interpreted service: a simulation sends a packet-in per INT
    report."""

    def __init__(self, pipeline: Any, stats: dict[str, int]) -> None:
        self.pipeline = pipeline  # the service's pipeline manager: the schema is read per frame
        self.stats = stats
        self.deliver: Callable[[PacketIn], None] | None = None
        self._schema: Any = None
        self._header = PacketInHeader(None)

    def send(self, frame: bytes) -> None:
        schema = self.pipeline.schema
        deliver = self.deliver
        if schema is None or deliver is None:
            self.stats["packet_in_dropped"] += 1
            return
        if schema is not self._schema:  # the header's layout, once per pipeline
            self._schema, self._header = schema, PacketInHeader(schema.packet_in)
        pkt = self._header.split(frame)
        if pkt is None:
            self.stats["packet_in_short"] += 1
            return
        deliver(pkt)


def decode_packet_in(header: p4info_pb2.ControllerPacketMetadata | None, frame: bytes) -> p4runtime_pb2.PacketIn | None:
    """The PacketIn for a CPU-port frame, or None if it is shorter than the header."""
    pkt = PacketInHeader(header).split(frame)
    return None if pkt is None else pkt.to_pb()
