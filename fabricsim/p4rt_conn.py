"""The controller's switch connection to a simulated switch: P4Runtime without gRPC.

``InProcessConnection`` has the interface of the controller's ``SwitchConnection``
(``connect``/``close``, ``set_pipeline``/``get_pipeline``, ``write``/``read``/``read_encoded``,
``packet_out``, packet-in and digest callbacks, ``is_primary``) and calls the switch's
``P4RuntimeService`` handlers directly: the same request messages, the same entity
translation and the same status codes as the server a live switch runs, so a profile means
the same table entries in both modes. Packet-ins and digests arrive synchronously, in
simulated time, from the switch's stream; packet-ins as ``p4rt.packets.PacketIn`` (the fields of
``p4.v1.PacketIn`` without a protobuf message per packet).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

import grpc
from google.rpc import code_pb2
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from p4rt import wire
from p4rt.packets import PacketIn
from p4rt.switch_conn import BATCH, call_error
from p4switch.p4runtime.service import P4RuntimeService


class _Aborted(Exception):
    """What ``context.abort`` raises inside a handler (as grpc does)."""


class _Context:
    """The part of ``grpc.ServicerContext`` the service's unary handlers use."""

    def __init__(self) -> None:
        self.code = grpc.StatusCode.OK
        self.details = ""
        self.trailing: tuple = ()

    def abort(self, code: grpc.StatusCode, details: str) -> None:
        self.code, self.details = code, details
        raise _Aborted(details)

    def set_code(self, code: grpc.StatusCode) -> None:
        self.code = code

    def set_details(self, details: str) -> None:
        self.details = details

    def set_trailing_metadata(self, metadata: tuple) -> None:
        self.trailing = metadata


def _ignore(_pkt: PacketIn) -> None:
    """The packet-in handler of a connection made without one."""


class InProcessConnection:
    """One controller session with one simulated switch's P4Runtime service."""

    def __init__(
        self,
        service: P4RuntimeService,
        name: str,
        address: str,
        device_id: int,
        election_id: int = 1,
        on_packet_in: Callable[[PacketIn], None] | None = None,
        on_digest: Callable[[p4runtime_pb2.DigestList], None] | None = None,
        on_reconnect: Callable[[Any], None] | None = None,
    ) -> None:
        self.service = service
        self.name = name
        self.address = address
        self.device_id = device_id
        self.election_id = election_id
        self.on_packet_in = on_packet_in  # the stream's handler from connect on
        self.on_digest = on_digest
        self.on_reconnect = on_reconnect  # a simulated switch never restarts on its own
        self.reconnects = 0
        self.is_primary = threading.Event()  # as on the threaded connection
        self._stream: Any = None
        self._closed = False

    # -- session ------------------------------------------------------------------------
    def connect(self, timeout: float = 10.0) -> None:
        """Open the stream and become primary; ConnectionError when the switch refuses."""
        self._closed = False
        # the handler itself, not a method that calls it: a packet-in per INT report
        self._stream = self.service.open_stream(self._on_stream_message, self.on_packet_in or _ignore)
        arb = p4runtime_pb2.StreamMessageRequest()
        arb.arbitration.device_id = self.device_id
        arb.arbitration.election_id.low = self.election_id
        if not self.service.stream_request(self._stream, arb):
            err = self._stream.abort
            self.service.close_stream(self._stream)
            self._stream = None
            raise ConnectionError(f"{self.name}: arbitration refused: {err.code.name}: {err}")
        if not self.is_primary.is_set():
            raise ConnectionError(f"{self.name}: not primary at {self.address}")

    def close(self) -> None:
        self._closed = True
        if self._stream is not None:
            self.service.close_stream(self._stream)
            self._stream = None
        self.is_primary.clear()

    def wait_primary(self, timeout: float) -> bool:
        return self.is_primary.is_set()

    def wait_closed(self, timeout: float) -> bool:
        return self._closed

    def _on_stream_message(self, msg: p4runtime_pb2.StreamMessageResponse) -> None:
        kind = msg.WhichOneof("update")
        if kind == "arbitration":
            if msg.arbitration.status.code == code_pb2.OK:
                self.is_primary.set()
            else:
                self.is_primary.clear()
        elif kind == "digest":
            ack = p4runtime_pb2.StreamMessageRequest()
            ack.digest_ack.digest_id = msg.digest.digest_id
            ack.digest_ack.list_id = msg.digest.list_id
            self.service.stream_request(self._stream, ack)
            if self.on_digest is not None:
                self.on_digest(msg.digest)

    # -- unary calls --------------------------------------------------------------------
    def _call(self, what: str, handler: Callable[[Any, _Context], Any], request: Any) -> Any:
        ctx = _Context()
        try:
            result = handler(request, ctx)
            if what == "Read":
                result = list(result)  # the handler is a generator: errors surface here
        except _Aborted:
            result = None
        if ctx.code != grpc.StatusCode.OK:
            raise call_error(self.name, what, ctx.code, ctx.details, ctx.trailing)
        return result

    def set_pipeline(self, p4info: p4info_pb2.P4Info, device_config: bytes, cookie: int = 0) -> None:
        req = p4runtime_pb2.SetForwardingPipelineConfigRequest(
            device_id=self.device_id,
            action=p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT,
        )
        req.election_id.low = self.election_id
        req.config.p4info.CopyFrom(p4info)
        req.config.p4_device_config = device_config
        req.config.cookie.cookie = cookie
        self._call("SetForwardingPipelineConfig", self.service.SetForwardingPipelineConfig, req)

    def get_pipeline(self) -> p4runtime_pb2.ForwardingPipelineConfig:
        req = p4runtime_pb2.GetForwardingPipelineConfigRequest(
            device_id=self.device_id,
            response_type=p4runtime_pb2.GetForwardingPipelineConfigRequest.P4INFO_AND_COOKIE,
        )
        return self._call("GetForwardingPipelineConfig", self.service.GetForwardingPipelineConfig, req).config

    def write(self, updates: list[p4runtime_pb2.Update]) -> None:
        """Send updates in batches; the first failing batch raises with its per-update errors."""
        for start in range(0, len(updates), BATCH):  # batched as over gRPC
            req = p4runtime_pb2.WriteRequest(device_id=self.device_id)
            req.election_id.low = self.election_id
            req.updates.extend(updates[start:start + BATCH])
            self._call("Write", self.service.Write, req.SerializeToString())  # the server takes wire bytes

    def read(self, entities: Iterable[p4runtime_pb2.Entity]) -> list[p4runtime_pb2.Entity]:
        return wire.response_entities(self.read_encoded(wire.read_entities(entities)))

    def read_encoded(self, entities: bytes) -> list[bytes]:
        """Serialized ReadResponses to a Read of encoded entities, as over gRPC
        (``SwitchConnection.read_encoded``)."""
        return self._call("Read", self.service.Read, wire.read_request_bytes(self.device_id, entities))

    def packet_out(self, payload: bytes, metadata: list[tuple[int, bytes]]) -> None:
        if self._stream is None:
            raise ConnectionError(f"{self.name}: not connected")
        msg = p4runtime_pb2.StreamMessageRequest()
        msg.packet.payload = payload
        for mid, value in metadata:
            msg.packet.metadata.add(metadata_id=mid, value=value)
        self.service.stream_request(self._stream, msg)
