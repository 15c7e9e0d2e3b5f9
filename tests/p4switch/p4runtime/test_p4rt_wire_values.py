"""Controller packet headers and arbitration decisions."""

from types import SimpleNamespace

import grpc
import pytest
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from p4rt.errors import P4RuntimeError
from p4switch.p4runtime import packetio
from p4switch.p4runtime.arbitration import Arbiter, Notice

OK, EXISTS = grpc.StatusCode.OK, grpc.StatusCode.ALREADY_EXISTS


def _header(name, fields):
    h = p4info_pb2.ControllerPacketMetadata()
    h.preamble.name = name
    for i, (fname, width) in enumerate(fields, start=1):
        h.metadata.add(id=i, name=fname, bitwidth=width)
    return h


def test_packet_out_header_is_packed_msb_first():
    header = _header("packet_out", [("egress_port", 9), ("pad", 7)])
    msg = p4runtime_pb2.PacketOut(payload=b"PAYLOAD")
    msg.metadata.add(metadata_id=1, value=b"\x01\x03")  # port 259
    msg.metadata.add(metadata_id=2, value=b"\x00")
    assert packetio.encode_packet_out(header, msg) == bytes([259 >> 1, (259 & 1) << 7]) + b"PAYLOAD"


def test_packet_out_with_missing_or_unknown_metadata_is_refused():
    header = _header("packet_out", [("egress_port", 9), ("pad", 7)])
    msg = p4runtime_pb2.PacketOut(payload=b"x")
    msg.metadata.add(metadata_id=1, value=b"\x01")
    with pytest.raises(P4RuntimeError, match="missing metadata pad"):
        packetio.encode_packet_out(header, msg)
    msg.metadata.add(metadata_id=7, value=b"\x01")
    with pytest.raises(P4RuntimeError, match="unknown metadata id 7"):
        packetio.encode_packet_out(header, msg)


def test_packet_in_header_is_stripped_into_metadata():
    header = _header("packet_in", [("ingress_port", 9), ("reason", 7)])
    frame = bytes([(5 << 7) >> 8 & 0xFF, ((5 << 7) | 3) & 0xFF]) + b"frame"
    msg = packetio.decode_packet_in(header, frame)
    assert msg.payload == b"frame"
    assert [(m.metadata_id, m.value) for m in msg.metadata] == [(1, b"\x05"), (2, b"\x03")]
    assert packetio.decode_packet_in(header, b"\x00") is None


def test_packet_in_metadata_are_decoded_once_per_header():
    """A header seen before gets the metadata decoded the first time; past ``memo_headers``
    distinct headers the others are still decoded, each time."""
    header = packetio.PacketInHeader(_header("packet_in", [("ingress_port", 9), ("reason", 7)]), memo_headers=2)

    def frame(port, reason, payload):
        return ((port << 7) | reason).to_bytes(2, "big") + payload

    first = header.split(frame(5, 3, b"one"))
    again = header.split(frame(5, 3, b"two"))
    assert (first.payload, again.payload) == (b"one", b"two")
    assert first.metadata == ((1, b"\x05"), (2, b"\x03")) and again.metadata is first.metadata
    for port in (6, 7, 300):  # the third and fourth distinct headers are not kept
        pkt = header.split(frame(port, 0, b"x"))
        assert pkt.metadata == header.metadata(frame(port, 0, b"")) == ((1, port.to_bytes(2 if port > 255 else 1, "big")),
                                                                         (2, b"\x00"))
        assert pkt.metadata == header.split(frame(port, 0, b"y")).metadata
    assert len(header._memo) == 2
    assert header.split(b"\x00") is None


def test_packet_in_route_delivers_to_the_primary_with_the_pipelines_header():
    """The device's packet-in callback: dropped (counted) without a pipeline or a primary,
    split by the current pipeline's header, short frames counted."""
    pipeline = SimpleNamespace(schema=None)
    stats = {"packet_in_dropped": 0, "packet_in_short": 0}
    route = packetio.PacketInRoute(pipeline, stats)
    got = []
    route.send(b"\x02\x80frame")  # no pipeline, no primary
    route.deliver = got.append
    route.send(b"\x02\x80frame")  # no pipeline yet
    assert (got, stats) == ([], {"packet_in_dropped": 2, "packet_in_short": 0})
    pipeline.schema = SimpleNamespace(packet_in=_header("packet_in", [("ingress_port", 9), ("pad", 7)]))
    route.send(b"\x02\x80frame")
    route.send(b"\x02")  # shorter than the header
    assert [(p.payload, p.metadata) for p in got] == [(b"frame", ((1, b"\x05"), (2, b"\x00")))]
    assert stats == {"packet_in_dropped": 2, "packet_in_short": 1}
    pipeline.schema = SimpleNamespace(packet_in=_header("packet_in", [("ingress_port", 16)]))  # a new pipeline
    route.send(b"\x02\x80frame")
    assert (got[-1].payload, got[-1].metadata) == (b"frame", ((1, b"\x02\x80"),))
    route.deliver = None  # the primary left
    route.send(b"\x02\x80frame")
    assert (len(got), stats["packet_in_dropped"]) == (2, 3)


def test_arbitration_primary_backup_and_takeover():
    arb = Arbiter()
    assert arb.update("a", 5) == [Notice("a", OK)]
    assert arb.update("b", 3) == [Notice("b", EXISTS)]
    assert arb.is_primary(5) and not arb.is_primary(3)
    # b claims a higher id: everyone hears about the new primary
    assert sorted(arb.update("b", 9), key=lambda n: n.key) == [Notice("a", EXISTS), Notice("b", OK)]
    with pytest.raises(P4RuntimeError) as info:
        arb.update("c", 5)
    assert info.value.code == grpc.StatusCode.INVALID_ARGUMENT


def test_primary_leaving_hands_over_to_the_next_highest():
    arb = Arbiter()
    arb.update("fabric", 1)
    arb.update("operator", 10)  # an operator's tool takes over for a while
    assert arb.is_primary(10) and not arb.is_primary(1)
    assert sorted(arb.remove("operator"), key=lambda n: n.key) == [Notice("fabric", OK)]
    assert arb.is_primary(1) and arb.highest == 1
    arb.update("backup", 0)
    assert arb.remove("backup") == []  # a backup leaving changes nothing
    assert arb.remove("fabric") == [] and arb.primary() is None
