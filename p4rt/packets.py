"""What a switch's stream carries to an in-process client, without protobuf: a packet-in and
its metadata, the fields of ``p4.v1.PacketIn`` and ``p4.v1.PacketMetadata`` read the same way.

The virtual-time fabric delivers one per INT report (every data packet a report-mode sink
sees). ``PacketIn`` is a class compiled with the switch's packet-in route and the collector
(``netbase.hotpath.DATA_PATH``), so the route makes it and the collector reads its payload as C
calls and slot reads; as a named tuple each was made through ``tuple.__new__``, a Python call,
and read by name (~1,200 instructions a report)."""

from __future__ import annotations

from typing import NamedTuple

from p4.v1 import p4runtime_pb2


class PacketMetadata(NamedTuple):
    """One ``p4.v1.PacketMetadata``: the id and canonical value of a header field."""

    metadata_id: int
    value: bytes


class PacketIn:
    """A packet-in: its ``payload`` and ``metadata`` (``PacketMetadata`` in the header's order)."""

    __slots__ = ("payload", "metadata")

    def __init__(self, payload: bytes, metadata: tuple[PacketMetadata, ...] = ()) -> None:
        self.payload = payload
        self.metadata = metadata

    def __repr__(self) -> str:
        return f"PacketIn(payload={self.payload!r}, metadata={self.metadata!r})"

    def to_pb(self) -> p4runtime_pb2.PacketIn:
        msg = p4runtime_pb2.PacketIn(payload=self.payload)
        for m in self.metadata:
            msg.metadata.add(metadata_id=m.metadata_id, value=m.value)
        return msg
